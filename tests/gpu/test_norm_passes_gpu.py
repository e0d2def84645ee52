"""Batch norm (training), group norm and instance norm after a conv/GEMM, translated by
`dice kernelbench` (one moments kernel for the statistics, one normalize kernel; group norm
folds its statistics into a scale and shift per channel between them), run on the GPU
beside PyTorch: the ModelNew output is compared with the float64 model, and must be no further
from it than PyTorch's own float32 result (with a small margin); KernelBench's protocol must pass.
Shapes are large enough for the sliced statistics (a merge kernel) and both layouts. And the
moments kernel alone at KernelBench sizes (1e6+ elements per statistic), verified by the runner
against the float64 reference and timed beside torch.var_mean. Skips without a GPU."""

from __future__ import annotations

import importlib.util
import shutil

import pytest
import torch

from dice_engine.arch import ARCHS
from dice_engine.ir.dtypes import F32
from dice_engine.ir.graph import Program, TensorDecl
from dice_engine.ir.ops import input_tensor, make
from dice_engine.ir.patterns import classify
from dice_engine.kernelbench import translate
from dice_engine.lowering import GeneralLowering

pytestmark = pytest.mark.gpu

HEAD = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
TASKS = {
    "conv_bn": HEAD + """\
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3)
        self.bn = nn.BatchNorm2d(16)

    def forward(self, x):
        return self.bn(self.conv(x)) * 2.0


def get_inputs():
    return [torch.randn(32, 3, 130, 130)]
""",
    "gemm_bn": HEAD + """\
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(512, 1024)
        self.bn = nn.BatchNorm1d(1024)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x)))


def get_inputs():
    return [torch.randn(4096, 512)]
""",
    "conv_gn": HEAD + """\
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 64, 3)
        self.gn = nn.GroupNorm(8, 64)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return torch.tanh(self.gn(self.conv(x)))


def get_inputs():
    return [torch.randn(32, 16, 66, 66)]
""",
    "conv_in": HEAD + """\
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 32, 3)
        self.norm = nn.InstanceNorm2d(32)

    def forward(self, x):
        return self.norm(self.conv(x)) / 2.0


def get_inputs():
    return [torch.randn(16, 8, 130, 130)]
""",
}
FOOT = "\n\ndef get_init_inputs():\n    return []\n"


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not torch.cuda.is_available() or shutil.which("nvcc") is None,
                    reason="needs torch with a CUDA GPU and nvcc")
@pytest.mark.parametrize("name", list(TASKS))
def test_normalizations_match_pytorch_on_the_gpu(name, tmp_path) -> None:
    from dice_engine.kernelbench.evaluate import evaluate

    task = tmp_path / f"{name}.py"
    task.write_text(TASKS[name] + FOOT)
    translation = translate(task, arch="sm_90", budget=4)
    # group norm adds two small kernels: its scale and shift per (sample, channel)
    assert len(translation.kernels) == (5 if name == "conv_gn" else 3), translation.report()
    assert "moments" in translation.kernels[1].name
    new = tmp_path / f"{name}_dice.py"
    new.write_text(translation.text)
    module = _load(new)
    torch.manual_seed(0)
    model = module.Model().cuda()
    torch.manual_seed(0)
    dice = module.ModelNew().cuda()
    torch.manual_seed(1)
    inputs = [x.cuda() for x in module.get_inputs()]
    with torch.no_grad():
        got = dice(*inputs).double()
        want = model.double()(*[x.double() for x in inputs])
        torch32 = model.float()(*inputs).double()
    dice_error = (got - want).abs().max().item()
    torch_error = (torch32 - want).abs().max().item()
    print(f"{name}: max |error| vs float64: DICE {dice_error:.3e}, PyTorch float32 {torch_error:.3e}")
    assert dice_error <= max(2.0 * torch_error, 1e-5), (dice_error, torch_error)
    result = evaluate(str(task), str(new), trials=20)
    print(f"{name}: KernelBench protocol {result}")
    assert result["correct"] is True, result["message"]


@pytest.mark.parametrize("shape, dims", [
    ((128, 64, 126, 126), (0, 2, 3)),    # L2 73's batch norm: 2e6 per channel, block layout, sliced
    ((16384, 4096), (0,)),               # L2 41's batch norm after a GEMM: thread layout, sliced
    ((128, 128, 126, 126), (2, 3)),      # L2 17's instance norm: a block per (n, c)
])
def test_moments_are_verified_and_timed_beside_torch(runner, shape, dims) -> None:
    x = input_tensor("x", F32, shape)
    problem = classify(Program({"x": TensorDecl("x", F32, shape)}, "y", make("moments", [x], dim=dims)))
    sketch = GeneralLowering()
    point = sketch.default_point(problem, ARCHS["sm_90"])
    report = runner.evaluate(sketch.render(problem, ARCHS["sm_90"], point, "stats"), problem, "sm_90")
    print(f"moments {list(shape)} over {list(dims)} {point}: DICE {report.time_us} us, "
          f"torch.var_mean {report.reference_time_us} us")
    assert report.verdict == "ok", report.detail
