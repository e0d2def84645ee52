"""A SIMT interpreter over one kernel's tree: the thread-dependence analysis and the memory trace
that the sync, race, coalescing and bank-conflict analyses read.

Every value is held for all threads of one modeled block at once (numpy arrays), together with
its *level*: UNIFORM (same in every thread of the block: blockIdx, blockDim, kernel parameters),
WARP (same within each warp: warp ids) or LANE (varies within a warp: threadIdx.x, lane ids,
loads at thread-dependent addresses). Levels propagate through assignments, control dependence,
loops and inlined calls to functions of the same file. Integer index arithmetic is computed
exactly per thread; values that cannot be known (floating data, loads) are `None` and keep only
their level.

Control flow runs like the hardware does: a per-thread active mask, both sides of a branch, loops
unrolled for a few iterations (enough to see one iteration's writes meet the next one's reads).
Uniform unknowns take fixed representative values (blockIdx = 1, integer parameters = 2^20), so
index arithmetic is exact for that block while its level still records that it may vary. What
the run records (accesses, divergence events) is defined in `trace`.
"""
from __future__ import annotations

import operator as operator_
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import numpy as np
from tree_sitter import Node

from .syntax import FIELD, PRIMITIVE_SIZES, VECTOR_COMPONENTS, FileFacts, Function, base_type, captures, \
    const_eval, declarator_name, float_literal_type, macro_expression, int_literal, operator, text, \
    trip_count, walk
from .trace import LANE, UNIFORM, WARP, Access, Array, BlockModel, LoopStep, Memory, SyncEvent, Trace

LOOP_ITERATIONS = 2          # unrolled iterations per loop entry
SHORT_LOOP = 8               # constant-trip loops up to this length run completely (unrolled chunks)
TREE_LOOP = 14               # halving/doubling loops with a block-uniform condition run to their end
                             # (a tree over all of 48 KB of shared floats has 14 levels)
CALL_DEPTH = 4
GENERIC_INT = 1 << 20        # the value an unknown uniform integer (a size parameter) takes
GENERIC_BLOCK_IDX = 1
MAX_DEPTH = 120              # expression nesting beyond this is left unknown (stays off Python's limit)
INT64 = (-(1 << 63), (1 << 63) - 1)



@dataclass(slots=True)
class Val:
    arr: Array | int | None             # per-thread integer value (or one int for all), None if unknown
    level: int = UNIFORM
    exact: bool = False                 # depends only on thread ids and literal constants
    mem: Memory | None = None           # set when the value is a pointer into `mem`
    offset: Array | int | None = 0      # element offset of that pointer
    indices: tuple[Array | int, ...] = ()   # per-dimension indices still to be completed (tile[i])
    # inexact only through blockIdx, modeled as block 1: any multiple of the block size shows in
    # it, so which threads of a warp agree (a warp id) is the same in every block
    positional: bool = False
    bound: int | None = None            # an unknown value known to lie in [0, bound] (`x & 15`)


UNKNOWN = Val(None, UNIFORM)
_BLOCK_IDX = Val(GENERIC_BLOCK_IDX, UNIFORM, positional=True)
_GRID_DIM = Val(64, UNIFORM)
# the spellings of the built-in index variables' components, as (variable, component)
_BUILTIN_FIELDS = {f"{base}.{axis}": (base, axis)
                   for base in ("threadIdx", "blockDim", "blockIdx", "gridDim") for axis in "xyz"}


@dataclass(slots=True)
class _Ctrl:
    kind: str                           # "if" | "loop"
    level: int
    exact: bool
    node: Node
    loop_id: int = -1
    iteration: int = 0
    tree: bool = False                  # loop variable halves or doubles (a reduction tree)
    trip: int | None = None             # constant trip count
    whole: bool = False                 # a tree loop run to its last level
    exit_level: int = UNIFORM           # highest level of a break/continue seen in this loop
    exit_node: Node | None = None
    broken: Array | None = None
    continued: Array | None = None


@dataclass(slots=True)
class _Frame:
    returned: Array
    exit_level: int = UNIFORM
    exit_node: Node | None = None
    ret: Val | None = None
    depth: int = 0


_BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}
_MASKED_WARP_OPS = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                    "__ballot_sync", "__any_sync", "__all_sync", "__match_any_sync",
                    "__match_all_sync", "__reduce_add_sync", "__reduce_min_sync",
                    "__reduce_max_sync", "__syncwarp"}
_ATOMICS = {"atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicCAS",
            "atomicAnd", "atomicOr", "atomicXor", "atomicInc", "atomicDec", "atomicAdd_block",
            "atomicAdd_system"}
_INT_FUNCS: dict[str, Callable[..., Array | int]] = {
    "min": np.minimum, "max": np.maximum, "umin": np.minimum, "umax": np.maximum,
    "abs": np.abs, "__popc": lambda a: a, "__mul24": lambda a, b: a * b,
}
_FULL_MASK = 0xFFFFFFFF
# cooperative-groups handles, by how they are declared or obtained: `X = this_thread_block()` or
# `thread_block X` is the block; `X = tiled_partition<K>(...)` or `thread_block_tile<K> X` a tile
_CG_BLOCK = re.compile(rb"\b(\w+)\s*=\s*(?:[\w:]+::)?this_thread_block\s*\(|\bthread_block\b\s*&?\s*(\w+)\b")
_CG_TILE = re.compile(rb"\b(\w+)\s*=\s*(?:[\w:]+::)?tiled_partition\s*<\s*(\w+)\s*>"
                      rb"|\bthread_block_tile\s*<\s*(\w+)\s*>\s*&?\s*(\w+)\b")


def _c_div(a, b):
    b = np.where(np.asarray(b) == 0, 1, b)
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q)


def _c_mod(a, b):
    return a - _c_div(a, b) * np.where(np.asarray(b) == 0, 1, b)


def _shift(a, b, left: bool):
    # shift counts clamped to [0, 62]; np.clip costs ~4 us on a scalar, min/max a fraction
    b = min(max(int(b), 0), 62) if not isinstance(b, np.ndarray) else np.minimum(np.maximum(b, 0), 62)
    return np.left_shift(a, b) if left else np.right_shift(a, b)


_BINARY: dict[str, Callable] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": _c_div, "%": _c_mod,
    "<<": lambda a, b: _shift(a, b, True), ">>": lambda a, b: _shift(a, b, False),
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
    "<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
    "&&": lambda a, b: np.logical_and(a != 0, b != 0), "||": lambda a, b: np.logical_or(a != 0, b != 0),
}


