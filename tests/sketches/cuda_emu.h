// A CPU stand-in for the CUDA subset the transpose/scan/conv/pool sketches emit, so their
// kernels can be run and checked against the reference without a GPU.
//
// Every thread of a block is an OS thread; blocks run one after another, so a kernel's
// `__shared__` arrays become function statics shared by exactly one block at a time.
// __syncthreads is a block-wide std::barrier, warp shuffles exchange through per-warp slots
// between two warp-wide barriers. A thread that returns drops out of both barriers (so a
// divergent barrier does not hang the emulation; the static checks look for those).
#pragma once
#include <vector_types.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

using std::isnan;
using std::max;
using std::min;

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#undef __align__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace emu {

struct WarpSlots {
    alignas(16) unsigned char lane_bytes[32][16];
};

inline std::barrier<>* block_barrier = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
inline std::vector<WarpSlots> warp_slots;

inline int flat_thread() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// Every lane publishes `value`; the caller gets lane `source`'s value when `take`, else its own.
template <class T>
T exchange(T value, int source, bool take) {
    static_assert(sizeof(T) <= 16);
    const int thread = flat_thread(), warp = thread / 32, lane = thread % 32;
    std::memcpy(warp_slots[warp].lane_bytes[lane], &value, sizeof(T));
    warp_barriers[warp]->arrive_and_wait();
    T result = value;
    if (take) std::memcpy(&result, warp_slots[warp].lane_bytes[source], sizeof(T));
    warp_barriers[warp]->arrive_and_wait();
    return result;
}

inline void launch(dim3 grid, dim3 block, const std::function<void()>& kernel) {
    const int threads = block.x * block.y * block.z;
    const int warps = (threads + 31) / 32;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                std::barrier<> block_wide(threads);
                block_barrier = &block_wide;
                warp_barriers.clear();
                for (int w = 0; w < warps; ++w)
                    warp_barriers.push_back(std::make_unique<std::barrier<>>(std::min(32, threads - 32 * w)));
                warp_slots.assign(warps, WarpSlots{});
                std::vector<std::thread> pool;
                for (int t = 0; t < threads; ++t)
                    pool.emplace_back([&, t] {
                        threadIdx = make_uint3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
                        blockIdx = make_uint3(bx, by, bz);
                        blockDim = block;
                        gridDim = grid;
                        kernel();
                        warp_barriers[t / 32]->arrive_and_drop();
                        block_barrier->arrive_and_drop();
                    });
                for (std::thread& thread : pool) thread.join();
            }
}

}  // namespace emu

inline void __syncthreads() { emu::block_barrier->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_barriers[emu::flat_thread() / 32]->arrive_and_wait(); }

template <class T>
T __shfl_up_sync(unsigned, T value, int delta) {
    const int lane = emu::flat_thread() % 32;
    return emu::exchange(value, lane - delta, lane >= delta);
}

// `width` splits the warp into segments of that many lanes, as on the GPU.
template <class T>
T __shfl_sync(unsigned, T value, int source, int width = 32) {
    const int lane = emu::flat_thread() % 32;
    return emu::exchange(value, lane / width * width + source % width, true);
}

template <class T>
T __shfl_down_sync(unsigned, T value, int delta, int width = 32) {
    const int lane = emu::flat_thread() % 32;
    return emu::exchange(value, lane + delta, lane % width + delta < width);
}

template <class T>
T __shfl_xor_sync(unsigned, T value, int lane_mask) {
    return emu::exchange(value, (emu::flat_thread() % 32) ^ lane_mask, true);
}

// WMMA: every lane holds the whole fragment (the real per-lane layout is opaque to the
// kernels, which only load, multiply and store fragments); lane 0 alone stores.
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

// The real API's preconditions, which a GPU would break on silently or fault on.
inline void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "wmma: %s\n", what);
        std::abort();
    }
}

template <class T>
void require_layout(const T* p, unsigned ldm) {
    require(reinterpret_cast<std::uintptr_t>(p) % 32 == 0, "pointer is not 256-bit aligned");
    require(ldm * sizeof(T) % 16 == 0, "ldm is not a multiple of 16 bytes");
}

inline float to_float(float v) { return v; }
inline float to_float(__half v) { return __half2float(v); }
inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
    static constexpr int rows = std::is_same_v<Use, matrix_b> ? K : M;
    static constexpr int cols = std::is_same_v<Use, matrix_a> ? K : N;
    static constexpr int num_elements = rows * cols;
    T x[rows * cols];
};

template <class Use, int M, int N, int K, class T, class Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, T value) {
    std::fill(f.x, f.x + f.num_elements, value);
}

template <class Use, int M, int N, int K, class T, class Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const T* p, unsigned ldm) {
    using F = fragment<Use, M, N, K, T, Layout>;
    require_layout(p, ldm);
    for (int r = 0; r < F::rows; ++r)
        for (int c = 0; c < F::cols; ++c)
            f.x[r * F::cols + c] = std::is_same_v<Layout, col_major> ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K, class TA, class LA, class TB, class LB>
void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
              const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, float>& c) {
    fragment<accumulator, M, N, K, float> out;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            float sum = c.x[m * N + n];
            for (int k = 0; k < K; ++k) sum += to_float(a.x[m * K + k]) * to_float(b.x[k * N + n]);
            out.x[m * N + n] = sum;
        }
    d = out;
}

template <int M, int N, int K>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm, layout_t layout) {
    require_layout(p, ldm);
    if (emu::flat_thread() % 32 != 0) return;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n)
            (layout == mem_col_major ? p[n * ldm + m] : p[m * ldm + n]) = f.x[m * N + n];
}
}  // namespace wmma
}  // namespace nvcuda

template <class T>
cudaError_t emu_malloc(T** pointer, size_t bytes) {
    *pointer = static_cast<T*>(std::malloc(bytes));
    return *pointer != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t emu_free(void* pointer) {
    std::free(pointer);
    return cudaSuccess;
}
#define cudaMalloc emu_malloc
#define cudaFree emu_free

// Stream-ordered allocation: the emulator runs launches synchronously, so plain malloc/free.
template <class T>
cudaError_t emu_malloc_async(T** pointer, size_t bytes, cudaStream_t) {
    return emu_malloc(pointer, bytes);
}
inline cudaError_t emu_free_async(void* pointer, cudaStream_t) {
    return emu_free(pointer);
}
#define cudaMallocAsync emu_malloc_async
#define cudaFreeAsync emu_free_async

// Device-wide atomics and fences (the chained scan's ticket and flags). Blocks run one after
// another here, so a flag a block waits for was set by a block that has finished.
template <class T>
T atomicAdd(T* address, T value) {
    return std::atomic_ref<T>(*address).fetch_add(value);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned) { std::this_thread::yield(); }

inline cudaError_t emu_memset_async(void* pointer, int value, size_t bytes, cudaStream_t = 0) {
    std::memset(pointer, value, bytes);
    return cudaSuccess;
}
#define cudaMemsetAsync emu_memset_async
