"""The general lowering as a sketch: serves any program the IR can express, as a plan of one or
more kernels behind one launcher, with design tokens the refinement loop tunes like any other.
The hand-written sketches stay as fast paths; where both apply the search weighs both."""
from __future__ import annotations

from ..arch import ArchSpec
from ..ir.graph import Program
from ..ir.patterns import Problem
from ..sketches.base import (DesignSpace, Launch, Point, RenderedKernel, Role, Sketch, Token, frame,
                             launcher_params, numel_c)
from ..sketches.body import Source
from .kernels import (BLOCKS_HELPER, MIN_WORK_PER_WARP, Buffer, Context, Schedule, fused_block_text,
                      fused_launcher_text, fused_thread_text, hint_extent, launcher_text, plan_kernels,
                      split_chunks, stage_schedule, tileable)
from .moments import merge_helper, slices_for
from .plan import (MAX_THREAD_GROUP, Plan, fused_plan, held_in_registers, make_plan, thread_fusable,
                   unlowerable)
from .tiled import micro
from .traffic import bytes_per_position, fused_bytes, gemm_extents, group_fits_l1, plan_bytes

RESERVED_PREFIX = "dz_"      # the generated code's own identifiers
TILES = (0, 32, 64)
SLICES = (0, 1, 2, 4, 8, 16, 32, 64)   # 0: as many as fill the GPU (moments.slices_for)


def _ctype(plan: Plan) -> str:
    return "double" if any(n.dtype.name == "f64" for n in plan.root.walk()) else "float"


def _longest_domain(plan: Plan, program: Program) -> tuple[int, int]:
    """The longest reduction domain of the plan, and how many outputs that stage has."""
    return max(((hint_extent(program, s.extents), hint_extent(program, s.node.shape))
                for s in plan.stages if s.combine and s.scan_dim is None), default=(0, 0))


def _has_moments(plan: Plan) -> bool:
    return any(s.combine == "welford" for s in plan.stages)


def _default_tile(plan: Plan, program: Program) -> int:
    """The largest tile that the biggest contraction's M and N both fill (0 without one)."""
    sizes = [min(gemm_extents(s, program)[:2]) for s in plan.stages if tileable(s)]
    return next((t for t in sorted(TILES, reverse=True) if t and sizes and max(sizes) >= t), 0)


def _fusions(fused: Plan | None, program: Program) -> tuple[str, ...]:
    """The `fuse` choices given the one-kernel plan `fused` (`fused_plan`): a kernel per stage
    always; for a normalisation, one kernel with a block per group, and with a thread per group
    where the contiguous axis is kept."""
    if fused is None:
        return ("kernels",)
    return ("kernels", "block", "thread") if thread_fusable(fused, program) else ("kernels", "block")


def _reads_once(plan: Plan, program: Program, fuse: str) -> bool:
    """Whether the one-kernel form `fuse` of the fused `plan` keeps each group on the SM between
    passes: a thread's group in its registers, a block's group in L1."""
    return held_in_registers(plan, program) if fuse == "thread" else group_fits_l1(plan, program)


def reads_once_fused(program: Program) -> bool:
    """Whether `program` is a normalisation whose one-kernel form (with a thread per group where
    it can, else a block) reads its input from DRAM once; a kernel per statistic reads it once
    per statistic and once more for the output."""
    fused = fused_plan(program.output)
    # where the contiguous axis is kept a block's sweep of its group is strided: only the thread
    # form counts there
    return fused is not None and _reads_once(fused, program, _fusions(fused, program)[-1])


