"""Word intents (English and Chinese) → programs, and what a refusal says and underlines."""
from __future__ import annotations

import pytest

from dice_engine.intent import IntentError, parse_intent

SEED_ZH = ("请生成一个CUDA内核，计算两个1024x1024的FP32矩阵乘法，使用分块策略优化共享内存使用，"
           "针对计算能力8.0的GPU，优先考虑计算吞吐量")
SEED_ZH_NO_SHAPE = "实现一个矩阵乘法内核，使用共享内存优化"


def test_seed_prompt_chinese_gemm():
    p = parse_intent(SEED_ZH)
    assert repr(p.output) == "matmul(A:f32[1024, 1024], B:f32[1024, 1024])"
    assert p.options["arch"] == "sm_80"
    assert p.options["goal"] == "throughput"
    assert set(p.options["hints"].split(",")) == {"tiling", "shared_memory"}


def test_seed_prompt_without_shape_needs_an_explicit_default():
    with pytest.raises(IntentError) as info:
        parse_intent(SEED_ZH_NO_SHAPE, precision="fp16")
    e = info.value
    assert SEED_ZH_NO_SHAPE[e.start:e.end] == "矩阵乘法"
    assert "no shape given for the matrix multiplication" in e.message and "1024x1024" in e.message
    p = parse_intent(SEED_ZH_NO_SHAPE, precision="fp16", default_shape=(1024, 1024))
    assert repr(p.output) == "matmul(A:f16[1024, 1024], B:f16[1024, 1024])"
    assert p.output.dtype.name == "f16" and p.options["accumulate"] == "f32"


def test_precision_written_as_an_option_in_words():
    p = parse_intent(SEED_ZH_NO_SHAPE + " 1024x1024 precision=fp16")
    assert p.inputs["A"].dtype.name == "f16" and p.options["accumulate"] == "f32"


