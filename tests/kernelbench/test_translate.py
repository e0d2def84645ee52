"""Tracing, lowering and fusion, and the ModelNew file (no GPU: CPU torch and real nvcc)."""

from __future__ import annotations

import ast
import builtins
import os

import pytest
import torch

from dice_engine.compile import compile_cuda
from dice_engine.kernelbench import TaskError, Unmapped
from dice_engine.kernelbench.lower import lower
from dice_engine.kernelbench.task import load_task
from dice_engine.kernelbench.trace import trace_task

from .conftest import TASKS, load_module


def _lowered(stem: str):
    return lower(trace_task(load_task(TASKS / f"{stem}.py")))


def test_trace_names_parameters_inputs_and_forward_lines():
    traced = trace_task(load_task(TASKS / "conv_relu_pool.py"))
    kinds = {(p.kind, p.target) for p in traced.placeholders}
    assert kinds == {
        ("parameter", "conv.weight"),
        ("parameter", "conv.bias"),
        ("parameter", "bias"),
        ("input", "x"),
    }
    relu = next(n for n in traced.graph.nodes if "relu" in str(n.target))
    assert traced.source_line(traced.line_of(relu)) == "x = torch.relu(self.conv(x))"


def test_elementwise_chain_is_one_kernel_with_folded_attributes():
    lowered = _lowered("scaled_relu")
    assert len(lowered.plans) == 1
    plan = lowered.plans[0]
    assert [o.op for o in plan.operations()] == ["aten.leaky_relu", "aten.mul", "aten.add"]
    consts = {n.value for n in plan.expr.walk() if n.op == "const"}
    assert 1.5 in consts  # self.scale folded into the expression
    assert [b.name for b in plan.leaves()] == ["in_x", "p_offset"]


def test_linear_epilogue_fuses_and_softmax_gets_its_own_kernel():
    lowered = _lowered("linear_gelu")
    ops = [[o.op for o in p.operations()] for p in lowered.plans]
    assert ops == [["aten.linear", "aten.mul", "aten.gelu"], ["aten.softmax"]]
    gemm = lowered.plans[0].expr
    assert "matmul" in {n.op for n in gemm.walk()}
    # the weight is read transposed in place (a layout), not copied by a kernel of its own
    assert all(p.expr.op != "permute" for p in lowered.plans)


def test_dependent_reductions_are_split_in_order():
    lowered = _lowered("variance_rows")
    heavy = [n.op for p in lowered.plans for n in p.expr.walk() if n.op in ("mean", "sum")]
    assert heavy == ["mean", "sum"]
    first_out = lowered.plans[0].out.name
    assert first_out in {b.name for b in lowered.plans[1].leaves()}


def test_a_written_matmul_is_read_back_not_recomputed():
    # batch norm reads the GEMM's value three times (mean, variance, the normalization): the
    # GEMM is written once and every later kernel reads that buffer
    lowered = _lowered("gemm_batch_norm")
    with_matmul = [p for p in lowered.plans if any(n.op == "matmul" for n in p.expr.walk())]
    assert len(with_matmul) == 1
    written = with_matmul[0].out.name
    assert all(written in {leaf.name for leaf in p.leaves()} for p in lowered.plans[1:])


def test_flatten_is_a_view_of_the_pooled_buffer():
    lowered = _lowered("conv_relu_pool")
    (out,) = lowered.outputs
    assert out.shape == (4, 8 * 8 * 8)
    assert out.storage == lowered.plans[-1].out.name  # same storage, no copy kernel


def test_unmapped_operator_names_op_line_and_code():
    with pytest.raises(Unmapped) as e:
        _lowered("unmapped_lgamma")
    assert e.value.op == "aten.lgamma" and e.value.line == 11
    assert "return torch.lgamma(y)" in str(e.value)
    assert "\n" not in str(e.value)


def test_bad_task_files_are_one_line_errors(tmp_path):
    with pytest.raises(TaskError) as e:
        load_task(TASKS / "not_a_task.py")
    assert "defines no Model" in str(e.value) and "\n" not in str(e.value)
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nclass Model(torch.nn.Module)\n    pass\n")
    with pytest.raises(TaskError) as e:
        load_task(broken)
    assert "line 2: syntax error" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("stem", ["scaled_relu", "linear_gelu", "conv_relu_pool", "variance_rows"])
