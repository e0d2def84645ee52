"""The benchmark suite: KernelBench level-1 operator families at sizes that fill an H100/H200
(every memory-bound case moves well over the 50-60 MB L2), one intent per case."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchCase:
    name: str
    family: str       # KernelBench level-1 family
    intent: str


def _case(name: str, family: str, intent: str) -> BenchCase:
    return BenchCase(name, family, intent)


SUITE: list[BenchCase] = [
    # matrix multiplication (KernelBench 1-4, 6-8, 16)
    _case("matmul_square_f32", "matmul", "C = A @ B; A: f32[4096, 4096]; B: f32[4096, 4096]"),
    _case("matmul_rect_f32", "matmul", "C = A @ B; A: f32[2048, 8192]; B: f32[8192, 2048]"),
    _case("matmul_batched_f32", "matmul", "C = A @ B; A: f32[32, 1024, 1024]; B: f32[32, 1024, 1024]"),
    _case("matmul_At_B_f32", "matmul", "C = A.T @ B; A: f32[4096, 2048]; B: f32[4096, 2048]"),
    _case("matvec_f32", "matmul", "y = A @ x; A: f32[8192, 8192]; x: f32[8192, 1]"),
    _case("matmul_square_f16", "matmul", "C = A @ B; A: f16[4096, 4096]; B: f16[4096, 4096]; accumulate=f32"),
    _case("matmul_square_bf16", "matmul", "C = A @ B; A: bf16[4096, 4096]; B: bf16[4096, 4096]"),
    _case("matmul_batched_f16", "matmul", "C = A @ B; A: f16[32, 1024, 1024]; B: f16[32, 1024, 1024]"),
    _case("matmul_rect_bf16", "matmul", "C = A @ B; A: bf16[8192, 2048]; B: bf16[2048, 4096]"),
    # activations (KernelBench 19-22, 26)
    _case("relu_f32", "activation", "y = relu(x); x: f32[4096, 8192]"),
    _case("leaky_relu_f32", "activation", "y = leaky_relu(x, negative_slope=0.01); x: f32[4096, 8192]"),
    _case("sigmoid_f32", "activation", "y = sigmoid(x); x: f32[4096, 8192]"),
    _case("tanh_f32", "activation", "y = tanh(x); x: f32[4096, 8192]"),
    _case("gelu_f32", "activation", "y = gelu(x); x: f32[4096, 8192]"),
    _case("gelu_bf16", "activation", "y = gelu(x); x: bf16[4096, 8192]"),
    _case("relu_f16", "activation", "y = relu(x); x: f16[4096, 8192]"),
    # softmax (KernelBench 23-24)
    _case("softmax_f32", "softmax", "y = softmax(x, dim=1); x: f32[4096, 8192]"),
    _case("log_softmax_f32", "softmax", "y = log_softmax(x, dim=1); x: f32[4096, 8192]"),
    _case("softmax_f16", "softmax", "y = softmax(x, dim=1); x: f16[4096, 8192]"),
    # normalization (KernelBench 36, 40)
    _case("layer_norm_f32", "norm",
          "y = layer_norm(x, [8192], w, b); x: f32[4096, 8192]; w: f32[8192]; b: f32[8192]"),
    _case("rms_norm_f32", "norm", "y = rms_norm(x, [8192], w); x: f32[4096, 8192]; w: f32[8192]"),
    _case("layer_norm_bf16", "norm", "y = layer_norm(x, [8192]); x: bf16[4096, 8192]"),
    # reductions (KernelBench 47-53)
    _case("sum_rows_f32", "reduction", "s = sum(x, dim=1); x: f32[8192, 8192]"),
    _case("sum_cols_f32", "reduction", "s = sum(x, dim=0); x: f32[8192, 8192]"),
    _case("mean_rows_f32", "reduction", "s = mean(x, dim=1); x: f32[8192, 8192]"),
    _case("max_rows_f32", "reduction", "s = max(x, dim=1); x: f32[8192, 8192]"),
    _case("argmax_rows_f32", "reduction", "i = argmax(x, dim=1); x: f32[8192, 8192]"),
    # scan (KernelBench 89)
    _case("cumsum_f32", "scan", "y = cumsum(x, dim=1); x: f32[4096, 8192]"),
    # transpose
    _case("transpose_f32", "transpose", "y = x.T; x: f32[8192, 8192]"),
    # convolution (KernelBench 54-87, standard 2-D)
    _case("conv2d_3x3_f32", "conv2d",
          "y = conv2d(x, w, padding=1); x: f32[16, 64, 64, 64]; w: f32[128, 64, 3, 3]"),
    # pooling (KernelBench 42, 46)
    _case("max_pool2d_f32", "pool", "y = max_pool2d(x, kernel_size=2); x: f32[32, 64, 128, 128]"),
    _case("avg_pool2d_f32", "pool",
          "y = avg_pool2d(x, kernel_size=3, stride=2, padding=1); x: f32[32, 64, 128, 128]"),
]