# (intent, expected output expression, expected options ⊇)
WORDS = [
    ("row-wise softmax of a 4096x1024 fp32 matrix, one warp per row",
     "softmax(x:f32[4096, 1024], dim=1)", {"hints": "warp_per_row"}),
    ("fp16 GEMM 4096x4096x1024 with bias and relu on an H100",
     "relu(add(matmul(A:f16[4096, 1024], B:f16[1024, 4096]), bias:f16[4096]))",
     {"arch": "sm_90", "gpu": "H100", "accumulate": "f32"}),
    ("batched matmul of 8x128x64 and 8x64x32 bf16 matrices",
     "matmul(A:bf16[8, 128, 64], B:bf16[8, 64, 32])", {}),
    ("batched matrix multiply, batch 4, two 256x256 half matrices",
     "matmul(A:f16[4, 256, 256], B:f16[4, 256, 256])", {}),
    ("column-wise sum of a 1000x333 float matrix", "sum(x:f32[1000, 333], dim=(0,), keepdim=False)", {}),
    ("sum of a 1000 x 1000 matrix", "sum(x:f32[1000, 1000], dim=(0, 1), keepdim=False)", {}),
    ("mean of each row of a 512x300 fp32 matrix, keepdim",
     "mean(x:f32[512, 300], dim=(1,), keepdim=True)", {}),
    ("对一个4096x1024的半精度矩阵做层归一化，eps=1e-6",
     "layer_norm(x:f16[4096, 1024], weight:f16[1024], bias:f16[1024], eps=1e-06)", {}),
    ("argmax along dim 1 of a 64x1000 fp32 tensor", "argmax(x:f32[64, 1000], dim=(1,), keepdim=False)", {}),
    ("argmin of each column of a 300x7 fp16 matrix", "argmin(x:f16[300, 7], dim=(0,), keepdim=False)", {}),
    ("前缀和，长度为1000000的int32向量", "cumsum(x:i32[1000000], dim=0)", {}),
    ("transpose a 1000x333 bf16 matrix", "permute(x:bf16[1000, 333], dims=(1, 0))", {}),
    ("max pooling 2x2 stride 2 on 8x64x56x56 fp16",
     "max_pool2d(x:f16[8, 64, 56, 56], kernel_size=(2, 2), padding=(0, 0), stride=(2, 2))", {}),
    ("avg pooling 3x3 stride 2 on a 1x16x15x15 fp32 tensor",
     "avg_pool2d(x:f32[1, 16, 15, 15], kernel_size=(3, 3), padding=(0, 0), stride=(2, 2))", {}),
    ("conv2d of a 8x3x32x32 input with 16 3x3 filters, padding 1",
     "conv2d(x:f32[8, 3, 32, 32], w:f32[16, 3, 3, 3], dilation=(1, 1), padding=(1, 1), stride=(1, 1))", {}),
    ("卷积：输入8x3x32x32，16个3x3卷积核，步长1，填充1，半精度",
     "conv2d(x:f16[8, 3, 32, 32], w:f16[16, 3, 3, 3], dilation=(1, 1), padding=(1, 1), stride=(1, 1))",
     {"accumulate": "f32"}),
    ("gelu activation of 1048576 elements in bf16, RTX 4090, fewer registers",
     "gelu(x:bf16[1048576], approximate='none')", {"arch": "sm_89", "goal": "registers"}),
    ("add two 1024x1024 fp32 tensors", "add(a:f32[1024, 1024], b:f32[1024, 1024])", {}),
    ("对两个[1024, 1024]的bf16矩阵逐元素相乘后做relu",
     "relu(mul(a:bf16[1024, 1024], b:bf16[1024, 1024]))", {}),
    ("在A100上计算1024x1024单精度矩阵的每行最大值", "max(x:f32[1024, 1024], dim=(1,), keepdim=False)",
     {"arch": "sm_80", "gpu": "A100"}),
    ("rms norm of 2048x4096 bf16 rows, latency", "rms_norm(x:bf16[2048, 4096], weight:bf16[4096], eps=None)",
     {"goal": "latency"}),
    ("log softmax over dim 0 of a 100x50 f64 tensor", "log_softmax(x:f64[100, 50], dim=0)", {}),
    ("矩阵乘法 M=512, N=256, K=128, bf16, 计算能力9.0", "matmul(A:bf16[512, 128], B:bf16[128, 256])",
     {"arch": "sm_90"}),
    ("relu on 4096x1024 then tanh", "tanh(relu(x:f32[4096, 1024]))", {}),
    ("tiled matmul 1024x1024 with tensor cores on sm_89", "matmul(A:f32[1024, 1024], B:f32[1024, 1024])",
     {"arch": "sm_89", "hints": "tiling,tensor_cores"}),
    ("sigmoid of a 333x777 double matrix on compute capability 7.5", "sigmoid(x:f64[333, 777])",
     {"arch": "sm_75"}),
    ("对4096x4096的矩阵按列求和，低延迟",
     "sum(x:f32[4096, 4096], dim=(0,), keepdim=False)", {"goal": "latency"}),
    # sizes written as "R by C", a tuple, rows and columns (either order), counts of typed elements
    ("sum each column of x (float32, 300 by 13)", "sum(x:f32[300, 13], dim=(0,), keepdim=False)", {}),
    ("mean of each row; x is fp32 with shape (33, 120)", "mean(x:f32[33, 120], dim=(1,), keepdim=False)", {}),
    ("for a float32 matrix with 160 columns and 25 rows, the max of every row",
     "max(x:f32[25, 160], dim=(1,), keepdim=False)", {}),
    ("求 x 每一列的和，x 为 120×30 的单精度矩阵", "sum(x:f32[120, 30], dim=(0,), keepdim=False)", {}),
    ("x 是 1000 个 float32 元素，逐元素计算 tanh", "tanh(x:f32[1000])", {}),
    ("sigmoid of 4096 fp16 values", "sigmoid(x:f16[4096])", {}),
    ("求一个 25 行 160 列矩阵每行的最大值", "max(x:f32[25, 160], dim=(1,), keepdim=False)", {}),
    # "multiply" between matrices that only chain is their product; a lone number is an operand
    ("multiply A (48x64) by B (64x32) then apply relu", "relu(matmul(A:f32[48, 64], B:f32[64, 32]))", {}),
    ("A（64×32）乘以 B（32×48）后接 sigmoid，float32", "sigmoid(matmul(A:f32[64, 32], B:f32[32, 48]))", {}),
    ("multiply a 1024x1024 fp32 matrix by 0.5", "mul(x:f32[1024, 1024], 0.5)", {}),
    ("对一个 64x64 的矩阵每个元素加上 2", "add(x:f32[64, 64], 2)", {}),
    ("add 2 tensors of 64x64", "add(a:f32[64, 64], b:f32[64, 64])", {}),   # a count, not an operand
    ("subtract 1.5 from each element of a 300 by 13 fp16 matrix", "sub(x:f16[300, 13], 1.5)", {}),
    ("a 64x64 matrix minus 2", "sub(x:f32[64, 64], 2)", {}),
    ("对一个 64x64 的矩阵每个元素减去 2", "sub(x:f32[64, 64], 2)", {}),
    # a count of elements with any element type between 个 and 元素
    ("对 1048576 个半精度元素先做 relu 再做 sigmoid", "sigmoid(relu(x:f16[1048576]))", {}),
    ("对 4096 个 bf16 元素求和", "sum(x:bf16[4096], dim=(0,), keepdim=False)", {}),
    # layer and RMS norms are learned (weight, and bias for layer norm) unless the words say not
    ("layer norm of 4096x768 without learned weights", "layer_norm(x:f32[4096, 768], eps=1e-05)", {}),
    ("层归一化，输入 8192 行 1024 列，bf16，不带权重", "layer_norm(x:bf16[8192, 1024], eps=1e-05)", {}),
    ("rms norm of 64x64 with no scale, eps=1e-6", "rms_norm(x:f32[64, 64], eps=1e-06)", {}),
    # named sizes in a row are the tensor's dims; a GEMM's one-letter M=, N=, K= and options are not
    ("对一个 batch=32, seq=512, hidden=768 的 bf16 张量做 RMSNorm",
     "rms_norm(x:bf16[32, 512, 768], weight:bf16[768], eps=None)", {}),
    ("softmax over the last dim, rows=4096, cols=1024", "softmax(x:f32[4096, 1024], dim=1)", {}),
    ("matmul M=128, N=256, K=64", "matmul(A:f32[128, 64], B:f32[64, 256])", {}),
    # the filter tensor's shape gives the output channels and the window
    ("convolve a [8, 3, 224, 224] input with a [64, 3, 7, 7] kernel, stride 2, padding 3",
     "conv2d(x:f32[8, 3, 224, 224], w:f32[64, 3, 7, 7], dilation=(1, 1), padding=(3, 3), stride=(2, 2))", {}),
    # a bias is one per output column of a product, or one per output channel of a convolution
    ("multiply a 100x50 bf16 matrix by a 50x20 bf16 matrix, then add a bias and apply relu",
     "relu(add(matmul(A:bf16[100, 50], B:bf16[50, 20]), bias:bf16[20]))", {}),
    ("2D convolution of a [2, 4, 9, 9] fp32 input with 8 3x3 filters and a bias",
     "conv2d(x:f32[2, 4, 9, 9], w:f32[8, 4, 3, 3], bias:f32[8], dilation=(1, 1), padding=(0, 0), "
     "stride=(1, 1))", {}),
    ("对形状为 [2, 3, 16, 16] 的 float32 输入做二维卷积，32 个 5x5 卷积核",
     "conv2d(x:f32[2, 3, 16, 16], w:f32[32, 3, 5, 5], dilation=(1, 1), padding=(0, 0), stride=(1, 1))", {}),
    ("对 [8, 256, 4096] 的 bf16 张量做 RMS 归一化，eps=1e-6",
     "rms_norm(x:bf16[8, 256, 4096], weight:bf16[4096], eps=1e-06)", {}),
    # "with weight and bias" names the layer norm's own parameters, not an epilogue
    ("row-wise layer norm of a 2048x768 fp16 matrix x with weight and bias, eps 1e-5",
     "layer_norm(x:f16[2048, 768], weight:f16[768], bias:f16[768], eps=1e-05)", {}),
    ("对形状为[8, 1000, 768]的半精度张量按行做层归一化，带权重和偏置，eps=1e-5",
     "layer_norm(x:f16[8, 1000, 768], weight:f16[768], bias:f16[768], eps=1e-05)", {}),
]


