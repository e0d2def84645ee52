// Byte tile read down a column: each lane's row is 32 bytes (8 banks) long, so a warp's 32
// lanes fall into 4 banks, 8-way conflicts.
__global__ void column_max(const unsigned char* img, unsigned char* out, int width) {
    __shared__ unsigned char tile[32][32];
    int x = threadIdx.x;
    for (int r = 0; r < 32; ++r)
        tile[r][x] = img[(blockIdx.y * 32 + r) * width + blockIdx.x * 32 + x];
    __syncthreads();
    unsigned char best = 0;
    for (int c = 0; c < 32; ++c) {
        unsigned char v = tile[x][c];  // expect: bank-conflict
        best = v > best ? v : best;
    }
    out[blockIdx.y * width + blockIdx.x * 32 + x] = best;
}

void launch(const unsigned char* img, unsigned char* out, int width, int height) {
    column_max<<<dim3(width / 32, height / 32), 32>>>(img, out, width);
}
