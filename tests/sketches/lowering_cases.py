"""Intents the general lowering is checked on (emulator: small shapes; nvcc: every case)."""

ALL = ("thread", "warp", "block")


def lowering_point(space, **tokens) -> dict:
    """`tokens`, plus slices=0 (enough to fill the GPU) where a mean/variance (moments) stage
    gives the space that token."""
    return {**tokens, "slices": 0} if any(t.name == "slices" for t in space.tokens) else tokens

EMULATED_CASES = [
    ("y = softmax(x, dim=1); x: f32[5, 70]", ALL),
    ("y = log_softmax(x, dim=0); x: f16[40, 3]", ("warp",)),
    ("y = layer_norm(x, [4, 6], w, b); x: f32[3, 4, 6]; w: f32[4, 6]; b: f32[4, 6]", ("warp",)),
    ("y = x / sqrt(mean(x * x, dim=1, keepdim=True) + 1e-5); x: f32[2, 5, 3, 4]", ("thread",)),
    ("s = sum(x, dim=(0, 2)); x: f64[3, 4, 50]", ALL),
    ("i = argmax(x, dim=1); x: f32[4, 90, 3]", ALL),
    ("m = min(relu(x) + 1.0, dim=2, keepdim=True); x: bf16[2, 3, 65]", ("block",)),
    ("C = A @ B; A: f32[2, 3, 33, 40]; B: f32[40, 7]", ("warp", "thread")),
    ("y = relu(A @ B + 1.0) * 2.0; A: f32[9, 20]; B: f32[20, 11]", ("thread",)),
    ("y = x / sum(abs(x), dim=1, keepdim=True); x: f32[6, 80]", ("warp",)),
    ("y = sum(x, dim=0) * 0.5; x: f32[R, 7]; R=45", ("warp",)),
]

EMULATED_CASES += [
    ("y = conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2); "
     "x: f32[2, 4, 17]; w: f32[6, 2, 3]; b: f32[6]",
     ("thread",)),
    ("y = relu(conv2d(x, w, groups=4, stride=(2, 1), padding=1)); "
     "x: f32[1, 4, 7, 6]; w: f32[4, 1, 3, 3]", ("thread",)),
    ("y = conv3d(x, w, padding=(1, 0, 1)); x: f32[1, 3, 4, 4, 3]; w: f32[2, 3, 3, 2, 3]", ("warp",)),
    ("y = conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2, dilation=2); "
     "x: f32[1, 4, 3, 4]; w: f32[4, 3, 3, 2]", ("thread",)),
    ("y = max_pool1d(x, 4, stride=2, padding=2, dilation=3, ceil_mode=True); x: f32[2, 3, 31]", ("thread",)),
    ("y = avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False); "
     "x: f32[1, 2, 6, 5, 4]",
     ("thread",)),
    ("y = torch.cumsum(x.flip(1), dim=1).flip(1); x: f32[3, 40]", ("thread", "warp")),
    ("y = cumprod(x * 0.5 + 1.0, dim=0); x: f64[9, 5]", ("thread", "warp")),
    ("y = cumsum(x * m, dim=1) * 2.0; x: f32[3, 70]; m: bool[3, 70]", ("thread", "warp")),
    ("y = group_norm(x, 2, w, b); x: f32[2, 6, 3, 4]; w: f32[6]; b: f32[6]", ("warp",)),
    ("y = batch_norm(x, None, None, training=True); x: f32[4, 3, 5, 2]", ("block",)),
    # per column over the rows (a thread per column), and the variance after the mean in turn
    ("y = batch_norm(x, w, b, training=True); x: f32[40, 70]; w, b: f32[70]", ("warp",)),
    ("y = (x - max(x, dim=0, keepdim=True)) * 2.0; x: f64[7, 3, 5]", ("thread",)),   # groups in registers
    ("y = x / sum(x * x, dim=0, keepdim=True); x: f32[100, 6]", ("warp",)),   # past 64: re-read per pass
    ("y = cross_entropy(x, t); x: f32[6, 50]; t: i64[6]", ("warp",)),
    # a mean over the rows ignore_index keeps: two scalar totals of one domain in one plan
    ("y = sum(a) / sum(t != -100); a: f32[300]; t: i64[300]", ("thread", "block")),
    ("y = triu(A @ B); A: f32[6, 5]; B: f32[5, 6]", ("thread",)),
    ("y = scaled_dot_product_attention(q, k, v); q: f32[1, 2, 5, 4]; k: f32[1, 2, 6, 4]; v: f32[1, 2, 6, 3]",
     ("thread",)),
]

EMULATED_CASES += [   # long domains over few outputs: the split (two-kernel) reduction
    ("s = sum(x); x: f32[20000]", ("split",)),
    ("i = argmax(x, dim=1); x: f32[2, 9000]", ("split",)),
    ("m = mean(x, dim=(0, 2)); x: f64[40, 2, 300]", ("split",)),
]