@pytest.mark.parametrize("text,expected,options", WORDS, ids=[t for t, _, _ in WORDS])
def test_words_program(text, expected, options):
    p = parse_intent(text)
    assert repr(p.output) == expected
    assert options.items() <= p.options.items()


def test_words_and_tensor_form_give_the_same_program():
    words = parse_intent("row-wise softmax of a 4096x1024 fp32 matrix")
    tensor = parse_intent("y = softmax(x, dim=1); x: f32[4096, 1024]")
    assert repr(words.output) == repr(tensor.output)
    assert words.inputs == tensor.inputs


@pytest.mark.parametrize("words, tensor", [
    # a group norm takes its group count from the words and is learned (nn.GroupNorm)
    ("group norm with 4 groups over a [2, 8, 5, 3] fp32 tensor, weight and bias, eps 1e-5",
     "y = group_norm(x, 4, weight, bias, eps=1e-5); x: f32[2, 8, 5, 3]; weight, bias: f32[8]"),
    ("对[8, 64, 10, 10]的张量做组归一化，分成8组",
     "y = group_norm(x, 8, weight, bias); x: f32[8, 64, 10, 10]; weight, bias: f32[64]"),
    ("logsumexp of each row of a 4096x1000 fp32 matrix", "y = logsumexp(x, dim=-1); x: f32[4096, 1000]"),
    ("logsumexp of a 30x40 matrix, column-wise, keepdim",
     "y = logsumexp(x, dim=-2, keepdim=True); x: f32[30, 40]"),
])
def test_words_build_what_the_tensor_form_builds(words, tensor):
    from_words, from_tensor = parse_intent(words), parse_intent(tensor)
    assert repr(from_words.output) == repr(from_tensor.output)
    assert from_words.inputs == from_tensor.inputs


