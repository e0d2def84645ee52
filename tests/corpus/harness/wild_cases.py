"""Hand-written dynamic checks for the held-out corpus (tests/corpus_wild), in the formats of
overflow_launch.py (`Launch`) and precision_numeric.py (`Check`): the overflow kernels run past
2^31 elements, the low-precision accumulators against a float32-accumulating twin.

Kept apart from the project corpus's tables because file names are only unique per corpus.
"""
from __future__ import annotations

from overflow_launch import Buffer, Launch
from precision_numeric import Check, block_total_twin

LAUNCHES: dict[str, Launch] = {
    "tensor4d_bias_relu.cu": Launch(
        (Buffer("act", "float", "(size_t)kBatch * kChannels * kHeight * kWidth"),
         Buffer("bias", "float", "kChannels")),
        "dim3(kWidth / 256, kHeight, kBatch * kChannels)", "dim3(256)",
        "act, bias, kBatch, kChannels, kHeight, kWidth", "act",
        "init_act(k) + init_bias((k >> 20) & 255) > 0.0f ? init_act(k) + init_bias((k >> 20) & 255) : 0.0f"),
    "pairwise_distance_host_sizes.cu": Launch(      # dim = 1: one exactly rounded product per element
        (Buffer("queries", "float", "(size_t)NUM_QUERIES * FEATURE_DIM"),
         Buffer("refs_t", "float", "(size_t)FEATURE_DIM * NUM_REFS"),
         Buffer("dist", "float", "(size_t)NUM_QUERIES * NUM_REFS", poisoned=True)),
        "dim3(NUM_REFS / 32, NUM_QUERIES / 8)", "dim3(32, 8)",
        "queries, refs_t, dist, NUM_QUERIES, NUM_REFS, 1", "dist",
        "(init_queries(k / NUM_REFS) - init_refs_t(k % NUM_REFS))"
        " * (init_queries(k / NUM_REFS) - init_refs_t(k % NUM_REFS))"),
    # 4 bytes past 6 GiB: the last element, sampled past the wrap, is a lower-case letter under the
    # fill hash, so an element the wrapped loop never visits shows
    "log_upcase_grid_stride.cu": Launch(
        (Buffer("buf", "unsigned char", "kLogBytes + 4"),),
        "dim3(132 * 8)", "dim3(256)", "buf, kLogBytes + 4", "buf",
        "init_buf(k) >= 'a' && init_buf(k) <= 'z' ? (unsigned char)(init_buf(k) - 32) : init_buf(k)"),
    "batched_gemm_naive.cu": Launch(                # k = 0: every output is 0, A and B are not read
        (Buffer("A", "float", "1024"), Buffer("B", "float", "1024"),
         Buffer("C", "float", "(size_t)BATCH_COUNT * MAT_M * MAT_N", poisoned=True)),
        "dim3(MAT_N / 32, MAT_M / 8, BATCH_COUNT)", "dim3(32, 8)", "A, B, C, MAT_M, MAT_N, 0", "C", "0.0f"),
    "embedding_weight_decay.cu": Launch(
        (Buffer("table", "float", "(size_t)kVocab * kEmbedDim"),),
        "dim3(kEmbedDim / 256, 4096)", "dim3(256)", "table, kVocab, kEmbedDim, 0.5f", "table",
        "init_table(k) * 0.5f"),
}