class GeneralLowering(Sketch):
    name = "generic.lowered"
    pattern = "*"    # any pattern

    def unsupported(self, problem: Problem, arch: ArchSpec) -> str | None:
        program = problem.program
        clash = [n for n in [*program.inputs, program.output_name, *program.symbol_names()]
                 if n.startswith(RESERVED_PREFIX) or n.startswith("dice_")]
        if clash:
            return f"names starting with '{RESERVED_PREFIX}' or 'dice_' are reserved: {', '.join(clash)}"
        return unlowerable(program.output)

    def space(self, problem: Problem, arch: ArchSpec) -> DesignSpace:
        plan = make_plan(problem.program.output)
        fusions = _fusions(fused_plan(problem.program.output), problem.program)
        tokens = [
            Token("threads", (64, 128, 256, 512), "threads per block", (Role.THREADS,)),
            Token("strategy", ("thread", "warp", "block", "split"),
                  "how a long reduction domain is split: a thread, a warp or a block per output, or "
                  "several blocks per output and a second kernel merging their partials", ()),
            Token("items", (1, 2, 4, 8), "outputs per thread in map and per-thread stages; positions per "
                  "thread per round in a mean/variance stage", (Role.WORK,)),
            Token("unroll", (1, 2, 4), "unroll factor of the reduction loop", (Role.UNROLL,)),
            Token("fuse", fusions, "a normalisation as a kernel per statistic, or one kernel with a "
                  "block per group, or one kernel with a thread per group (the contiguous axis kept)", ()),
            Token("tile", TILES if any(tileable(s) for s in plan.stages) else (0,),
                  "edge of the shared-memory output tile of matmul and convolution stages (0: a "
                  "thread, warp or block per output, as the strategy says)", (Role.TILE,)),
        ]
        if _has_moments(plan):
            tokens.append(Token("slices", SLICES, "slices of a mean/variance stage's domain, merged by a "
                                "second kernel (0: enough to fill the GPU)", (Role.WORK,)))

        def threads_fit(p: Point) -> str | None:
            if p["threads"] > arch.max_threads_per_block:
                return f"{p['threads']} threads exceed the block limit {arch.max_threads_per_block}"
            if p["tile"] and micro(p["tile"], p["threads"]) is None:
                return f"{p['threads']} threads do not cover a {p['tile']}x{p['tile']} tile evenly"
            if p["tile"] and p["fuse"] != "kernels":
                return "the one-kernel normalisation has no matmul or convolution stage to tile"
            return None

        return DesignSpace(tokens, [threads_fit])

    def default_point(self, problem: Problem, arch: ArchSpec) -> Point:
        plan = make_plan(problem.program.output)
        longest, outputs = _longest_domain(plan, problem.program)
        if longest >= 8192:
            strategy = "split" if outputs < 2 * arch.sms else "block"
        else:
            strategy = "warp" if longest >= MIN_WORK_PER_WARP * 2 else "thread"
        fused = fused_plan(problem.program.output)
        fusions = _fusions(fused, problem.program)
        # one kernel where it keeps its groups on the SM (a thread's group in registers first);
        # past that, a moments stage reads the input once, and plain statistics take a block each
        once = [f for f in fusions[1:] if fused is not None and _reads_once(fused, problem.program, f)]
        fuse = once[-1] if once else ("block" if len(fusions) > 1 and not _has_moments(plan) else "kernels")
        # loads in flight come from unrolled loop trips (a block-per-group pass is not unrolled)
        point = {"threads": 256, "strategy": strategy, "items": 1, "unroll": 1 if fuse == "block" else 4,
                 "fuse": fuse, "tile": _default_tile(plan, problem.program)}
        # a moments stage: 4 positions per thread per round (loads in flight, a division per 4)
        return {**point, "items": 4, "slices": 0} if _has_moments(plan) else point

    def _render(self, problem: Problem, arch: ArchSpec, point: Point, name: str) -> RenderedKernel:
        why = self.unsupported(problem, arch)
        if why:
            raise ValueError(why)
        program = problem.program
        fused = point["fuse"] != "kernels"
        plan = fused_plan(program.output) if fused else make_plan(program.output)
        if plan is None:
            raise ValueError(f"fuse={point['fuse']} needs a normalisation (statistics then a map over their "
                             "argument)")
        if point["fuse"] == "thread" and not thread_fusable(plan, program):
            raise ValueError("fuse=thread needs the contiguous axis kept and groups of at most "
                             f"{MAX_THREAD_GROUP} elements")
        params = launcher_params(problem)
        ctype = _ctype(plan)
        sources = {id(n): Source(n.name, "input") for n in plan.root.walk() if n.op == "input"}
        schedule = Schedule(point["threads"], point["strategy"], point["items"], point["unroll"],
                            point["tile"])
        workspace: dict[int, str] = {}
        buffers: list[Buffer] = []
        for k, node in enumerate([] if fused else plan.workspace):
            workspace[id(node)] = f"dz_ws{k}"
            sources[id(node)] = Source(f"dz_ws{k}", "compute")
            c_type = ctype if node.dtype.is_float else "long long"
            buffers.append(Buffer(f"dz_ws{k}", c_type, numel_c(node.shape)))
        schedules = [stage_schedule(s, program, schedule) for s in plan.stages]
        chunks = {}
        for k, (stage, sch) in enumerate(zip(plan.stages, schedules)):
            if sch == "moments":
                chunks[k] = slices_for(stage, program, schedule.threads, arch.sms, point.get("slices", 0))
                if chunks[k] > 1:   # (count, mean, M2) per slice and output
                    buffers.append(Buffer(f"dz_pw{k}", ctype,
                                          f"{numel_c(stage.node.shape[1:])} * {3 * chunks[k]}LL"))
            if sch == "split" and not fused:
                chunks[k] = split_chunks(stage, program, schedule, arch.sms)
                acc_t = "long long" if stage.integer_terms else ctype
                count = f"{numel_c(stage.node.shape)} * {chunks[k]}LL"
                buffers += [Buffer(f"dz_pv{k}", acc_t, count), Buffer(f"dz_pi{k}", "long long", count)]
        ctx = Context(name, program, plan, ctype, sources, workspace, buffers, arch.sms, params)
        if fused:
            return self._render_fused(ctx, params, schedule, point, name)
        kernels = plan_kernels(ctx, schedule, chunks)
        helpers = [BLOCKS_HELPER] + ([merge_helper(ctype)] if _has_moments(plan) else [])
        device = "\n\n".join(helpers + [k.text for k in kernels])
        launcher = launcher_text(ctx, params, [(k.name, k.work, k.per_block) for k in kernels], schedule)
        strategy = (f"general lowering, {len(kernels)} kernel(s): "
                    + ", ".join(f"{s.node.op}/{sch}" for s, sch in zip(plan.stages, schedules)))
        source = frame(name=name, strategy=strategy, tokens=point, device_code=device, launcher_code=launcher)
        summary = f"{self.name} {len(kernels)} kernel(s) " + " ".join(f"{k}={v}" for k, v in point.items())
        launches = [Launch(k.name, (k.hint_blocks, 1, 1), (schedule.threads, 1, 1), k.smem_bytes)
                    for k in kernels]
        main = max(range(len(kernels)), key=lambda k: kernels[k].hint_blocks)   # paces the whole
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{k.name}" for k in kernels],
                              launcher, params, launches, summary,
                              dram_bytes=plan_bytes(plan, program, schedules, 8 if ctype == "double" else 4,
                                                    point["tile"]),
                              main_launch=main, bytes_in_flight=kernels[main].bytes_in_flight)

    def _render_fused(self, ctx: Context, params: list, schedule: Schedule, point: Point,
                      name: str) -> RenderedKernel:
        kernel = f"{name}_k0"
        fuse = point["fuse"]
        per_thread = fuse == "thread"
        per_block = schedule.threads if per_thread else 1
        program = ctx.program
        registers = per_thread and held_in_registers(ctx.plan, program)
        text = (fused_thread_text(ctx, kernel, schedule, registers) if per_thread
                else fused_block_text(ctx, kernel, schedule))
        device = BLOCKS_HELPER + "\n\n" + text
        launcher = fused_launcher_text(ctx, params, kernel, schedule, per_block)
        plan = ctx.plan
        stats = plan.stages[:-1]
        strategy = (f"general lowering, one kernel: a {'thread' if per_thread else 'block'} per group "
                    f"{'(held in registers) ' if registers else ''}"
                    f"computes {', '.join(s.node.op for s in stats)} then the output")
        source = frame(name=name, strategy=strategy, tokens=point, device_code=device, launcher_code=launcher)
        groups = hint_extent(program, stats[0].node.shape)
        blocks = max(1, min(-(-groups // per_block), 2 ** 31 - 1))
        smem = 0 if per_thread else 32 * 8 + 8 * len(stats)
        launches = [Launch(kernel, (blocks, 1, 1), (schedule.threads, 1, 1), smem)]
        summary = f"{self.name} fused " + " ".join(f"{k}={v}" for k, v in point.items())
        # the first pass streams from DRAM: a position per loop trip, unrolled in the thread form
        # (the whole group at once when it is loaded into registers)
        in_flight = bytes_per_position(plan, stats[0], 8 if ctx.ctype == "double" else 4)
        trips = hint_extent(program, stats[0].extents) if registers else (
            schedule.unroll if per_thread else 1)
        return RenderedKernel(self.name, dict(point), source, [f"dice_{name}::{kernel}"], launcher, params,
                              launches, summary,
                              dram_bytes=fused_bytes(plan, program, _reads_once(plan, program, fuse)),
                              bytes_in_flight=in_flight * trips)
