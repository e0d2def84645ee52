"""A code lens above each kernel: one line of ptxas figures, occupancy and generation facts."""
from __future__ import annotations

from lsprotocol import types

from dice_engine.arch import resolve as resolve_arch

from ..convert import Positions
from ..current import current_outline, current_sites, snapshot
from ..documents import DocumentState
from ..kernel_facts import kernel_occupancy, region_site
from ..kernel_info import hover_lines
from ..outline import Kernel, Outline
from ..server import DiceServer

SHOW_HOVER_COMMAND = "dice.showKernelInfo"


def summary(server: "DiceServer", state: DocumentState, outline: Outline, kernel: Kernel,
            generated: dict | None, stale: bool) -> str:
    arch = resolve_arch(server.settings.arch)
    parts = [f"DICE {arch.name}"]
    res = state.resources.get(kernel.name) if state.resources_arch == arch.name else None
    if res is not None:
        parts.append(f"{res.registers} regs")
        spills = res.spill_store_bytes + res.spill_load_bytes
        if spills:
            parts.append(f"{spills} B spills")
        if res.smem_bytes:
            parts.append(f"{res.smem_bytes} B smem")
        if (found := kernel_occupancy(arch, outline, kernel, res, generated)) is not None:
            occ = found[0]
            parts.append(f"occupancy {occ.fraction:.0%} ({occ.limiter})")
    if generated is not None:
        parts.append(generated["sketch"])
        if generated["time_us"] is not None:
            parts.append(f"{generated['time_us']:.2f} µs")
        else:
            parts.append(f"~{generated['cost_us']:.2f} µs est.")
    if stale:
        parts.append("stale")
    if len(parts) == 1:
        parts.append("not compiled yet")
    return " · ".join(parts)


def register(server: "DiceServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: "DiceServer", params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        snap = snapshot(ls, uri)
        state = ls.documents.get(uri)
        outline = await current_outline(ls, uri)
        sites = await current_sites(ls, uri)
        if not snap.current():
            return []          # the document moved on while they were computed
        positions = Positions(ls.workspace.get_text_document(uri))
        lenses = []
        for kernel in outline.kernels:
            site = region_site(sites, kernel.line)
            region = site.region if site is not None else None
            generated = state.generated.get(region.recorded_hash) if region is not None else None
            title = summary(ls, state, outline, kernel, generated, bool(region and region.stale))
            line, col = kernel.name_span[:2]
            lenses.append(types.CodeLens(
                range=positions.range(kernel.line, 0, kernel.line, 0),
                command=types.Command(title=title, command=SHOW_HOVER_COMMAND,
                                      arguments=[uri, {"line": line, "character": col}])))
        return lenses

    @server.command(SHOW_HOVER_COMMAND)
    async def show_kernel_info(ls: DiceServer, uri: str, position: dict) -> None:
        """Clicking a lens: the kernel's hover text as a message."""
        lines = await hover_lines(ls, uri, int(position["line"]), int(position["character"]))
        if lines:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, "\n".join(lines)))