_HALF_DOT_PARTIALS = Check(
    fixed="""
__global__ void dot_fp16_partial_fixed(const __half* a, const __half* b, __half* partial, int n) {
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc = fmaf(__half2float(a[i]), __half2float(b[i]), acc);
    partial[blockIdx.x * blockDim.x + threadIdx.x] = __float2half(acc);
}""",
    body="""
    const int n = 1 << 24, blocks = 80, threads = 256, lanes = blocks * threads;
    std::vector<__half> a(n), b(n);
    for (int i = 0; i < n; ++i) { a[i] = __float2half(uniform()); b[i] = __float2half(uniform()); }
    __half *d_a, *d_b, *d_out, *d_out_fixed;
    cudaMalloc(&d_a, n * sizeof(__half));
    cudaMalloc(&d_b, n * sizeof(__half));
    cudaMalloc(&d_out, lanes * sizeof(__half));
    cudaMalloc(&d_out_fixed, lanes * sizeof(__half));
    cudaMemcpy(d_a, a.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, b.data(), n * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0xff, lanes * sizeof(__half));                     // poison: NaN
    cudaMemset(d_out_fixed, 0xff, lanes * sizeof(__half));
    dot_fp16_partial<<<blocks, threads>>>(d_a, d_b, d_out, n);
    dot_fp16_partial_fixed<<<blocks, threads>>>(d_a, d_b, d_out_fixed, n);
    check_launches();
    std::vector<__half> out(lanes), out_fixed(lanes);
    cudaMemcpy(out.data(), d_out, lanes * sizeof(__half), cudaMemcpyDeviceToHost);
    cudaMemcpy(out_fixed.data(), d_out_fixed, lanes * sizeof(__half), cudaMemcpyDeviceToHost);
    for (int t = 0; t < lanes; ++t) {
        double want = 0;
        for (int i = t; i < n; i += lanes) want += (double)__half2float(a[i]) * (double)__half2float(b[i]);
        err_kernel = std::max(err_kernel, relative(__half2float(out[t]), want));
        err_fixed = std::max(err_fixed, relative(__half2float(out_fixed[t]), want));
    }
""")

_BF16_ROW_MEANS = Check(
    fixed="""
__global__ void row_mean_bf16_fixed(const __nv_bfloat16* x, float* mean, int cols) {
    __shared__ float warp_sums[8];
    const __nv_bfloat16* row = x + (size_t)blockIdx.x * cols;
    float v = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) v += __bfloat162float(row[c]);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0.0f;
        for (int o = 4; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) mean[blockIdx.x] = v / cols;
    }
}""",
    body="""
    const int rows = 64, cols = 1 << 16;
    std::vector<__nv_bfloat16> x((size_t)rows * cols);
    for (auto& v : x) v = __float2bfloat16(uniform());
    __nv_bfloat16* d_x; float *d_mean, *d_mean_fixed;
    cudaMalloc(&d_x, x.size() * sizeof(__nv_bfloat16));
    cudaMalloc(&d_mean, rows * sizeof(float));
    cudaMalloc(&d_mean_fixed, rows * sizeof(float));
    cudaMemcpy(d_x, x.data(), x.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice);
    cudaMemset(d_mean, 0xff, rows * sizeof(float));                      // poison: NaN
    cudaMemset(d_mean_fixed, 0xff, rows * sizeof(float));
    row_mean_bf16<<<rows, 256>>>(d_x, d_mean, cols);
    row_mean_bf16_fixed<<<rows, 256>>>(d_x, d_mean_fixed, cols);
    check_launches();
    std::vector<float> mean(rows), mean_fixed(rows);
    cudaMemcpy(mean.data(), d_mean, rows * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(mean_fixed.data(), d_mean_fixed, rows * sizeof(float), cudaMemcpyDeviceToHost);
    for (int r = 0; r < rows; ++r) {
        double want = 0;
        for (int c = 0; c < cols; ++c) want += (double)__bfloat162float(x[(size_t)r * cols + c]);
        want /= cols;
        err_kernel = std::max(err_kernel, relative(mean[r], want));
        err_fixed = std::max(err_fixed, relative(mean_fixed[r], want));
    }
""")

_TENSOR_SUM = Check(   # 2^28 values in [0, 1): the one-float total stalls near 2^25
    fixed=block_total_twin("tensor_sum_fixed", "const float* a", "a[i]"),
    body="""
    const size_t n = (size_t)1 << 28;
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = uniform();
    float *d_x, *d_out;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_out, 2 * sizeof(float));
    cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0, 2 * sizeof(float));
    tensor_sum<<<2048, 256>>>(d_x, d_out, n);
    tensor_sum_fixed<<<1024, 256>>>(d_x, d_out + 1, (long long)n);
    check_launches();
    float out[2];
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    double want = 0;
    for (size_t i = 0; i < n; ++i) want += (double)x[i];
    err_kernel = relative(out[0], want);
    err_fixed = relative(out[1], want);
""")

CHECKS: dict[str, Check] = {
    "activation_total_atomic.cu": _TENSOR_SUM,
    "dot_fp16_hfma.cu": _HALF_DOT_PARTIALS,
    "row_mean_bf16.cu": _BF16_ROW_MEANS,
}
