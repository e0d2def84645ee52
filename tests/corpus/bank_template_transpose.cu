// Templated tile transpose without padding: a column read of the tile is a 32-way conflict.
template <int TILE, int ROWS>
__global__ void transpose_tiled(const float* in, float* out, int width, int height) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];  // expect: bank-conflict
}

void launch(const float* in, float* out, int width, int height) {
    dim3 grid(width / 32, height / 32), block(32, 8);
    transpose_tiled<32, 8><<<grid, block>>>(in, out, width, height);
}
