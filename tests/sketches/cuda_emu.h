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
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
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

template <class T>
T __shfl_up_sync(unsigned, T value, int delta) {
    const int lane = emu::flat_thread() % 32;
    return emu::exchange(value, lane - delta, lane >= delta);
}

template <class T>
T __shfl_sync(unsigned, T value, int source) { return emu::exchange(value, source, true); }

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