def test_model_new_has_the_tasks_seeded_weights(stem, translations):
    _, path = translations[stem]
    task = load_module(TASKS / f"{stem}.py", "task")
    new = load_module(path, "new")
    init = task.get_init_inputs()
    torch.manual_seed(7)
    ref = task.Model(*init)
    torch.manual_seed(7)
    model = new.ModelNew(*init)
    ref_state, new_state = ref.state_dict(), model.state_dict()
    assert list(ref_state) == list(new_state)
    assert all(torch.equal(ref_state[k], new_state[k]) for k in ref_state)


# What forward may call: allocation, pointers, the stream, the launchers, metadata views.
ALLOWED_CALLS = {
    "_library",
    "_ptr",
    "torch.empty",
    "ctypes.c_void_p",
    "torch.cuda.current_stream",
    "ValueError",
}


ALL_STEMS = ["scaled_relu", "linear_gelu", "conv_relu_pool", "variance_rows", "scalar_input"]


@pytest.mark.parametrize("stem", ALL_STEMS)
def test_forward_reads_only_names_it_has(stem, translations):
    """Every name forward loads is an argument, a local, or a global of the written module."""
    _, path = translations[stem]
    tree = ast.parse(path.read_text())
    module_names = set(load_module(path, "new").__dict__) | set(dir(builtins))
    forward = next(
        n
        for c in tree.body
        if isinstance(c, ast.ClassDef) and c.name == "ModelNew"
        for n in c.body
        if isinstance(n, ast.FunctionDef) and n.name == "forward"
    )
    known = {a.arg for a in forward.args.args} | module_names
    known |= {
        t.id
        for n in ast.walk(forward)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    loaded = {n.id for n in ast.walk(forward) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    assert loaded <= known, loaded - known


def test_python_scalar_argument_is_checked_not_ignored(translations):
    _, path = translations["scalar_input"]
    new = load_module(path, "new")
    model = new.ModelNew()
    a = torch.randn(64, 96)
    with pytest.raises(ValueError, match=r"generated for s=2.5, got 3.0"):
        model(a, 3.0)
    with pytest.raises(ValueError, match="A must be a CUDA tensor"):  # past the scalar check
        model(a, 2.5)


@pytest.mark.parametrize("stem", ALL_STEMS)
def test_forward_only_allocates_and_launches(stem, translations):
    translation, path = translations[stem]
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew")
    forward = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    launches = 0
    for call in (n for n in ast.walk(forward) if isinstance(n, ast.Call)):
        name = ast.unparse(call.func)
        if name.startswith("lib.") and name.endswith("_launch"):
            launches += 1
            assert ast.unparse(call.args[-1]) == "stream"  # on the current stream
        else:
            assert name in ALLOWED_CALLS or name.endswith((".data_ptr", ".view")), name
    assert launches == len(translation.kernels) >= 1


def test_model_new_cuda_compiles_for_sm90(translations):
    _, path = translations["linear_gelu"]
    new = load_module(path, "new")
    assert new.CUDA_ARCH in ("sm_90", "sm_90a")
    built = compile_cuda(new.CUDA_SOURCE, new.CUDA_ARCH, output="shared", cache=False)
    assert built.ok, built.log
    exported = built.artifact.read_bytes()
    for name in new.KERNELS:
        assert f"{name}_launch".encode() in exported


def test_model_new_refuses_cpu_tensors_with_one_line(translations):
    _, path = translations["scaled_relu"]
    new = load_module(path, "new")
    model = new.ModelNew(*new.get_init_inputs())
    with pytest.raises(ValueError, match="self.offset must be a CUDA tensor"):
        model(*new.get_inputs())


def test_model_new_refuses_other_shapes_with_one_line(translations):
    _, path = translations["scaled_relu"]
    new = load_module(path, "new")
    with pytest.raises(
        ValueError, match=r"generated for torch.float32 \[300, 257\], got torch.float32 \[3\]"
    ):
        new._ptr(torch.zeros(3), (300, 257), torch.float32, "x")


def test_model_new_without_nvcc_says_so(translations, tmp_path, monkeypatch):
    _, path = translations["scaled_relu"]
    new = load_module(path, "new")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "none"))
    monkeypatch.delenv("NVCC", raising=False)
    monkeypatch.setenv("DICE_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(RuntimeError, match="needs the CUDA toolkit's nvcc"):
        new._library()
    assert not os.listdir(tmp_path / "cache" / "kernelbench")


def test_refused_epilogue_is_cut_above_what_the_conv_kernel_takes(translations):
    translation, _ = translations["conv_relu_pool"]
    fused = [k.fused for k in translation.kernels]
    conv = next(f for f in fused if "aten.conv2d" in f)
    assert "aten.relu" in conv  # the ReLU stays in the convolution's kernel
    assert sum(f.count("aten.add") for f in fused) == 1  # the bias add is computed once
