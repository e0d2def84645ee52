// 16-bit tile read down a column: a row is 64 bytes (16 banks), so two lanes' rows share
// every bank pair, a 16-way conflict.
__global__ void column_sum16(const short* in, int* out, int width) {
    __shared__ short tile[32][32];
    int x = threadIdx.x;
    for (int r = 0; r < 32; ++r)
        tile[r][x] = in[(blockIdx.x * 32 + r) * width + x];
    __syncthreads();
    int s = 0;
    for (int c = 0; c < 32; ++c) s += tile[x][c];  // expect: bank-conflict
    out[blockIdx.x * 32 + x] = s;
}

void launch(const short* in, int* out, int width, int rows) {
    column_sum16<<<rows / 32, 32>>>(in, out, width);
}
