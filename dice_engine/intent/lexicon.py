"""The vocabulary of word intents (English and Chinese): operations, dtypes, GPUs, goals, hints.

Patterns run over the lower-cased intent. English words are fenced by `w()` so that they do not
match inside longer words; `\\b` cannot be used because CJK characters count as word characters,
and "针对A100的GPU" must still find A100.
"""
from __future__ import annotations


def w(pattern: str) -> str:
    """`pattern` as a whole word (no ASCII letter, digit or _ on either side)."""
    return rf"(?<![a-z0-9_])(?:{pattern})(?![a-z0-9_])"


# Operations, most specific first: an earlier match masks later ones ("log softmax" before
# "softmax", "矩阵乘法" before "乘法", "平均池化" before "平均").
OPERATIONS: list[tuple[str, str]] = [
    ("bmm", w(r"batched (?:matrix[ -]multiplications?|matrix[ -]multiply|matmul|gemm)|bmm")
     + r"|批量矩阵乘法?|批处理矩阵乘法?"),
    ("matmul", w(r"matrix[ -]multiplications?|matrix[ -]multiply|matrix product|matmul|gemm|sgemm|hgemm|mm")
     + r"|矩阵乘法|矩阵相乘|矩阵乘"),
    ("conv2d", w(r"conv2d|2d convolution|convolution|convolve[sd]?|conv") + r"|二维卷积|卷积"),
    ("max_pool2d", w(r"max[ _-]?pool(?:ing|2d)?") + r"|最大池化"),
    ("avg_pool2d", w(r"(?:avg|average|mean)[ _-]?pool(?:ing|2d)?") + r"|平均池化"),
    ("logsumexp", w(r"log[ _-]?sum[ _-]?exp") + r"|对数求和指数"),
    ("log_softmax", w(r"log[ _-]?softmax") + r"|对数softmax"),
    ("softmax", w("softmax")),
    ("instance_norm", w(r"instance[ _-]?norm(?:alization)?") + r"|实例归一化"),
    ("batch_norm", w(r"batch[ _-]?norm(?:alization)?") + r"|批归一化|批量归一化"),
    ("group_norm", w(r"group[ _-]?norm(?:alization)?") + r"|组归一化|分组归一化"),
    ("layer_norm", w(r"layer[ _-]?norm(?:alization)?") + r"|层归一化|层标准化"),
    ("rms_norm", w(r"rms[ _-]?norm(?:alization)?") + r"|均方根\s*归一化|rms\s*(?:归一化|标准化)"),
    ("cumprod", w(r"cumprod|cumulative product|prefix[ -]product") + r"|累积乘积|前缀积"),
    ("cumsum", w(r"cumsum|cumulative sum|prefix[ -]sum|inclusive scan|scan") + r"|前缀和|累加和|累积和"),
    ("argmax", w("argmax") + r"|最大值(?:的)?(?:索引|下标|位置)"),
    ("argmin", w("argmin") + r"|最小值(?:的)?(?:索引|下标|位置)"),
    ("transpose", w(r"transpose|transposition") + r"|转置"),
    ("bias", w(r"bias(?:[ -]add)?|add(?:ing)? (?:a )?bias") + r"|偏置"),
    ("add", w(r"elementwise add(?:ition)?|add(?:ition)?|plus") + r"|相加|加法|加上|再加"),
    ("sub", w(r"subtract(?:ion)?|minus") + r"|相减|减法|减去"),
    ("mul", w(r"elementwise (?:multiply|multiplication|product)|hadamard(?: product)?|multiply")
     + r"|逐元素乘法?|相乘|乘以"),
    ("sum", w(r"sum|summation|reduce[ _-]sum") + r"|求和|总和|归约求和|(?<=[行列素有])(?:的和|之和)"),
    ("mean", w(r"mean|average") + r"|平均值|均值|平均"),
    ("max", w(r"max|maximum") + r"|最大值"),
    ("min", w(r"min|minimum") + r"|最小值"),
    ("prod", w(r"prod|product") + r"|乘积|累乘"),
    ("leaky_relu", w(r"leaky[ _-]?relu")),
    ("relu", w("relu")),
    ("gelu", w("gelu")),
    ("silu", w(r"silu|swish")),
    ("sigmoid", w("sigmoid")),
    ("tanh", w("tanh")),
    ("rsqrt", w("rsqrt")),
    ("sqrt", w(r"sqrt|square root") + r"|平方根"),
    ("exp", w(r"exp|exponential") + r"|指数"),
    ("abs", w(r"abs|absolute value") + r"|绝对值"),
    ("activation", w("activation") + r"|激活"),
]

