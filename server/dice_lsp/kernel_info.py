"""What DICE knows of a kernel name, a launch `<<<…>>>` or an intent, as Markdown lines (the
hover, and the message a code lens shows): ptxas resources, occupancy and its limiter for the
target arch, design tokens, measured time with GB/s, TFLOP/s, fraction of the roofline and the
PyTorch reference time, staleness."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any


from dice_engine.api import rate_parts
from dice_engine.arch import resolve as resolve_arch
from dice_engine.intent import IntentError, IntentSite, default_kernel_name, parse_intent

from .current import current_outline, current_sites
from .documents import DocumentState
from .kernel_facts import kernel_occupancy, region_site
from .outline import Kernel, Outline, contains

if TYPE_CHECKING:
    from .server import DiceServer


def _bytes(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def kernel_lines(server: "DiceServer", state: DocumentState, outline: Outline, kernel: Kernel,
                 site: IntentSite | None) -> list[str]:
    arch = resolve_arch(server.settings.arch)
    lines = [f"**DICE** · `{kernel.name}` · {arch.name} ({arch.gpu_name})", ""]
    generated = state.generated.get(site.region.recorded_hash) if site and site.region else None
    res = state.resources.get(kernel.name) if state.resources_arch == arch.name else None
    if res is not None:
        spills = res.spill_store_bytes + res.spill_load_bytes
        lines.append(f"- registers: {res.registers} per thread · spills: {_bytes(spills)} · "
                     f"shared memory: {_bytes(res.smem_bytes)} per block (static)")
        if (found := kernel_occupancy(arch, outline, kernel, res, generated)) is not None:
            occ, threads = found
            lines.append(f"- occupancy: {occ.fraction:.0%} ({occ.warps_per_sm} warps/SM, "
                         f"{occ.blocks_per_sm} blocks/SM at {threads} threads/block), "
                         f"limited by {occ.limiter}")
        else:
            lines.append("- occupancy: block size unknown (no literal launch or `__launch_bounds__`)")
    elif generated is None:
        lines.append("- resources: not compiled yet (or nvcc unavailable)")
    if generated is not None:
        lines += generation_lines(generated)
    if site is not None and (checked := state.checked.get(site.hash)) is not None:
        lines += check_lines(checked)
    if site is not None and site.region is not None:
        lines.append(region_line(site))
    return lines


def generation_lines(fig: dict[str, Any]) -> list[str]:
    out = [f"- sketch: `{fig['sketch']}` · design tokens: "
           + ", ".join(f"`{k}={v}`" for k, v in fig["tokens"].items())]
    res = fig["resources"]
    if res.get("occupancy") is not None and res.get("registers") is not None:
        out.append(f"- generated for {fig['arch']}: {res['registers']} registers, "
                   f"{_bytes(res.get('spill_bytes') or 0)} spills, "
                   f"{_bytes(res.get('smem_bytes') or 0)} shared, occupancy {res['occupancy']:.0%}"
                   + (f" (limited by {res['limiter']})" if res.get("limiter") else ""))
    if fig["time_us"] is not None:
        out.append(measured_line("measured", fig))
    else:
        out.append(f"- not measured (no GPU run) · cost model estimate for {fig['gpu']}: "
                   f"{fig['cost_us']:.2f} µs")
    verified = {True: "verified against the reference", False: "FAILED verification",
                None: "not verified (no GPU run)"}[fig["verified"]]
    out.append(f"- {verified} · round {fig['round']} of {fig['rounds']}")
    return out


def check_lines(fig: dict[str, Any]) -> list[str]:
    """The last GPU check on save of the region's code as it stands (RegionCheck.figures())."""
    if fig["status"] == "skipped":
        return [f"- on save: not run on the GPU: {fig['message']}"]
    out = [measured_line("measured on save", fig)] if fig["time_us"] is not None else []
    if fig["verified"]:
        out.append(f"- on save: verified against the reference on {fig['gpu']}")
    else:
        out.append(f"- on save: **FAILED** on {fig['gpu']}: {fig['message']}")
    return out


def measured_line(label: str, fig: dict[str, Any]) -> str:
    """`- <label>: 12.30 µs on H200 · 2731 GB/s · 81% of roofline · reference 20.10 µs (1.63× faster)`;
    the rates and the reference only where they were measured."""
    line = f"- {label}: {fig['time_us']:.2f} µs on {fig['gpu']}"
    for part in rate_parts(fig.get("gbps"), fig.get("tflops"), fig.get("roofline_fraction"), None):
        line += f" · {part}"
    reference = fig.get("reference_time_us")
    if reference is not None:
        line += f" · reference (PyTorch) {reference:.2f} µs ({reference / fig['time_us']:.2f}× faster)"
    return line


def region_line(site: IntentSite) -> str:
    region = site.region
    assert region is not None
    if region.edited:
        return "- region: edited by hand since it was generated (DICE will not overwrite it on save)"
    if region.stale:
        return "- region: **stale** — the intent changed since this kernel was generated"
    return "- region: up to date with its intent"


def intent_lines(server: "DiceServer", state: DocumentState, site: IntentSite) -> list[str]:
    lines = ["**DICE intent**", ""]
    try:
        program = parse_intent(site.text)
    except IntentError as exc:
        lines.append(f"- cannot be served: {exc.message}")
    else:
        inputs = ", ".join(f"`{d.name}: {d.dtype}{list(d.shape)}`" for d in program.inputs.values())
        lines.append(f"- kernel `{default_kernel_name(program)}` · inputs {inputs} · output "
                     f"`{program.output_name}: {program.output.dtype}{list(program.output.shape)}`")
    if site.region is None:
        lines.append("- no kernel yet: use the code action “DICE: Generate kernel”")
        return lines
    lines.append(region_line(site))
    generated = state.generated.get(site.region.recorded_hash)
    if generated is not None:
        lines += generation_lines(generated)
    elif site.region.summary:
        lines.append(f"- {site.region.summary}")
    if (checked := state.checked.get(site.hash)) is not None:
        lines += check_lines(checked)
    return lines


async def hover_lines(server: "DiceServer", uri: str, line: int, column: int) -> list[str] | None:
    state = server.documents.get(uri)
    sites = await current_sites(server, uri)
    for site in sites:
        if site.line <= line <= site.end_line:
            return intent_lines(server, state, site)
    outline = await current_outline(server, uri)
    for kernel in outline.kernels:
        if contains(kernel.name_span, line, column):
            return kernel_lines(server, state, outline, kernel, region_site(sites, kernel.line))
    for launch in outline.launches:
        if contains(launch.call_span, line, column) and (kernel := outline.kernel_named(launch.kernel)):
            return kernel_lines(server, state, outline, kernel, region_site(sites, kernel.line))
    return None
