"""Unit tests of the server's logic beside the end-to-end ones: hover text, the generate code
actions offered, the document events, the kernel cache. The few server attributes these read
are given by a SimpleNamespace (the real server object needs a client connection)."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from dice_engine.intent import find_intents, intent_hash, render_region
from dice_lsp.documents import Documents
from dice_lsp.events import DocumentEvents
from dice_lsp.features.code_actions import generate_actions
from dice_lsp.kernel_cache import KernelCache
from dice_lsp.kernel_info import generation_lines, intent_lines, region_line
from dice_lsp.settings import Settings

INTENT = "y = x * 2; x: f32[1000]"
BODY = "__global__ void twice(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x] * 2.0f; }\n"
FRESH = f"// @dice: {INTENT}\n" + render_region(intent_hash(INTENT), "elementwise.fused", BODY)
URI = "file:///work/k.cu"


def server(*, resolve: bool = True, apply: bool = True) -> SimpleNamespace:
    return SimpleNamespace(settings=Settings(arch="sm_80"), documents=Documents("sm_80"),
                           client_resolves=lambda prop: resolve, client_applies_edits=apply)


def figures(**changes) -> dict:
    fig = {"sketch": "elementwise.fused", "tokens": {"threads": 256, "vec": 4}, "arch": "sm_80",
           "gpu": "A100", "resources": {"registers": 16, "spill_bytes": 0, "smem_bytes": 0,
                                        "occupancy": 1.0, "limiter": "warps"},
           "time_us": None, "cost_us": 3.25, "verified": None, "round": 2, "rounds": 4}
    return fig | changes


def test_region_line_tells_fresh_stale_and_edited_regions_apart():
    (fresh,) = find_intents(FRESH)
    (stale,) = find_intents(FRESH.replace("f32[1000]", "f32[2000]"))
    (edited,) = find_intents(FRESH.replace("* 2.0f", "* 3.0f"))
    assert region_line(fresh) == "- region: up to date with its intent"
    assert "**stale**" in region_line(stale)
    assert "edited by hand" in region_line(edited)


def test_generation_lines_show_the_estimate_without_a_gpu_and_the_time_with_one():
    estimated = "\n".join(generation_lines(figures()))
    assert "`threads=256`" in estimated and "occupancy 100% (limited by warps)" in estimated
    assert "not measured (no GPU run) · cost model estimate for A100: 3.25 µs" in estimated
    assert "not verified (no GPU run) · round 2 of 4" in estimated
    measured = "\n".join(generation_lines(figures(time_us=2.0, verified=True, reference_time_us=4.0)))
    assert "measured: 2.00 µs on A100" in measured and "(2.00× faster)" in measured
    assert "verified against the reference" in measured


def test_intent_hover_names_the_kernel_and_the_problem_of_an_unservable_intent():
    state = Documents("sm_80").get(URI)
    (site,) = find_intents(f"// @dice: {INTENT}\n")
    lines = intent_lines(server(), state, site)
    assert any("inputs `x: f32[1000]`" in line for line in lines)
    assert lines[-1].startswith("- no kernel yet")
    (bad,) = find_intents("// @dice: y = frobnicate(x); x: f32[10]\n")
    assert any(line.startswith("- cannot be served: ") for line in intent_lines(server(), state, bad))


def test_generate_actions_follow_the_region_and_the_client():
    (fresh,) = find_intents(FRESH)
    (edited,) = find_intents(FRESH.replace("* 2.0f", "* 3.0f"))
    (empty,) = find_intents(f"// @dice: {INTENT}\n")
    titles = lambda site, **kw: [a.title for a in generate_actions(server(**kw), URI, site)]  # noqa: E731
    assert titles(empty) == ["DICE: Generate kernel", "DICE: Tune for sm_80 (A100-SXM4-80GB)"]
    assert titles(fresh)[0] == "DICE: Regenerate kernel"
    assert titles(edited)[0] == "DICE: Regenerate kernel (replace your edits in the region)"
    forced = generate_actions(server(), URI, edited)[0].data["request"]
    assert forced["force"] is True and forced["hash"] == edited.hash
    # A client that cannot resolve gets the command at once; one that resolves gets it later.
    assert generate_actions(server(resolve=False), URI, empty)[0].command.command == "dice.generate"
    assert generate_actions(server(), URI, empty)[0].command is None


async def test_document_events_run_every_listener_in_order_and_survive_a_failing_one():
    events, seen = DocumentEvents(), []

    async def later(uri: str) -> None:
        seen.append(("later", uri))

    def broken(uri: str) -> None:
        raise RuntimeError("a bug in one feature")

    events.on("change", lambda uri: seen.append(("first", uri)))
    events.on("change", broken)
    events.on("change", later)
    events.on("save", lambda uri: seen.append(("save", uri)))
    events.emit("change", URI)
    assert seen == [("first", URI)]          # the coroutine listener runs on as a task
    await asyncio.sleep(0)
    assert seen == [("first", URI), ("later", URI)]


def test_the_kernel_cache_keeps_the_latest_and_forgets_the_least_recently_used():
    cache = KernelCache(capacity=2)
    cache.put(("a", "sm_90", 24), "A", "sa")
    cache.put(("b", "sm_90", 24), "B", "sb")
    assert cache.get(("a", "sm_90", 24)).body == "A"       # now the most recently used
    cache.put(("c", "sm_90", 24), "C", "sc")
    assert cache.get(("b", "sm_90", 24)) is None and cache.get(("a", "sm_90", 24)) is not None
    assert cache.get(("a", "sm_80", 24)) is None            # another target is another kernel


async def test_closed_events_cancel_running_listeners_and_start_no_more():
    events, seen = DocumentEvents(), []
    started = asyncio.Event()

    async def slow(uri: str) -> None:
        started.set()
        await asyncio.sleep(10)
        seen.append(uri)

    events.on("save", slow)
    events.emit("save", URI)
    await started.wait()
    events.close()
    events.emit("save", URI)
    await asyncio.sleep(0.01)
    assert seen == [] and not events._running