# Arithmetic the word parser does not build: read alone it would be dropped and the intent would
# silently mean something else ("sum of squares" is not a sum), so such an intent is refused.
UNREAD: list[tuple[str, str]] = [
    ("square", w(r"squares?|squared|squaring|cubes?|cubed|powers?|pow") + r"|平方|立方|幂"),
    ("logarithm", w(r"log|logs|logarithms?|ln") + r"|对数"),
    ("reciprocal", w(r"reciprocals?|inverse|invert") + r"|倒数"),
    ("negation", w(r"negat(?:e|ion|ive)") + r"|取反|相反数"),
    ("division", w(r"divid(?:e|ed|es|ing)|division|quotient") + r"|除以|相除"),
]
# A number standing alone: a scalar operand ("multiply ... by 0.5"), not a count ("2 tensors")
NUMBER = (r"(?<![a-z0-9_.\-])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![a-z0-9_.])"
          r"(?!\s*(?:tensors|matrices|arrays|vectors|inputs|operands|个|张|组))")

GEMM_LIKE = {"matmul", "bmm", "conv2d"}
ANCHORS = {"bmm", "matmul", "conv2d", "max_pool2d", "avg_pool2d", "log_softmax", "softmax", "layer_norm",
           "rms_norm", "instance_norm", "batch_norm", "group_norm", "cumsum", "cumprod", "argmax", "argmin",
           "transpose", "sum", "mean", "max", "min", "prod", "logsumexp"}
BINARY = {"add", "sub", "mul"}
ACTIVATIONS = {"leaky_relu", "relu", "gelu", "silu", "sigmoid", "tanh", "rsqrt", "sqrt", "exp", "abs"}

NAMES = {"bmm": "batched matrix multiplication", "matmul": "matrix multiplication", "conv2d": "convolution",
         "max_pool2d": "max pooling", "avg_pool2d": "average pooling", "layer_norm": "layer norm",
         "rms_norm": "RMS norm", "log_softmax": "log softmax", "cumsum": "prefix sum",
         "cumprod": "prefix product", "instance_norm": "instance norm", "batch_norm": "batch norm",
         "group_norm": "group norm", "logsumexp": "logsumexp"}

DTYPES: list[tuple[str, str]] = [
    ("bf16", w(r"bf16|bfloat16|bfloat")),
    ("f16", w(r"fp16|f16|float16|half(?: precision)?") + r"|半精度"),
    ("f64", w(r"fp64|f64|float64|double(?: precision)?") + r"|双精度"),
    ("f32", w(r"fp32|f32|float32|float|single(?: precision)?") + r"|单精度|浮点"),
    ("i64", w(r"int64|i64|long")),
    ("i32", w(r"int32|i32|int|integers?") + r"|整数|整型"),
]

