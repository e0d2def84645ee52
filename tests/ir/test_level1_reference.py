"""The new operators' float64 meaning checked against torch on the CPU: each intent is parsed,
evaluated by the reference evaluator, and compared with the same computation written in torch
(in float64) on the same random inputs. Plus the exact-range errors of bad arguments."""
from __future__ import annotations

import numpy as np
import pytest

from dice_engine.intent import IntentError, parse_intent
from dice_engine.ir import reference

torch = pytest.importorskip("torch")
F = torch.nn.functional

CASES = [
    ("y = conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2); "
     "x: f32[2, 4, 17]; w: f32[6, 2, 3]; b: f32[6]",
     lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2)),
    ("y = conv3d(x, w, padding=(1, 0, 1)); x: f32[1, 3, 6, 5, 4]; w: f32[4, 3, 3, 2, 3]",
     lambda x, w: F.conv3d(x, w, padding=(1, 0, 1))),
    ("y = conv2d(x, w, groups=4, stride=(2, 1)); x: f32[2, 4, 9, 8]; w: f32[4, 1, 3, 3]",
     lambda x, w: F.conv2d(x, w, groups=4, stride=(2, 1))),
    ("y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2, dilation=2); "
     "x: f32[2, 4, 5, 6]; w: f32[4, 3, 3, 2]",
     lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2, dilation=2)),
    ("y = conv_transpose1d(x, w, b, stride=3); x: f32[2, 3, 7]; w: f32[3, 5, 4]; b: f32[5]",
     lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3)),
    ("y = conv_transpose3d(x, w, stride=(2, 1, 2), padding=1); x: f32[1, 2, 4, 3, 4]; w: f32[2, 3, 3, 3, 3]",
     lambda x, w: F.conv_transpose3d(x, w, stride=(2, 1, 2), padding=1)),
    ("y = max_pool1d(x, 4, stride=2, padding=2, dilation=3, ceil_mode=True); x: f32[2, 3, 31]",
     lambda x: F.max_pool1d(x, 4, stride=2, padding=2, dilation=3, ceil_mode=True)),
    ("y = max_pool3d(x, 3, stride=2, padding=1); x: f32[2, 2, 7, 8, 9]",
     lambda x: F.max_pool3d(x, 3, stride=2, padding=1)),
    ("y = avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False); "
     "x: f32[1, 2, 8, 7, 6]",
     lambda x: F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("y = avg_pool1d(x, 5, stride=3, padding=2); x: f32[4, 3, 20]",
     lambda x: F.avg_pool1d(x, 5, stride=3, padding=2)),
    ("y = cumprod(x, dim=1); x: f32[3, 9]", lambda x: torch.cumprod(x, dim=1)),
    ("y = torch.cumsum(x.flip(1), dim=1).flip(1); "
     "x: f32[3, 9]", lambda x: torch.cumsum(x.flip(1), 1).flip(1)),
    ("y = triu(A @ B); A: f32[6, 5]; B: f32[5, 6]", lambda a, b: torch.triu(a @ b)),
    ("y = tril(A, -1) @ B; A: f32[6, 6]; B: f32[6, 4]", lambda a, b: torch.tril(a, -1) @ b),
    ("y = diag(a) @ B; a: f32[5]; B: f32[5, 3]", lambda a, b: torch.diag(a) @ b),
    ("y = A @ B; A: f32[2, 3, 4, 5]; B: f32[5, 6]", lambda a, b: a @ b),
    ("y = group_norm(x, 2, w, b, eps=1e-3); x: f32[2, 6, 3, 4]; w: f32[6]; b: f32[6]",
     lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3)),
    ("y = instance_norm(x); x: f32[2, 3, 5, 4]", lambda x: F.instance_norm(x)),
    ("y = batch_norm(x, None, None, training=True); x: f32[4, 3, 5, 2]",
     lambda x: F.batch_norm(x, None, None, training=True)),
    ("y = layer_norm(x, [5, 4]); x: f32[3, 2, 5, 4]", lambda x: F.layer_norm(x, [5, 4])),
    ("y = F.normalize(x, p=1.0, dim=1); x: f32[4, 7]", lambda x: F.normalize(x, p=1.0, dim=1)),
    ("y = F.normalize(x); x: f32[4, 7, 3]", lambda x: F.normalize(x)),
    ("y = x / torch.norm(x, p='fro'); x: f32[4, 7]", lambda x: x / torch.norm(x, p="fro")),
    ("y = x / sqrt(mean(x ** 2, dim=1, keepdim=True) + 1e-5); x: f32[2, 6, 3]",
     lambda x: x / torch.sqrt((x ** 2).mean(dim=1, keepdim=True) + 1e-5)),
    ("y = cross_entropy(x, t); x: f32[6, 5]; t: i64[6]", lambda x, t: F.cross_entropy(x, t)),
    ("y = nll_loss(log_softmax(x, dim=1), t, reduction='sum'); x: f32[6, 5]; t: i64[6]",
     lambda x, t: F.nll_loss(F.log_softmax(x, dim=1), t, reduction="sum")),
    ("y = kl_div(log(p), q, reduction='batchmean'); p: f32[4, 6]; q: f32[4, 6]",
     lambda p, q: F.kl_div(torch.log(p), q, reduction="batchmean")),
    ("y = smooth_l1_loss(a, b, beta=0.5); a: f32[5, 4]; b: f32[5, 4]",
     lambda a, b: F.smooth_l1_loss(a, b, beta=0.5)),
    ("y = huber_loss(a, b, delta=0.7); "
     "a: f32[5, 4]; b: f32[5, 4]", lambda a, b: F.huber_loss(a, b, delta=0.7)),
    ("y = mean(1 - cosine_similarity(a, b, dim=1)); a: f32[5, 8]; b: f32[5, 8]",
     lambda a, b: torch.mean(1 - F.cosine_similarity(a, b, dim=1))),
    ("y = triplet_margin_loss(a, p, n, margin=0.5); a: f32[4, 6]; p: f32[4, 6]; n: f32[4, 6]",
     lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5)),
    ("y = mean(clamp(1 - p * t, min=0)); "
     "p: f32[8]; t: f32[8]", lambda p, t: torch.mean(torch.clamp(1 - p * t, min=0))),
    ("y = mse_loss(a, b); a: f32[3, 4]; b: f32[3, 4]", lambda a, b: F.mse_loss(a, b)),
    ("y = scaled_dot_product_attention(q, k, v); q: f32[2, 2, 5, 4]; k: f32[2, 2, 6, 4]; v: f32[2, 2, 6, 3]",
     lambda q, k, v: F.scaled_dot_product_attention(q, k, v)),
    ("y = softplus(x, beta=2.0, threshold=1.0); "
     "x: f32[40]", lambda x: F.softplus(x, beta=2.0, threshold=1.0)),
    ("y = elu(x, alpha=0.7) + selu(x) + softsign(x) + hardsigmoid(x) + hardtanh(x, -0.5, 0.5); x: f32[40]",
     lambda x: F.elu(x, 0.7) + F.selu(x) + F.softsign(x) + F.hardsigmoid(x) + F.hardtanh(x, -0.5, 0.5)),
    ("y = x.unsqueeze(1) * x.reshape(1, 3, 2); x: f32[3, 2]", lambda x: x.unsqueeze(1) * x.reshape(1, 3, 2)),
    ("y = mish(x) + hardswish(x) + relu6(4 * x); x: f32[40]",
     lambda x: F.mish(x) + F.hardswish(x) + F.relu6(4 * x)),
    ("y = var(x, dim=1, unbiased=False) + std(x, dim=1); x: f32[5, 33]",
     lambda x: torch.var(x, dim=1, unbiased=False) + torch.std(x, dim=1)),
    ("y = var(x, dim=(0, 2), keepdim=True, correction=2); x: f32[4, 3, 6]",
     lambda x: torch.var(x, dim=(0, 2), keepdim=True, correction=2)),
    ("y = logsumexp(x, dim=(0, 2), keepdim=True) + sum(logsumexp(x, 1)); x: f32[4, 3, 6]",
     lambda x: torch.logsumexp(x, (0, 2), keepdim=True) + torch.logsumexp(x, 1).sum()),
    # vectors in products, as torch.matmul takes them
    ("y = 0.5 * (A @ v) + c; A: f32[6, 5]; v: f32[5]; c: f32[6]", lambda A, v, c: 0.5 * (A @ v) + c),
    ("y = v @ A; A: f32[5, 6]; v: f32[5]", lambda A, v: v @ A),
    ("y = matmul(x, v); x: f32[3, 4, 5]; v: f32[5]", lambda x, v: torch.matmul(x, v)),
    ("y = dot(a, b) + sum(mv(A, a)); a: f32[7]; b: f32[7]; A: f32[3, 7]",
     lambda a, b, A: torch.dot(a, b) + torch.mv(A, a).sum()),
]