class Interpreter:
    """Runs one kernel (or one uncalled __device__ function) over a modeled block."""

    def __init__(self, fn: Function, functions: dict[str, Function], facts: FileFacts,
                 model: BlockModel, launched: dict[str, int] | None = None) -> None:
        self.fn = fn
        self.functions = functions
        self.launched = launched or {}
        self.facts = facts
        self.model = model
        bx, by, bz = model.dims
        t, self.tid, self.warp_of = _thread_ids(model.dims)
        self.n = model.threads
        self.trace = Trace(threads=self.n, warp_of=self.warp_of, thread_ids=t)
        self.epoch = 0
        self.warp_epoch = 0
        self.seq = 0
        self.ctrl: list[_Ctrl] = []
        self._steps: tuple[LoopStep, ...] | None = None     # `_iterations()`, while valid
        self.env: dict[str, Val] = {}
        # names bound to one array element (`const P& p = ps[i];`, `P* p = &ps[i];`): their fields
        # (`p.mass`, `p->mass`) are accesses of that element
        self.aliases: set[str] = set()
        self.active = np.ones(self.n, dtype=bool)
        self._any_of: tuple[Array | None, bool] = (None, True)   # (mask, mask.any()) last asked
        self._all_of: tuple[Array | None, bool] = (None, True)   # (mask, mask.all()) last asked
        self.frame = _Frame(_nobody(self.n))
        self.loop_ids = 0
        self.sync_seen: set[tuple[str, int]] = set()
        self.call_sites: list[Node] = []     # the calls being inlined, outermost first
        self.param_structs: dict[str, str] = {}   # a struct parameter passed by value → its type
        self.depth = 0
        self.groups = self._cg_groups(t)
        self.thread_idx = {"x": Val(self.tid["x"], LANE, exact=True),
                           "y": Val(self.tid["y"], LANE if bx < 32 else WARP, exact=True),
                           "z": Val(self.tid["z"], LANE if bx * by < 32 else WARP, exact=True)}

    def _cg_groups(self, t: Array) -> dict[str, tuple[int, Array]]:
        """Cooperative-groups handles named in this function or the functions it may inline:
        name → (threads per group, linear thread ids), read by `_cg_rank`."""
        codes = [self.fn.code] + [f.code for f in self.functions.values() if f is not self.fn]
        groups: dict[str, tuple[int, Array]] = {}
        for code in codes:
            if b"thread_block" not in code and b"tiled_partition" not in code:
                continue
            for m in _CG_BLOCK.finditer(code):
                groups[(m.group(1) or m.group(2)).decode()] = (self.n, t)
            for m in _CG_TILE.finditer(code):
                name, size = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
                k = const_eval(size.decode(), self.facts.constants)
                if k is not None and 0 < k <= self.n:
                    groups[name.decode()] = (k, t)
        return groups

    def _cg_rank(self, fnode: Node | None) -> Val | None:
        """`g.thread_rank()` / `g.meta_group_rank()` of a known group: the thread's rank in its
        group, and the group's rank in the block."""
        if fnode is None or fnode.type != "field_expression" or not self.groups:
            return None
        group = self.groups.get(text(fnode.child_by_field_id(FIELD.argument)))
        method = text(fnode.child_by_field_id(FIELD.field))
        if group is None:
            return None
        k, t = group
        if method == "thread_rank":
            return Val(t % k, LANE, exact=True)
        if method == "meta_group_rank":
            # a group of a whole number of warps is the same for every lane of a warp
            return Val(t // k, WARP if k % 32 == 0 else LANE, exact=True)
        return None

    # -- entry ----------------------------------------------------------------------------------

    def run(self) -> Trace:
        for name, type_name, indirect in self.fn.params:
            self.env[name] = self._param_value(name, type_name, indirect)
            if not indirect and type_name in self.facts.members and not _member_assigned(self.fn.code, name):
                self.param_structs[name] = type_name
        # index arithmetic wraps as in C: numpy's overflow warnings are noise here, and one
        # errstate for the whole run is far cheaper than one per operation
        with np.errstate(all="ignore"):
            self._stmt(self.fn.body)
        return self.trace

    def _param_value(self, name: str, type_name: str, indirect: bool) -> Val:
        if indirect:
            return Val(None, UNIFORM, exact=True, mem=Memory(name, "global", type_name, None))
        if type_name in ("float", "double", "half", "__half", "__nv_bfloat16", "bool"):
            return Val(None, UNIFORM)
        value = self.launched.get(name)
        # the size every launch site passes, when it keeps the modeled block (block 1 of the
        # grid) busy: a smaller one would idle it behind `if (i < n)` and hide its accesses
        if value is not None and value >= 2 * (GENERIC_BLOCK_IDX + 1) * self.n:
            return Val(value, UNIFORM)
        return Val(GENERIC_INT, UNIFORM)

    # -- statements -----------------------------------------------------------------------------

    def _stmt(self, node: Node) -> None:
        handler = _STATEMENTS.get(node.type)
        if handler is not None:
            handler(self, node)
        elif node.is_named and node.type not in ("comment", "ERROR"):
            self._expr(node)

    def _compound(self, node: Node) -> None:
        saved = dict(self.env)
        for child in node.named_children:
            if not self._anyone_active() and not self._may_matter(child):
                continue
            self._stmt(child)
        self.env = _outer_scope(self.env, saved)

    def _anyone_active(self) -> bool:
        """`self.active.any()`, remembered for the mask object last asked about: masks are never
        updated in place, and straight-line statements keep the same one."""
        mask, anyone = self._any_of
        if mask is not self.active:
            anyone = bool(self.active.any())
            self._any_of = (self.active, anyone)
        return anyone

    def _everyone_active(self) -> bool:
        """`self.active.all()`, remembered like `_anyone_active`."""
        mask, everyone = self._all_of
        if mask is not self.active:
            everyone = bool(self.active.all())
            self._all_of = (self.active, everyone)
        return everyone

    @staticmethod
    def _may_matter(node: Node) -> bool:
        # statements after every thread has left still carry barriers worth checking
        return node.type not in ("expression_statement", "declaration") or b"sync" in (node.text or b"")

    def _expression_statement(self, node: Node) -> None:
        for child in node.named_children:
            self._expr(child)

    def _declaration(self, node: Node) -> None:
        type_name = base_type(node)
        for d in node.children_by_field_id(FIELD.declarator):
            if d.type == "init_declarator":
                target = d.child_by_field_id(FIELD.declarator)
                value_node = d.child_by_field_id(FIELD.value)
                if target is not None and target.type == "array_declarator":
                    self._declare_array(target, type_name, node)
                    continue
                name = _declared_name(target)
                self.aliases.discard(name)
                if value_node is None or value_node.type in ("initializer_list", "argument_list"):
                    if value_node is not None:
                        for a in value_node.named_children:
                            self._expr(a)
                    self.env[name] = Val(None, self._control_level())
                    continue
                if _binds_element(target, value_node):
                    self.aliases.add(name)
                    value = self._location(value_node if value_node.type == "subscript_expression"
                                           else value_node.child_by_field_id(FIELD.argument))
                    self.env[name] = self._with_control(value)
                    continue
                value = self._expr(value_node)
                if target is not None and target.type in ("pointer_declarator", "reference_declarator") \
                        and value.mem is not None and self.facts.sizeof(type_name) is not None:
                    value = self._retype_pointer(value, type_name)   # `const float4* v = ptr;`
                self.env[name] = self._with_control(value)
            elif d.type == "array_declarator":
                self._declare_array(d, type_name, node)
            elif _is_shared(node):
                name = _declared_name(d)
                mem = Memory(name, "shared", type_name, (1,), node, scalar=True)
                self.env[name] = Val(None, UNIFORM, True, mem=mem)
            else:
                name = _declared_name(d)
                if name:
                    self.env[name] = Val(None, self._control_level())

    def _declare_array(self, d: Node, type_name: str, decl: Node) -> None:
        dims: list[int] = []
        node: Node | None = d
        while node is not None and node.type == "array_declarator":
            size = node.child_by_field_id(FIELD.size)
            dims.append(self._const(size) if size is not None else -1)
            node = node.child_by_field_id(FIELD.declarator)
        name = text(node)
        dims.reverse()
        known = tuple(dims) if all(x is not None and x > 0 for x in dims) else None
        space = "shared" if _is_shared(decl) else "local"
        self.env[name] = Val(None, UNIFORM, True, mem=Memory(name, space, type_name, known, decl,
                                                             rank=len(dims)))

    def _const(self, node: Node) -> int | None:
        v = self._expr(node)
        if isinstance(v.arr, (int, np.integer)):
            return int(v.arr)
        return const_eval(text(node), self.facts.constants)

    def _if(self, node: Node) -> None:
        cond = self._cond(node.child_by_field_id(FIELD.condition))
        entry = self.active
        taken, not_taken = self._split(cond)
        level = self._refined_level(cond)
        self.ctrl.append(_Ctrl("if", level, cond.exact, node))
        self.active = taken
        self._stmt(node.child_by_field_id(FIELD.consequence))
        after_then = self.active
        alt = node.child_by_field_id(FIELD.alternative)
        self.active = not_taken
        if alt is not None:
            self._stmt(alt)
        self.ctrl.pop()
        self.active = self._rejoined(after_then, self.active, entry)

    def _rejoined(self, a: Array, b: Array, entry: Array) -> Array:
        """`(a | b) & entry`, the threads active after both sides of a branch, without array
        work when a side is the shared empty mask or everyone who entered carries on."""
        nobody = _nobody(self.n)
        joined = b if a is nobody else a if b is nobody else a | b
        return entry if joined is entry else joined & entry

    def _else(self, node: Node) -> None:
        for child in node.named_children:
            self._stmt(child)

    def _cond(self, node: Node | None) -> Val:
        if node is None:
            return Val(1, UNIFORM, exact=True)
        if node.type == "condition_clause":
            inner = node.child_by_field_id(FIELD.value) or _last_named(node)
            for c in node.named_children:
                if c != inner:     # tree-sitter hands out a new Node object per access: no `is`
                    self._stmt(c)
            return self._expr(inner) if inner is not None else Val(1, UNIFORM, exact=True)
        return self._expr(node)

    def _split(self, cond: Val) -> tuple[Array, Array]:
        if cond.arr is None:
            return self.active, self.active
        if not isinstance(cond.arr, np.ndarray):     # one truth value for the block: no masking
            return (self.active, _nobody(self.n)) if int(cond.arr) != 0 else (_nobody(self.n), self.active)
        truth = self._full(cond.arr) != 0
        return self.active & truth, self.active & ~truth

    def _refined_level(self, cond: Val) -> int:
        """A thread-id-only condition constant within every warp (tid < 32, warp == 0) is
        warp-uniform even though it depends on threadIdx."""
        if cond.level == LANE and cond.exact and isinstance(cond.arr, np.ndarray) \
                and self._warp_constant(np.asarray(cond.arr != 0)):
            return WARP
        return cond.level

    def _loop(self, node: Node) -> None:
        kind = node.type
        init = node.child_by_field_id(FIELD.initializer)
        saved_env = dict(self.env) if kind == "for_statement" else None
        if init is not None:
            self._stmt(init)
        cond_node = node.child_by_field_id(FIELD.condition)
        update = node.child_by_field_id(FIELD.update)
        body = node.child_by_field_id(FIELD.body)
        entry = self.active
        self.loop_ids += 1
        tree = _is_tree_update(update) if update is not None else _tree_step_in_body(cond_node, body)
        ctl = _Ctrl("loop", UNIFORM, True, node, loop_id=self.loop_ids, tree=tree,
                    trip=trip_count(node, self.facts.constants) if kind == "for_statement" else None)
        self.ctrl.append(ctl)
        self._steps = None
        running = self.active
        iterations = ctl.trip if ctl.trip is not None and ctl.trip <= SHORT_LOOP else LOOP_ITERATIONS
        # one tree level deep: a tree inside a tree (a sorting network's two loops) multiplies the
        # levels, and the outer loop's barrier already separates the inner loop's runs
        whole_tree = ctl.tree and kind != "do_statement" and iterations < TREE_LOOP and \
            _starts_with_barrier(body) and not any(c.whole for c in self.ctrl if c.kind == "loop")
        if whole_tree:
            # a tree whose levels start with a barrier (Blelloch's sweeps) has few levels and its
            # last ones differ most (one active thread, the widest strides, the most threads of a
            # growing tree): cut after two, the code after the loop meets the wrong last level
            # (with the barrier at the end of each level, nothing after the loop meets it)
            iterations = TREE_LOOP
        ctl.whole = whole_tree
        finished = False                # the condition ended the loop (not the iteration cap)
        for iteration in range(iterations):
            ctl.iteration = iteration
            self._steps = None
            if kind != "do_statement" or iteration > 0:
                self.active = running
                cond = self._cond(cond_node)
                ctl.level = max(ctl.level, self._refined_level(cond))
                ctl.exact = ctl.exact and cond.exact
                running, _ = self._split(cond)
                if cond.arr is not None and not running.any():
                    finished = True
                    break
                if whole_tree and iteration >= LOOP_ITERATIONS and \
                        (cond.arr is None or isinstance(cond.arr, np.ndarray)):
                    break               # past two levels only while the condition is one known value
            ctl.broken = ctl.continued = _nobody(self.n)
            self.active = running
            if body is not None:
                self._stmt(body)
            running = self._still_running(ctl)
            if update is not None:
                self.active = running
                self._expr(update)
            if kind == "do_statement":
                self.active = running
                cond = self._cond(cond_node)
                ctl.level = max(ctl.level, self._refined_level(cond))
                running, _ = self._split(cond)
                if cond.arr is not None and not running.any():
                    finished = True
                    break
        if whole_tree and not finished:
            self.trace.truncated.add(ctl.loop_id)   # its last modeled level is not its last one
        self.ctrl.pop()
        self._steps = None
        self.active = self._minus_returned(entry)
        if saved_env is not None:
            self.env = _outer_scope(self.env, saved_env)

    def _return(self, node: Node) -> None:
        value_node = next((c for c in node.named_children), None)
        if value_node is not None:
            value = self._with_control(self._expr(value_node))
            prev = self.frame.ret
            if prev is None:
                self.frame.ret = value
            else:
                self.frame.ret = Val(_merge(prev.arr, value.arr, self.active),
                                     max(prev.level, value.level), prev.exact and value.exact,
                                     mem=prev.mem or value.mem, offset=prev.offset)
        level = self._control_level()
        if level > self.frame.exit_level:
            self.frame.exit_level, self.frame.exit_node = level, node
        self.frame.returned = self.frame.returned | self.active
        self.active = _nobody(self.n)

    def _break_continue(self, node: Node) -> None:
        loop = next((c for c in reversed(self.ctrl) if c.kind == "loop"), None)
        if loop is None:                   # a break of a switch
            return
        level = max((c.level for c in self.ctrl[self.ctrl.index(loop) + 1:]), default=UNIFORM)
        if level > loop.exit_level:
            loop.exit_level, loop.exit_node = level, node
        if node.type == "break_statement":
            loop.broken = loop.broken | self.active
        else:
            loop.continued = loop.continued | self.active
        self.active = _nobody(self.n)

    def _switch(self, node: Node) -> None:
        cond = self._cond(node.child_by_field_id(FIELD.condition))
        self.ctrl.append(_Ctrl("if", cond.level, cond.exact, node))
        entry = self.active
        body = node.child_by_field_id(FIELD.body)
        for case in body.named_children if body is not None else ():
            self.active = entry
            for stmt in case.named_children[1:] if case.type == "case_statement" else (case,):
                self._stmt(stmt)
        self.ctrl.pop()
        self.active = self._minus_returned(entry)

    # -- control helpers ------------------------------------------------------------------------

    def _still_running(self, ctl: _Ctrl) -> Array:
        """Threads that go on to the loop's next iteration. Masks nobody set are the shared
        empty mask, so the common loop without break/continue/return costs no array work."""
        running, nobody = self.active, _nobody(self.n)
        if ctl.continued is not nobody:
            running = running | ctl.continued
        if ctl.broken is not nobody:
            running = running & ~ctl.broken
        return self._minus_returned(running)

    def _minus_returned(self, mask: Array) -> Array:
        returned = self.frame.returned
        return mask if returned is _nobody(self.n) else mask & ~returned

    def _control_level(self) -> int:
        level = self.frame.exit_level
        for c in self.ctrl:             # a plain loop: called for every assignment
            if c.level > level:
                level = c.level
        return level

    def _with_control(self, v: Val) -> Val:
        level = self._control_level()
        if level <= v.level:
            return v
        return Val(v.arr, level, v.exact and all(c.exact for c in self.ctrl), v.mem, v.offset, v.indices)

    def _iterations(self) -> tuple[LoopStep, ...]:
        """Where the current point sits in the enclosing loops; rebuilt only after a loop was
        entered, left or advanced (the loops set `_steps` to None)."""
        if self._steps is None:
            self._steps = tuple(LoopStep(c.loop_id, c.iteration, c.tree, c.trip)
                                for c in self.ctrl if c.kind == "loop")
        return self._steps

    # -- expressions ----------------------------------------------------------------------------

    def _expr(self, node: Node | None) -> Val:
        if node is None or self.depth > MAX_DEPTH:
            return UNKNOWN
        handler = _EXPRESSIONS.get(node.type)
        self.depth += 1                 # not restored on an exception: that ends the whole run
        if handler is None:
            for child in node.named_children:
                self._expr(child)
            value = UNKNOWN
        else:
            value = handler(self, node)
        self.depth -= 1
        return value

    def _number(self, node: Node) -> Val:
        return _literal(self.facts.text(node))

    def _identifier(self, node: Node) -> Val:
        name = self.facts.text(node)
        v = self.env.get(name)
        if v is not None and v.mem is not None and v.mem.scalar:
            self._record(v.mem, "r", node, v, None, None)
            return Val(None, UNIFORM)
        if v is not None:
            return v
        c = self.facts.constants.get(name)
        if c is not None:
            return Val(_int64(c), UNIFORM, exact=True)
        if name == "warpSize":
            return Val(32, UNIFORM, exact=True)
        return UNKNOWN

    def _field(self, node: Node) -> Val:
        # `threadIdx.x` and kin, most field expressions, are known by their spelling alone: one
        # text read instead of two field lookups and two reads
        parts = _BUILTIN_FIELDS.get(self.facts.text(node))
        if parts is not None:
            return self._builtin_field(*parts)
        arg = node.child_by_field_id(FIELD.argument)
        fld = text(node.child_by_field_id(FIELD.field))
        builtin = self._builtin_field(text(arg), fld)
        if builtin is not None:
            return builtin
        if arg is not None and arg.type == "subscript_expression":
            return self._subscript(arg, field_name=fld, field_node=node)
        if arg is not None and arg.type == "identifier" and text(arg) in self.param_structs \
                and self.frame.depth == 0:
            member = self._struct_member(text(arg), fld)
            if member is not None:
                return member
        v = self._expr(arg)
        if arg is not None and arg.type == "identifier" and v.mem is not None and text(arg) in self.aliases:
            self._record(v.mem, "r", node, v, fld, None)
            return Val(None, v.level if v.mem.space != "local" else LANE)
        return Val(None, v.level)

    def _struct_member(self, param: str, fld: str) -> Val | None:
        """`p.x` of a parameter struct passed by value: a kernel parameter of its own (a global
        pointer, a size, a scalar), as if the kernel took the members one by one (a struct the
        kernel assigns members of is left alone: `_member_assigned`)."""
        name = f"{param}.{fld}"
        if name not in self.env:
            found = next((m for m in self.facts.members[self.param_structs[param]] if m[0] == fld), None)
            if found is None:
                return None
            self.env[name] = self._param_value(name, found[1], found[2])
        return self.env[name]

    def _builtin_field(self, base: str, fld: str) -> Val | None:
        """A component of threadIdx, blockDim, blockIdx or gridDim; None for any other field."""
        if base == "threadIdx":
            return self.thread_idx.get(fld)
        if base == "blockDim" and fld in "xyz":
            return Val(self.model.dims["xyz".index(fld)], UNIFORM, self.model.known)
        if base == "blockIdx":
            return _BLOCK_IDX
        if base == "gridDim":
            return _GRID_DIM
        return None

    def _binary(self, node: Node) -> Val:
        left, op, right = _infix(node)
        a = self._expr(left)
        b = self._expr(right)
        level = a.level if a.level > b.level else b.level
        exact = a.exact and b.exact
        if a.mem is not None and b.mem is None and op in ("+", "-"):
            off = _arith(op, a.offset, b.arr)
            return Val(None, level, exact, mem=a.mem, offset=off)
        if b.mem is not None and a.mem is None and op == "+":
            return Val(None, level, exact, mem=b.mem, offset=_arith(op, b.offset, a.arr))
        fn = _BINARY.get(op)
        if fn is None or a.arr is None or b.arr is None:
            return self._bounded(op, a, b, level)
        positional = not exact and (a.exact or a.positional) and (b.exact or b.positional)
        if type(a.arr) is int and type(b.arr) is int:      # one value for the block
            value = _uniform_int(op, a.arr, b.arr)
            if value is not None:
                return Val(value, level, exact, positional=positional)
        result = fn(a.arr, b.arr)              # int64 arrays wrap silently, as C does
        if isinstance(result, np.ndarray) and result.ndim == 0:     # a 0-d operand: one value
            result = result[()]
        if isinstance(result, np.ndarray):
            result = result.astype(np.int64, copy=False)
            if level == LANE and (exact or positional) and self._warp_constant(result):
                level = WARP                # threadIdx.x / 32, a warp id
        else:
            result = _int64(int(result))
        return Val(result, level, exact, positional=positional)

    def _full(self, v: Array | int) -> Array:
        """A per-thread int64 array for a per-thread or uniform value."""
        if isinstance(v, np.ndarray) and v.shape == (self.n,):
            return v if v.dtype == np.int64 else v.astype(np.int64)
        return np.full(self.n, int(v), dtype=np.int64)

    def _bounded(self, op: str, a: Val, b: Val, level: int) -> Val:
        """An operation with an unknown operand. `x & K` lies in [0, K]; a per-thread row start
        plus such a column, where rows are further apart than the column's range (`tid * 16 +
        digit`), stays inside each thread's own row: modeled by the row start (column 0), which
        keeps which threads may share an element and the bank pattern of equal columns."""
        if op == "&":
            for known in (a, b):
                if type(known.arr) is int and known.level == UNIFORM and known.arr >= 0:
                    return Val(None, level, bound=known.arr)
        if op == "+":
            for row, column in ((a, b), (b, a)):
                if column.bound is not None and isinstance(row.arr, np.ndarray) and \
                        row.arr.shape == (self.n,) and self.n > 1:
                    starts = np.sort(row.arr)
                    if int(np.diff(starts).min()) > column.bound:
                        return Val(row.arr, level, exact=False)
        return Val(None, level, a.exact and b.exact)

    def _warp_constant(self, arr: Array) -> bool:
        if self.n % 32 or arr[0] != arr[1]:        # lanes 0 and 1 differ: the usual answer, cheaply
            return False
        by_warp = arr.reshape(-1, 32)
        return bool((by_warp == by_warp[:, :1]).all())

    def _unary(self, node: Node) -> Val:
        op = operator(node)
        v = self._expr(node.child_by_field_id(FIELD.argument))
        if v.arr is None:
            return Val(None, v.level, v.exact)
        if op == "-":
            return Val(-v.arr, v.level, v.exact)
        if op == "!":
            return Val(np.asarray(v.arr == 0, dtype=np.int64) if isinstance(v.arr, np.ndarray)
                       else int(v.arr == 0), v.level, v.exact)
        if op == "~":
            return Val(~v.arr, v.level, v.exact)
        return v

    def _paren(self, node: Node) -> Val:
        inner = node.named_children
        return self._expr(inner[-1]) if inner else UNKNOWN

    def _cast(self, node: Node) -> Val:
        v = self._expr(node.child_by_field_id(FIELD.value))
        type_desc = node.child_by_field_id(FIELD.type)
        if v.mem is not None and type_desc is not None and "*" in text(type_desc):
            return self._retype_pointer(v, text(type_desc.child_by_field_id(FIELD.type)))
        if type_desc is not None and text(type_desc) in ("float", "double", "half", "__half"):
            return Val(None, v.level, v.exact)
        return v

    def _retype_pointer(self, v: Val, new_elem: str) -> Val:
        old_size = self.facts.sizeof(v.mem.elem) if v.mem else None
        new_size = self.facts.sizeof(new_elem)
        if v.mem is None or new_elem == v.mem.elem:
            return v
        off = v.offset
        if old_size and new_size and off is not None:
            scaled = np.asarray(off) * old_size
            off = None if np.any(scaled % new_size) else scaled // new_size
            if off is not None and off.ndim == 0:
                off = int(off)
        else:
            off = None
        mem = Memory(v.mem.name, v.mem.space, new_elem, None, v.mem.decl)
        return Val(None, v.level, mem=mem, offset=off)

    def _conditional(self, node: Node) -> Val:
        cond = self._expr(node.child_by_field_id(FIELD.condition))
        entry = self.active
        taken, not_taken = self._split(cond)
        self.active = taken
        a = self._expr(node.child_by_field_id(FIELD.consequence))
        self.active = not_taken
        b = self._expr(node.child_by_field_id(FIELD.alternative))
        self.active = entry
        level = max(cond.level, a.level, b.level)
        exact = cond.exact and a.exact and b.exact
        if a.mem is not None or b.mem is not None:
            return Val(None, level, mem=a.mem or b.mem, offset=None)
        if cond.arr is None or a.arr is None or b.arr is None:
            return Val(None, level, exact)
        return Val(np.where(np.asarray(cond.arr) != 0, a.arr, b.arr), level, exact)

    def _comma(self, node: Node) -> Val:
        v = UNKNOWN
        for child in node.named_children:
            v = self._expr(child)
        return v

    def _sizeof(self, node: Node) -> Val:
        t = node.child_by_field_id(FIELD.type)
        size = self.facts.sizeof(text(t.child_by_field_id(FIELD.type)) if t is not None else "")
        return Val(size, UNIFORM, exact=True) if size else UNKNOWN

    # -- memory ---------------------------------------------------------------------------------

    def _location(self, node: Node) -> Val:
        """The pointer value an lvalue/rvalue subscript chain denotes (not an access)."""
        base = node.child_by_field_id(FIELD.argument)
        idx_list = node.child_by_field_id(FIELD.indices)
        idx_nodes = _operands(idx_list)
        idx = self._expr(idx_nodes[0]) if idx_nodes else UNKNOWN
        for extra in idx_nodes[1:]:
            self._expr(extra)
        b = self._subscript_base(base)
        if b.mem is None:
            return Val(None, max(b.level, idx.level))
        level, exact = max(b.level, idx.level), b.exact and idx.exact
        indices = b.indices + (idx.arr,)
        if b.mem.rank > 1:      # rows of unknown extent (`tile[TILE][TILE]`, TILE unknown): no address
            return Val(None, level, exact, mem=b.mem, offset=None, indices=indices)
        off = _arith("+", b.offset, idx.arr)
        return Val(None, level, exact, mem=b.mem, offset=off, indices=indices)

    def _subscript_base(self, base: Node | None) -> Val:
        if base is not None and base.type == "subscript_expression":
            return self._location(base)
        return self._expr(base)

    def _subscript(self, node: Node, field_name: str | None = None, field_node: Node | None = None,
                   kind: str = "r", value: Val | None = None) -> Val:
        loc = self._location(node)
        if loc.mem is None:
            return Val(None, loc.level)
        mem = loc.mem
        if mem.dims is not None and len(loc.indices) < len(mem.dims):
            return loc                      # a row of a multi-dimensional array: still a pointer
        self._record(mem, kind, field_node or node, loc, field_name, value)
        load_level = loc.level if mem.space != "local" else LANE
        return Val(None, load_level)

    def _record(self, mem: Memory, kind: str, node: Node, loc: Val, field_name: str | None,
                value: Val | None) -> None:
        if mem.space == "local":
            return
        addr, indices = self._linear(mem, loc)
        mask = self.active
        if indices is not None and mem.dims is not None:
            for i, extent in zip(indices, mem.dims):    # out-of-bounds threads: a memory error, not
                mask = mask & (i.view(np.uint64) < extent)   # a race (negative: huge unsigned)
        field_offset, access_size = 0, None
        if field_name is not None:
            fo = self.facts.field_offset(mem.elem, field_name)
            if fo is None and mem.elem in VECTOR_COMPONENTS:
                width = PRIMITIVE_SIZES[VECTOR_COMPONENTS[mem.elem]]
                pos = "xyzw".find(field_name)
                fo = (pos * width, width) if pos >= 0 else None
            if fo is None:
                addr = None
            else:
                field_offset, access_size = fo
        self.seq += 1
        self.trace.accesses.append(Access(
            mem, kind, node, addr, indices, mask, self.epoch, self.warp_epoch, self.seq,
            self._iterations(), field_offset, access_size,
            value.level if value is not None else UNIFORM, loc.exact, loc.level))

    def _linear(self, mem: Memory, loc: Val) -> tuple[Array | None, tuple[Array, ...] | None]:
        if mem.dims is not None and len(mem.dims) > 1:
            if any(i is None for i in loc.indices) or len(loc.indices) != len(mem.dims):
                return None, None
            parts = [self._full(i) for i in loc.indices]
            addr = parts[0]
            for i, extent in zip(parts[1:], mem.dims[1:]):
                addr = addr * extent + i
            return addr, tuple(parts)
        if loc.offset is None:
            return None, None
        addr = self._full(loc.offset)
        return addr, (addr,) if mem.dims is not None else None

    def _pointer_expr(self, node: Node, kind: str = "r", value: Val | None = None) -> Val:
        op = operator(node)
        arg = node.child_by_field_id(FIELD.argument)
        if op == "&":
            if arg is not None and arg.type == "subscript_expression":
                return self._location(arg)
            if arg is not None and arg.type == "identifier":
                v = self.env.get(self.facts.text(arg))
                if v is not None and v.mem is not None and v.mem.scalar:
                    return v                    # `&counter` of a __shared__ scalar: its address, no read
            return self._expr(arg)
        v = self._expr(arg)
        if v.mem is None:
            return Val(None, v.level)
        self._record(v.mem, kind, node, v, None, value)
        return Val(None, v.level if v.mem.space != "local" else LANE)

    # -- assignment -----------------------------------------------------------------------------

    def _assign(self, node: Node) -> Val:
        left, op, right = _infix(node)
        value = self._expr(right)
        if op != "=":
            current = self._read_lvalue(left)
            fn = _BINARY.get(op[:-1])
            if fn is not None and current.arr is not None and value.arr is not None:
                arr = np.asarray(fn(current.arr, value.arr), dtype=np.int64)
                value = Val(arr, max(current.level, value.level), current.exact and value.exact)
            elif current.mem is not None and op in ("+=", "-=") and value.arr is not None:
                value = Val(None, max(current.level, value.level), mem=current.mem,
                            offset=_arith(op[0], current.offset, value.arr))
            else:
                value = Val(None, max(current.level, value.level))
        self._write_lvalue(left, value)
        return value

    def _read_lvalue(self, left: Node | None) -> Val:
        if left is None:
            return UNKNOWN
        if left.type == "identifier":
            return self._identifier(left)
        return self._expr(left)

    def _write_lvalue(self, left: Node | None, value: Val) -> None:
        if left is None:
            return
        t = left.type
        if t == "identifier":
            name = self.facts.text(left)
            old = self.env.get(name)
            if old is not None and old.mem is not None and old.mem.scalar:
                self._record(old.mem, "w", left, old, None, value)
                return
            value = self._with_control(value)
            if old is not None and not self._everyone_active():
                arr = _merge(old.arr, value.arr, self.active)
                mem = value.mem or old.mem
                offset = _merge(old.offset, value.offset, self.active) if mem is not None else 0
                value = Val(arr, max(old.level, value.level), old.exact and value.exact, mem, offset)
            self.env[name] = value
        elif t == "subscript_expression":
            self._subscript(left, kind="w", value=value)
        elif t == "field_expression":
            arg = left.child_by_field_id(FIELD.argument)
            if arg is not None and arg.type == "subscript_expression":
                self._subscript(arg, field_name=text(left.child_by_field_id(FIELD.field)),
                                field_node=left, kind="w", value=value)
            elif arg is not None and arg.type == "identifier" and text(arg) in self.aliases \
                    and (alias := self.env.get(text(arg))) is not None and alias.mem is not None:
                self._record(alias.mem, "w", left, alias, text(left.child_by_field_id(FIELD.field)), value)
            elif arg is not None and arg.type == "identifier":
                name = text(arg)
                old = self.env.get(name)
                level = max(old.level if old else UNIFORM, value.level, self._control_level())
                self.env[name] = Val(None, level)
        elif t == "pointer_expression":
            self._pointer_expr(left, kind="w", value=value)
        elif t == "parenthesized_expression":
            inner = left.named_children
            if inner:
                self._write_lvalue(inner[-1], value)

    def _update(self, node: Node) -> Val:
        arg = node.child_by_field_id(FIELD.argument)
        op = operator(node)
        current = self._read_lvalue(arg)
        delta = 1 if op == "++" else -1
        if current.arr is not None:
            new = Val(current.arr + delta, current.level, current.exact)
        elif current.mem is not None:
            new = Val(None, current.level, mem=current.mem, offset=_arith("+", current.offset, delta))
        else:
            new = Val(None, current.level)
        self._write_lvalue(arg, new)
        return new

    # -- calls ----------------------------------------------------------------------------------

    def _call(self, node: Node) -> Val:
        fnode = node.child_by_field_id(FIELD.function)
        args_node = node.child_by_field_id(FIELD.arguments)
        arg_nodes = _operands(args_node)
        name = _callee_name(fnode)
        if any(c.type == "kernel_call_syntax" for c in node.named_children):
            return UNKNOWN
        if fnode is not None and fnode.type == "template_function" and name in (
                "static_cast", "reinterpret_cast", "const_cast"):
            v = self._expr(arg_nodes[0]) if arg_nodes else UNKNOWN
            target = fnode.child_by_field_id(FIELD.arguments)
            tt = text(target).strip("<> ")
            if v.mem is not None and tt.endswith("*"):
                return self._retype_pointer(v, tt.rstrip("*").replace("const", "").strip())
            return v if tt not in ("float", "double") else Val(None, v.level)
        if name in _BARRIERS or self._is_cg_block_sync(fnode):
            for a in arg_nodes:
                self._expr(a)
            self._barrier(node)
            return Val(None, UNIFORM)
        if name in _MASKED_WARP_OPS:
            args = [self._expr(a) for a in arg_nodes]
            # only __syncwarp has a default mask: the full warp
            self._warp_op(node, name, args[0] if args else Val(_FULL_MASK, UNIFORM, exact=True),
                          bool(arg_nodes) or name == "__syncwarp")
            if name == "__syncwarp":
                self.warp_epoch += 1
                return UNKNOWN
            if name == "__shfl_sync" and len(args) >= 3 and args[2].level == UNIFORM:
                return Val(None, max(WARP, args[1].level if args[1].level < LANE else WARP))
            if name in ("__ballot_sync", "__any_sync", "__all_sync"):
                return Val(None, WARP)
            return Val(None, LANE)
        if name in _ATOMICS:
            args = [self._atomic_target(arg_nodes[0])] if arg_nodes else []
            args += [self._expr(a) for a in arg_nodes[1:]]
            return self._atomic_result(name, args)
        if name in ("__ldg", "__ldcs", "__ldcg", "__ldca", "__ldlu") and arg_nodes:
            ptr = self._expr(arg_nodes[0])
            if ptr.mem is not None:
                self._record(ptr.mem, "r", node, ptr, None, None)
            return Val(None, ptr.level)
        rank = self._cg_rank(fnode)
        if rank is not None:
            return rank
        if name in ("__activemask", "__lanemask_lt"):
            return Val(None, WARP)
        if name == "__laneid" or name == "laneid":
            return Val(self.tid["x"] % 32, LANE, exact=True)
        args = [self._expr(a) for a in arg_nodes]
        callee = self.functions.get(name)
        macro = self.facts.arith_macros.get(name) if callee is None else None
        if macro is not None and len(macro[0]) == len(args):
            parsed = macro_expression(macro[1])
            if parsed is not None:
                # the body's nodes index its own bytes: read their texts from those
                saved_env, saved_facts = self.env, self.facts
                self.env = {**self.env, **dict(zip(macro[0], args))}
                self.facts = replace(self.facts, source=parsed[0])
                value = self._expr(parsed[1])
                self.env, self.facts = saved_env, saved_facts
                return value
        if callee is not None and self.frame.depth < CALL_DEPTH and callee is not self.fn:
            self.call_sites.append(node)
            try:
                return self._inline(callee, args)
            finally:
                self.call_sites.pop()
        level = max((a.level for a in args), default=UNIFORM)
        int_fn = _INT_FUNCS.get(name)
        if int_fn is not None and args and all(a.arr is not None for a in args):
            return Val(np.asarray(int_fn(*[a.arr for a in args]), dtype=np.int64), level,
                       all(a.exact for a in args))
        return Val(None, level)

    def _atomic_result(self, name: str, args: list[Val]) -> Val:
        """What an atomic returns. Adding the same non-zero amount to one address (a counter:
        `slot = atomicAdd(&count, 1)`) hands every thread a different old value, so `slot == 0`
        holds in one thread only: modeled by the ranks of the executing threads, in an unknown
        order (inexact)."""
        if name in ("atomicAdd", "atomicAdd_block", "atomicSub", "atomicInc") and len(args) == 2:
            target, amount = args
            one_address = target.mem is not None and target.level == UNIFORM and \
                target.offset is not None and not isinstance(target.offset, np.ndarray)
            if one_address and amount.level == UNIFORM and type(amount.arr) is int and amount.arr != 0:
                return Val(np.cumsum(self.active, dtype=np.int64) - 1, LANE, exact=False)
        return Val(None, LANE)

    def _atomic_target(self, node: Node) -> Val:
        ptr = self._expr(node)
        if ptr.mem is not None:
            self._record(ptr.mem, "atomic", node, ptr, None, None)
        return ptr

    def _is_cg_block_sync(self, fnode: Node | None) -> bool:
        """cooperative_groups: block.sync(), cg::sync(block), this_thread_block().sync(), and
        `.sync()` of any handle declared as the block."""
        if fnode is None:
            return False
        s = text(fnode)
        if fnode.type == "field_expression" and text(fnode.child_by_field_id(FIELD.field)) == "sync":
            owner = text(fnode.child_by_field_id(FIELD.argument))
            if owner in self.groups:
                return self.groups[owner][0] == self.n
            owner = owner.lower()
            return "block" in owner or owner in ("cta", "g", "grp", "group")
        return s in ("cg::sync", "cooperative_groups::sync")

    def _inline(self, callee: Function, args: list[Val]) -> Val:
        saved_env, saved_frame, saved_ctrl_len = self.env, self.frame, len(self.ctrl)
        self.env = {}
        for (pname, ptype, indirect), value in zip(callee.params, args):
            self.env[pname] = value if (value.arr is not None or value.mem is not None or value.level) \
                else self._param_value(pname, ptype, indirect)
        self.frame = _Frame(_nobody(self.n), depth=saved_frame.depth + 1)
        entry = self.active
        self._stmt(callee.body)
        ret = self.frame.ret or Val(None, max((a.level for a in args), default=UNIFORM))
        self.env, self.frame = saved_env, saved_frame
        del self.ctrl[saved_ctrl_len:]
        self._steps = None
        self.active = entry
        return ret

    # -- barriers -------------------------------------------------------------------------------

    def _barrier(self, node: Node) -> None:
        reason = self._divergence(WARP)
        if reason is not None:
            code, why = reason
            site = self._divergent_call(why)
            key = (code, (site or node).id)
            if key not in self.sync_seen:
                self.sync_seen.add(key)
                self.trace.sync.append(SyncEvent(site, code, why, {"barrier": node}) if site is not None
                                       else SyncEvent(node, code, why))
        self.epoch += 1
        self.warp_epoch += 1

    def _divergent_call(self, why: Node) -> Node | None:
        """The call that brought a barrier under a divergence of its caller (`if (t < len)
        block_sum(...)`): the finding belongs there, not in a helper that is fine when called by
        every thread. None when the divergence is in the barrier's own function."""
        owner = _enclosing_function(why)
        for site in self.call_sites:
            if _enclosing_function(site) == owner:
                return site
        return None

    def _divergence(self, threshold: int) -> tuple[str, Node] | None:
        """Why not every thread (of the block for WARP, of the warp for LANE) reaches here."""
        for c in reversed(self.ctrl):
            if c.kind == "if" and c.level >= threshold:
                return "DICE-S001", c.node
        if self.frame.exit_level >= threshold and self.frame.exit_node is not None:
            return "DICE-S002", self.frame.exit_node
        for c in reversed(self.ctrl):
            if c.kind == "loop" and c.exit_level >= threshold and c.exit_node is not None:
                return "DICE-S002", c.exit_node
        for c in reversed(self.ctrl):
            if c.kind == "loop" and c.level >= threshold:
                return "DICE-S003", c.node
        return None

    def _warp_op(self, node: Node, name: str, mask: Val, has_mask: bool) -> None:
        if not has_mask or mask.arr is None:
            return                              # __activemask() or a computed mask
        values = self._full(mask.arr)
        if self.n % 32:
            return
        exact = all(c.exact for c in self.ctrl) and self.frame.exit_level < LANE
        if not exact:
            if self._divergence(LANE) is not None and np.all(values & _FULL_MASK == _FULL_MASK):
                self._warp_finding(node, name, "full mask under a lane-dependent condition")
            return
        lanes = self.active.reshape(-1, 32)
        bits = (lanes * (1 << np.arange(32, dtype=np.int64))).sum(axis=1)
        want = values.reshape(-1, 32)[:, 0] & _FULL_MASK
        executing = bits != 0
        if np.any(executing & (bits != want)):
            w = int(np.argmax(executing & (bits != want)))
            self._warp_finding(node, name, f"warp {w}: lanes 0x{int(bits[w]):08x} execute it, "
                                           f"mask names 0x{int(want[w]):08x}")

    def _warp_finding(self, node: Node, name: str, detail: str) -> None:
        key = ("DICE-S004", node.id)
        if key not in self.sync_seen:
            self.sync_seen.add(key)
            self.trace.sync.append(SyncEvent(node, "DICE-S004", None, {"op": name, "detail": detail}))


@lru_cache(maxsize=64)
def _thread_ids(dims: tuple[int, int, int]) -> tuple[Array, dict[str, Array], Array]:
    """Linear thread ids, threadIdx.{x,y,z} and warp ids of a block shape. Built once per shape
    (they are a fixed cost of every function otherwise) and read-only, so no run can alter the
    copies the next run sees."""
    bx, by, _ = dims
    t = np.arange(bx * by * dims[2], dtype=np.int64)
    tid = {"x": t % bx, "y": (t // bx) % by, "z": t // (bx * by)}
    warp_of = t // 32
    for arr in (t, warp_of, *tid.values()):
        arr.setflags(write=False)
    return t, tid, warp_of


@lru_cache(maxsize=64)
def _nobody(threads: int) -> Array:
    """An all-false thread mask (read-only: masks are shared, never updated in place)."""
    mask = np.zeros(threads, dtype=bool)
    mask.setflags(write=False)
    return mask


@lru_cache(maxsize=1024)
def _literal(spelling: str) -> Val:
    """A number literal's value: its integer, or unknown for a floating literal. One Val per
    spelling serves every occurrence (Vals are never updated in place)."""
    if float_literal_type(spelling) is not None:
        return Val(None, UNIFORM, exact=True)
    return Val(_int64(int_literal(spelling)), UNIFORM, exact=True)


_PYTHON_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "+": operator_.add, "-": operator_.sub, "*": operator_.mul, "&": operator_.and_,
    "|": operator_.or_, "^": operator_.xor, "<": operator_.lt, ">": operator_.gt,
    "<=": operator_.le, ">=": operator_.ge, "==": operator_.eq, "!=": operator_.ne,
}


def _uniform_int(op: str, a: int, b: int) -> int | None:
    """`a op b` in Python ints when that is exactly what the int64 numpy operation gives: both
    operands and the result within 64 bits (so nothing wraps). None: use numpy."""
    fn = _PYTHON_INT_OPS.get(op)
    if fn is None or not (INT64[0] <= a <= INT64[1] and INT64[0] <= b <= INT64[1]):
        return None
    return _int64(int(fn(a, b)))


def _int64(v: int | None) -> int | None:
    """Values beyond 64 bits are unknown (C would have wrapped or rejected them)."""
    return v if v is not None and INT64[0] <= v <= INT64[1] else None


def _is_shared(decl: Node) -> bool:
    """A `__shared__` declaration (asked only of arrays and uninitialized scalars)."""
    return any(c.type in ("type_qualifier", "storage_class_specifier") and text(c) == "__shared__"
               for c in decl.children)


def _infix(node: Node) -> tuple[Node | None, str, Node | None]:
    """Left operand, operator and right operand of a binary or assignment expression. The usual
    shape has exactly those three children: one `children` call instead of three field lookups
    (a comment inside makes more children and takes the field lookups)."""
    children = node.children
    if len(children) == 3:
        left, op, right = children
        return left, op.type, right
    return node.child_by_field_id(FIELD.left), operator(node), node.child_by_field_id(FIELD.right)


def _operands(node: Node | None) -> list[Node]:
    return [c for c in node.named_children if c.type != "comment"] if node is not None else []


def _last_named(node: Node) -> Node | None:
    return node.named_children[-1] if node.named_children else None


def _binds_element(target: Node | None, value: Node) -> bool:
    """`T& p = a[i]` or `T* p = &a[i]`: the name stands for one element of an array."""
    if target is None:
        return False
    if target.type == "reference_declarator":
        return value.type == "subscript_expression"
    if target.type == "pointer_declarator" and value.type == "pointer_expression" and operator(value) == "&":
        arg = value.child_by_field_id(FIELD.argument)
        return arg is not None and arg.type == "subscript_expression"
    return False


def _declared_name(d: Node | None) -> str:
    return declarator_name(d)[0]


def _member_assigned(code: bytes, name: str) -> bool:
    """Whether the function's text assigns a member of `name` (`p.n = …`, `p.x += …`, `++p.i`)."""
    member = rb"\b" + re.escape(name.encode()) + rb"\s*\.\s*\w+"
    return re.search(member + rb"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*" + member + rb"|" + member
                     + rb"\s*(?:\+\+|--)", code) is not None


def _enclosing_function(node: Node) -> Node | None:
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


def _callee_name(fnode: Node | None) -> str:
    if fnode is None:
        return ""
    if fnode.type == "template_function":
        fnode = fnode.child_by_field_id(FIELD.name)
    return text(fnode).split("::")[-1]


def _starts_with_barrier(body: Node | None) -> bool:
    """The loop body's first statement is a block barrier (`__syncthreads();`)."""
    if body is None or body.type != "compound_statement":
        return False
    first = next((c for c in body.named_children if c.type != "comment"), None)
    return first is not None and first.type == "expression_statement" and \
        (first.text or b"").startswith((b"__syncthreads", b"block.sync", b"cta.sync", b"g.sync"))


def _tree_step_in_body(cond: Node | None, body: Node | None) -> bool:
    """A `while` (or update-less `for`) whose body halves or doubles a variable of its
    condition as a statement of its own (`while (d > 0) { …; d >>= 1; }`)."""
    if cond is None or body is None or body.type != "compound_statement":
        return False
    names = {text(n) for n in walk(cond) if n.type == "identifier"}
    for stmt in body.named_children:
        if stmt.type == "expression_statement" and stmt.named_children:
            step = stmt.named_children[0]
            target = step.child_by_field_id(FIELD.left) if step.type == "assignment_expression" else None
            if target is not None and text(target) in names and _is_tree_update(step):
                return True
    return False


def _is_tree_update(update: Node | None) -> bool:
    if update is None:
        return False
    s = text(update).replace(" ", "")
    return any(p in s for p in (">>=1", "/=2", "*=2", "<<=1", "=s/2", "=s>>1", "=s*2")) or (
        ">>1" in s or "/2" in s or "<<1" in s or "*2" in s)


def _outer_scope(env: dict[str, Val], outer: dict[str, Val]) -> dict[str, Val]:
    """`env` after leaving a scope entered with `outer`: names declared inside go, updates to
    outer names stay. Names are only ever added, so the same count means the same names."""
    if len(env) == len(outer):
        return env
    return {k: env.get(k, v) for k, v in outer.items()}


def _arith(op: str, a, b):
    if a is None or b is None:
        return None
    return a + b if op == "+" else a - b


def _merge(old, new, mask: Array):
    if old is None or new is None:
        return None
    return np.where(mask, new, old)


_STATEMENTS: dict[str, Callable[[Interpreter, Node], None]] = {
    "compound_statement": Interpreter._compound,
    "expression_statement": Interpreter._expression_statement,
    "declaration": Interpreter._declaration,
    "if_statement": Interpreter._if,
    "else_clause": Interpreter._else,
    "for_statement": Interpreter._loop,
    "while_statement": Interpreter._loop,
    "do_statement": Interpreter._loop,
    "return_statement": Interpreter._return,
    "break_statement": Interpreter._break_continue,
    "continue_statement": Interpreter._break_continue,
    "switch_statement": Interpreter._switch,
    "labeled_statement": lambda self, n: [self._stmt(c) for c in n.named_children[1:]] and None,
    "comment": lambda self, n: None,
    "type_definition": lambda self, n: None,
    "struct_specifier": lambda self, n: None,
    "preproc_call": lambda self, n: None,
    "alias_declaration": lambda self, n: None,
    "using_declaration": lambda self, n: None,
    "static_assert_declaration": lambda self, n: None,
}

_EXPRESSIONS: dict[str, Callable[[Interpreter, Node], Val]] = {
    "number_literal": Interpreter._number,
    "identifier": Interpreter._identifier,
    "field_expression": Interpreter._field,
    "binary_expression": Interpreter._binary,
    "unary_expression": Interpreter._unary,
    "parenthesized_expression": Interpreter._paren,
    "cast_expression": Interpreter._cast,
    "conditional_expression": Interpreter._conditional,
    "comma_expression": Interpreter._comma,
    "sizeof_expression": Interpreter._sizeof,
    "subscript_expression": lambda self, n: self._subscript(n),
    "pointer_expression": Interpreter._pointer_expr,
    "assignment_expression": Interpreter._assign,
    "update_expression": Interpreter._update,
    "call_expression": Interpreter._call,
    "true": lambda self, n: Val(1, UNIFORM, exact=True),
    "false": lambda self, n: Val(0, UNIFORM, exact=True),
    "char_literal": lambda self, n: Val(None, UNIFORM, exact=True),
    "string_literal": lambda self, n: UNKNOWN,
    "condition_clause": Interpreter._cond,
    "declaration": lambda self, n: self._declaration(n) or UNKNOWN,
}



def block_model(fn: Function, facts: FileFacts) -> BlockModel:
    """The block the kernel runs with: a literal launch site or __launch_bounds__ when the file
    has one; otherwise a guess from its 2-D shared tiles, or 256 (1-D) / 32x8 (2-D)."""
    if fn.name in facts.block_sizes:
        dims = facts.block_sizes[fn.name]
        if 0 < dims[0] * dims[1] * dims[2] <= 1024:
            return BlockModel(dims, True)
    body = fn.body.text or b""
    uses_y = b"threadIdx.y" in body
    bound = fn.max_threads(facts.constants)
    if bound and not uses_y and 0 < bound <= 1024:
        return BlockModel((bound, 1, 1), True)
    if not uses_y:
        return BlockModel((256, 1, 1), False)
    for rows, cols in _shared_tiles(fn, facts) if b"__shared__" in body else ():
        width = cols if cols & (cols - 1) == 0 else cols - 1      # [32][33]: a padded 32-wide tile
        if 8 <= width <= 32:
            return BlockModel((width, max(1, min(rows, 1024 // width)), 1), False)
    return BlockModel((32, 8, 1), False)


def _shared_tiles(fn: Function, facts: FileFacts) -> list[tuple[int, int]]:
    """The 2-D `__shared__` tiles of `fn`, last declared first."""
    tiles = []
    for node in reversed(captures(fn.body).get("decl", [])):
        if b"__shared__" not in (node.text or b""):
            continue
        for d in node.children_by_field_id(FIELD.declarator):
            dims = []
            while d is not None and d.type == "array_declarator":
                size = d.child_by_field_id(FIELD.size)
                dims.append(const_eval(text(size), facts.constants) if size is not None else None)
                d = d.child_by_field_id(FIELD.declarator)
            if len(dims) == 2 and all(dims):
                tiles.append((dims[1], dims[0]))       # declared [rows][cols]
    return tiles


def run_function(fn: Function, functions: dict[str, Function], facts: FileFacts,
                 launched: dict[str, int] | None = None) -> Trace:
    """The SIMT trace of `fn`; `launched`: constant values its launch sites pass to integer
    parameters (otherwise a size parameter is a large generic value)."""
    return Interpreter(fn, functions, facts, block_model(fn, facts), launched).run()