ARCH_PATTERNS: list[tuple[str, str]] = [
    ("sm", w(r"sm_?(\d{1,2})(\d)[af]?|compute_(\d{1,2})(\d)[af]?")),
    ("cc", r"(?:compute capability|计算能力|cc)\s*(?:为|of|=|:|：)?\s*(\d{1,2})\.(\d)"),
    ("gpu", w(r"(?:nvidia\s*)?(?:rtx\s*pro\s*6000(?:\s*blackwell)?|"
              r"(?:geforce\s*)?rtx\s*(?:5090|4090|3090|2080\s*ti)|gb200|gh200|b200|b100|h100(?:\s*pcie)?|"
              r"h200|h800|a100|a10|a30|a40|l40s|l4|t4|5090|4090|3090)")),
    ("family", w(r"blackwell|hopper|ampere|ada(?: lovelace)?|turing")),
]
# "Blackwell" alone names the data-centre part (B200/GB200); RTX 50 cards are named by model.
FAMILIES = {"blackwell": "sm_100", "hopper": "sm_90", "ampere": "sm_80", "ada": "sm_89",
            "ada lovelace": "sm_89", "turing": "sm_75"}

GOALS: list[tuple[str, str]] = [
    ("registers", w(r"fewer registers|reduce registers|register pressure|minimi[sz]e registers|low register")
     + r"|减少寄存器|寄存器(?:压力|使用|数量|更少)"),
    ("latency", w(r"latency|low[ -]latency") + r"|延迟|时延"),
    ("throughput", w(r"throughput|tflops|bandwidth") + r"|吞吐"),
]

HINTS: list[tuple[str, str]] = [
    ("warp_per_row", w(r"(?:one )?warp[ -]per[ -]row")
     + r"|每行一个\s*warp|一个\s*warp\s*(?:处理|负责)?每?一?行"),
    ("block_per_row", w(r"(?:one )?block[ -]per[ -]row") + r"|每行一个(?:线程)?块"),
    ("tensor_cores", w(r"tensor[ -]cores?|wmma|mma") + r"|张量核心?"),
    ("tf32", w(r"tf32|tensor[ -]?float[ -]?32")),
    ("double_buffering", w(r"double[ -]buffer(?:ing|ed)?|pipelin(?:e|ed|ing)|cp\.async") + r"|双缓冲|流水线"),
    ("tiling", w(r"tiling|tiled|tiles?|blocking") + r"|分块|tile"),
    ("shared_memory", w(r"shared[ -]memory|smem") + r"|共享内存"),
    ("vectorized", w(r"vectori[sz]ed|vectori[sz]ation|float4|128-bit loads") + r"|向量化"),
]

# Reduction direction words → "last" (within each row), "first" (down each column), or a dim.
ROW_WISE = (w(r"row[ -]?wise|per[ -]row|each row|every row|along (?:the )?last (?:dim|dimension|axis)"
               r"|over columns") + r"|按行|每行|逐行|每一行")
COLUMN_WISE = (w(r"column[ -]?wise|per[ -]column|each column|every column|over rows")
               + r"|按列|每列|逐列|每一列")
EXPLICIT_DIM = (w(r"(?:dim|axis|dimension)\s*[= ]?\s*(-?\d)")
                + r"|(?:沿|在|按)?第\s*(-?\d)\s*(?:维|个维度|轴)|维度\s*(-?\d)")
KEEPDIM = w(r"keep[ _-]?dims?") + r"|保持维度|保留维度"
GROUPS = (w(r"(\d+)\s*groups|(?:num_)?groups\s*[=:]?\s*(\d+)")
          + r"|分成?\s*(\d+)\s*组|(\d+)\s*组")
# a layer or RMS norm without its learned scale (and shift), as F.layer_norm without weight
NO_AFFINE = (w(r"without (?:(?:any|the|a) )?(?:learn(?:ed|able) |affine )?"
               r"(?:weights?|scale|gamma|parameters|affine)"
               r"|no (?:learn(?:ed|able) )?(?:affine|weights?|scale|gamma|parameters)"
               r"|elementwise_affine\s*=\s*false|non[ -]?affine")
             + r"|不带(?:可学习的?)?(?:权重|参数|仿射)|无(?:可学习的?)?(?:权重|参数|仿射)|没有(?:权重|参数)")
