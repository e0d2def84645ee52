// Four elements per thread: the index is scaled, still never compared with n.
__global__ void relu4(float* x, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int i = t * 4;
    float4 v = *reinterpret_cast<float4*>(&x[i]);  // expect: bounds
    v.x = fmaxf(v.x, 0.0f); v.y = fmaxf(v.y, 0.0f); v.z = fmaxf(v.z, 0.0f); v.w = fmaxf(v.w, 0.0f);
    *reinterpret_cast<float4*>(&x[i]) = v;
}

void launch_relu4(float* x, int n) {
    int threads = n / 4;
    relu4<<<(threads + 255) / 256, 256>>>(x, n);
}