def _inputs(program, rng) -> dict[str, np.ndarray]:
    out = {}
    for name, decl in program.inputs.items():
        shape = tuple(int(d) for d in decl.shape)
        if decl.dtype.is_float:
            values = rng.standard_normal(shape)
            if "kl_div" in program.text:
                values = rng.dirichlet(np.ones(shape[-1]), shape[:-1])
            out[name] = reference.round_to(values, decl.dtype)
        else:
            out[name] = rng.integers(0, 5, shape).astype(np.int64)
    return out


@pytest.mark.parametrize("intent, torch_fn", CASES, ids=[c[0][:50] for c in CASES])
def test_reference_agrees_with_torch(intent: str, torch_fn) -> None:
    program = parse_intent(intent)
    inputs = _inputs(program, np.random.default_rng(7))
    got = reference.evaluate(program, inputs).astype(np.float64)
    args = [torch.from_numpy(np.asarray(v, dtype=np.float64 if v.dtype.kind == "f" else np.int64))
            for v in inputs.values()]
    want = torch_fn(*args).double().numpy()
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5), float(np.abs(got - want).max())


@pytest.mark.parametrize("intent, message", [
    ("y = conv2d(x, w, groups=3); x: f32[2, 8, 5, 5]; w: f32[8, 2, 3, 3]", "groups=3 does not divide the 8"),
    ("y = conv1d(x, w); "
     "x: f32[2, 3, 4]; w: f32[4, 3, 7]", "padded by 0 on each side is 4, the kernel spans 7"),
    ("y = max_pool2d(x, 3, padding=2); x: f32[1, 1, 8, 8]", "at most half the kernel size 3 (0..1)"),
    ("y = group_norm(x, 3); x: f32[2, 8, 5]", "num_groups=3 must divide the 8 channels"),
    ("y = a @ b; a: f32[5]; b: f32[6]", "a dot product needs vectors of one length, got 5 and 6"),
    ("y = A @ v; A: f32[4, 5]; v: f32[6]", "inner dimensions differ"),
    ("y = conv_transpose1d(x, w, stride=2, output_padding=2); x: f32[1, 2, 5]; w: f32[2, 2, 3]",
     "output_padding 2 must be smaller than stride or dilation (max 1)"),
    ("y = cross_entropy(x, t); x: f32[4, 5]; t: f32[4]", "target must be an integer tensor of shape [4]"),
    ("y = avg_pool1d(x, 2, dilation=2); x: f32[1, 1, 8]", "has no argument 'dilation'"),
])
def test_bad_arguments_name_the_problem(intent: str, message: str) -> None:
    with pytest.raises(IntentError) as info:
        parse_intent(intent)
    assert message in info.value.message
