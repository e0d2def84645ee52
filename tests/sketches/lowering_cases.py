"""Intents the general lowering is checked on (emulator: small shapes; nvcc: every case)."""

ALL = ("thread", "warp", "block")

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