WORD_ERRORS = [
    ("make it fast", "make it fast", "could not tell which operation"),
    ("softmax then sum of a 4x4 matrix", "sum", "two operations"),
    ("matmul of 4096x1024 and 512x64 fp32", "512x64", "do not multiply"),
    ("matmul of a 4096x1024 fp32 matrix", "4096x1024", "does not fix both operands"),
    ("softmax of a 64x64 fp16 matrix in fp32", "fp32", "two element types"),
    ("softmax of 64x64 on sm_80 and sm_90", "sm_90", "two different targets"),
    ("relu activation in fp16", "relu", "no shape given for the relu"),
    ("apply an activation to 1024x1024", "activation", "which activation?"),
    ("softmax over dim 2 of a 64x64 matrix", "dim 2", "out of range"),
    ("conv2d of 8x3x32x32 with 3x3 filters", "conv2d", "output channels"),
    ("convolve 8x3x32x32 with a 16x4x3x3 kernel", "16x4x3x3", "takes 4 input channels"),
    ("max pooling on 8x3x32x32", "max pooling", "no pooling window"),
    ("softmax of 64x64 with relu", "relu", "cannot be fused"),
    ("softmax of 64x64, goal=speed", "speed", "unknown goal"),
    ("batched matmul of 256x128 and 128x64", "batched matmul", "no batch size"),
    ("softmax of 64x64 and 32x32", "32x32", "two different shapes"),
    # arithmetic the words do not build is refused, never dropped
    ("sum of squares of a 64x64 matrix", "squares", "not understood in words"),
    ("softmax of a 64x64 matrix divided by 8", "divided", "not understood in words"),
    ("对 1024 个元素取对数", "对数", "not understood in words"),
    ("relu of a 64x64 matrix plus 3", "3", "a number as an operand"),
    ("subtract a 64x64 matrix from 2", "2", "a number as an operand"),     # 2 - x: not read
    ("mean squared error of two 30x40 tensors", "mean squared error", "mse_loss"),
    ("relu of a 64x64 matrix plus a bias", "bias", "a bias is added to a matrix product"),
    # an output size is not a window: adaptive pooling is refused, never read as one
    ("adaptive average pooling of a [32, 512, 13, 13] fp16 NCHW tensor down to a 7x7 output", "adaptive",
     "adaptive or global (output-sized) pooling"),
    ("对 [8, 64, 56, 56] 的张量做全局平均池化", "全局", "adaptive or global (output-sized) pooling"),
    ("group norm of a [2, 6, 5] tensor", "group norm", "no group count given"),
    ("group norm, 4 groups, [2, 6, 5] f32", "[2, 6, 5]", "num_groups=4 must divide the 6 channels"),
]


@pytest.mark.parametrize("text,underlined,message", WORD_ERRORS, ids=[t for t, _, _ in WORD_ERRORS])
def test_words_error_range(text, underlined, message):
    with pytest.raises(IntentError) as info:
        parse_intent(text)
    e = info.value
    assert text[e.start:e.end] == underlined
    assert message in e.message
