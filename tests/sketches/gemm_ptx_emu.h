// C++ stand-ins for the tensor-core GEMMs' inline-PTX wrappers (mma.sync and wgmma), written
// from the PTX ISA's descriptions (not from the sketches), for cuda_emu.h's
// one-OS-thread-per-CUDA-thread model.
//
// Dynamic shared memory is one static buffer (blocks run one at a time); a "shared address"
// is a byte offset into it. ldmatrix and mma are warp-collective: every lane publishes its
// operands in a per-warp table, the warp meets at a barrier, each lane computes its own
// result from the table, and the warp meets again before the table is reused.
// cp.async copies land at the wait that completes their group; wgmma runs synchronously, each
// thread computing its own accumulator fragment from shared memory through the descriptors.
#pragma once
#include <vector_functions.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_emu.h"

#define cudaFuncSetAttribute(...) cudaSuccess
#define __grid_constant__

namespace gemm_emu {

alignas(16) inline unsigned char shared_bytes[256 * 1024];

struct WarpTable {
    uint32_t address[32];
    uint32_t a[32][4];
    uint32_t b[32][2];
};
inline WarpTable tables[32];

inline uint16_t* dynamic_smem() { return reinterpret_cast<uint16_t*>(shared_bytes); }

inline uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(static_cast<const unsigned char*>(p) - shared_bytes);
}

inline int lane() { return emu::flat_thread() % 32; }
inline WarpTable& table() { return tables[emu::flat_thread() / 32]; }
inline void warp_meet() { emu::warp_barriers[emu::flat_thread() / 32]->arrive_and_wait(); }

inline uint16_t shared_b16(uint32_t byte) {
    uint16_t bits;
    std::memcpy(&bits, shared_bytes + byte, 2);
    return bits;
}

// ldmatrix.m8n8.x4.b16: lanes 8i..8i+7 address the 8 rows of matrix i; lane t receives
// elements (t/4, 2(t%4)) and (t/4, 2(t%4)+1) of each matrix, or of its transpose with .trans.
inline void ldmatrix(uint32_t (&r)[4], uint32_t address, bool trans) {
    const int t = lane();
    table().address[t] = address;
    warp_meet();
    for (int i = 0; i < 4; ++i) {
        uint32_t word = 0;
        for (int e = 0; e < 2; ++e) {
            const int row = trans ? 2 * (t % 4) + e : t / 4;
            const int col = trans ? t / 4 : 2 * (t % 4) + e;
            word |= uint32_t(shared_b16(table().address[8 * i + row] + 2 * col)) << (16 * e);
        }
        r[i] = word;
    }
    warp_meet();
}

inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) { ldmatrix(r, address, false); }
inline void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) { ldmatrix(r, address, true); }

// cp.async: a thread's copies wait in its queue, grouped by commit, and land when a
// cp.async.wait_group lets their group complete. A kernel that reads a slice before waiting
// for it, or that refills a buffer it has not waited on, sees stale data here too.
struct PendingCopy {
    unsigned char* dst;
    const void* src;   // nullptr: zero-fill
    int bytes;
    int group;
};
inline thread_local std::vector<PendingCopy> pending_copies;
inline thread_local int open_group = 0;

inline void queue_copy(unsigned char* dst, const void* src, int bytes, bool valid) {
    pending_copies.push_back({dst, valid ? src : nullptr, bytes, open_group});
}
inline void cp_async_16(uint32_t dst, const void* src, bool valid) { queue_copy(shared_bytes + dst, src, 16, valid); }
template <int BYTES>
void cp_async_to(void* dst, const void* src, bool valid) {
    queue_copy(static_cast<unsigned char*>(dst), src, BYTES, valid);
}
inline void cp_async_commit() { ++open_group; }
// Lands every copy of the groups committed before the newest N (and drops the queue's
// completed entries); copies not yet committed stay pending, as in PTX.
template <int N>
void cp_async_wait() {
    std::vector<PendingCopy> still;
    for (const PendingCopy& c : pending_copies) {
        if (c.group < open_group - N) {
            if (c.src) std::memcpy(c.dst, c.src, c.bytes);
            else std::memset(c.dst, 0, c.bytes);
        } else {
            still.push_back(c);
        }
    }
    pending_copies.swap(still);
}

inline float to_float(uint16_t bits, __half) { return __half2float(__ushort_as_half(bits)); }
inline float to_float(uint16_t bits, __nv_bfloat16) { return __bfloat162float(__ushort_as_bfloat16(bits)); }

// mma.m16n8k16.row.col, f32 accumulate. Fragments (g = lane/4, c = lane%4): A reg r holds
// row g + 8(r%2), columns 2c + 8(r/2) + {0,1}; B reg r holds rows 2c + 8r + {0,1}, column g;
// D holds rows g, g+8 (d[0..1], d[2..3]), columns 2c, 2c+1.
template <class T>
void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    const int t = lane();
    std::memcpy(table().a[t], a, sizeof a);
    std::memcpy(table().b[t], b, sizeof b);
    warp_meet();
    auto element = [](uint32_t word, int half) { return to_float(uint16_t(word >> (16 * half)), T{}); };
    auto A = [&](int m, int k) { return element(table().a[(m % 8) * 4 + (k % 8) / 2][m / 8 + 2 * (k / 8)], k % 2); };
    auto B = [&](int k, int n) { return element(table().b[n * 4 + (k % 8) / 2][k / 8], k % 2); };
    for (int i = 0; i < 4; ++i) {
        const int m = t / 4 + 8 * (i / 2), n = 2 * (t % 4) + i % 2;
        float sum = 0.0f;
        for (int k = 0; k < 16; ++k) sum += A(m, k) * B(k, n);
        d[i] += sum;
    }
    warp_meet();
}

// cvt.rna.tf32.f32: the mantissa's low 13 bits rounded off, ties away from zero (finite inputs).
inline uint32_t to_tf32(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    return (bits + 0x1000u) & 0xffffe000u;
}

// mma.m16n8k8.row.col.f32.tf32.tf32.f32 (g = lane/4, c = lane%4): A reg r holds row g + 8(r%2),
// column c + 4(r/2); B reg r holds row c + 4r, column g; D as for m16n8k16.
inline void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    const int t = lane();
    std::memcpy(table().a[t], a, sizeof a);
    std::memcpy(table().b[t], b, sizeof b);
    warp_meet();
    auto value = [](uint32_t bits) { float f; std::memcpy(&f, &bits, 4); return f; };
    auto A = [&](int m, int k) { return value(table().a[(m % 8) * 4 + k % 4][m / 8 + 2 * (k / 4)]); };
    auto B = [&](int k, int n) { return value(table().b[n * 4 + k % 4][k / 4]); };
    for (int i = 0; i < 4; ++i) {
        const int m = t / 4 + 8 * (i / 2), n = 2 * (t % 4) + i % 2;
        float sum = 0.0f;
        for (int k = 0; k < 8; ++k) sum += A(m, k) * B(k, n);
        d[i] += sum;
    }
    warp_meet();
}

// wgmma matrix descriptor: start address, leading/stride byte offsets (each stored >> 4 in
// bits 0-13, 16-29, 32-45), base offset (bits 49-51), swizzle mode (bits 62-63; 1 = 128-byte).
struct Descriptor {
    uint32_t start, lbo, sbo;
};

inline void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "wgmma: %s\n", what);
        std::abort();
    }
}

inline Descriptor decode(uint64_t desc) {
    const Descriptor d{uint32_t(desc & 0x3FFF) << 4, uint32_t((desc >> 16) & 0x3FFF) << 4,
                       uint32_t((desc >> 32) & 0x3FFF) << 4};
    require(desc >> 62 == 1, "only the 128-byte swizzle mode is emulated");
    require(((desc >> 49) & 7) == 0, "base offset must be 0 (the emulation anchors the pattern at 1024 B)");
    require(((d.start >> 7) & 7) == 0, "a start address inside a swizzle atom's rows needs a base offset");
    return d;
}

// Canonical 128-byte-swizzle layouts of 16-bit elements (PTX ISA "Shared Memory Matrix Layout";
// CUTLASS GMMA Layout_K_SW128_Atom / Layout_MN_SW128_Atom), as a byte address before the swizzle:
//   K-major:  ((8, m), (64)) rows of 128 bytes, 8-row groups SBO apart
//   MN-major: ((64, m), (8, k)) 64-element runs, runs LBO apart, k rows 128 bytes apart, 8-k groups SBO apart
// The swizzle XORs address bits [4,7) (16-byte chunk) with bits [7,10) (128-byte row in the atom).
inline uint32_t element_address(const Descriptor& d, bool mn_major, int mn, int k) {
    const uint32_t address = mn_major
        ? d.start + (mn / 64) * d.lbo + (k / 8) * d.sbo + (k % 8) * 128 + (mn % 64) * 2
        : d.start + (mn / 8) * d.sbo + (mn % 8) * 128 + k * 2;
    const uint32_t swizzled = address ^ (((address >> 7) & 7) << 4);
    require(swizzled + 2 <= sizeof shared_bytes, "operand outside shared memory");
    return swizzled;
}

// wgmma.mma_async.m64nNk16.f32 with A and B from shared memory (scale-d = 1, no negation):
// D(64xN) += A(64x16) B(16xN). trans = 0: K-major operand, 1: M/N-major. Thread t of the
// warpgroup (warp w = t/32, lane l) holds d[i] at row 16w + l/4 + 8((i/2)%2), column 8(i/4) + 2(l%4) + i%2.
template <class T, int R>
void wgmma(float (&d)[R], uint64_t a_desc, uint64_t b_desc, int trans_a, int trans_b) {
    const Descriptor a = decode(a_desc), b = decode(b_desc);
    const int t = emu::flat_thread() % 128, warp = t / 32, lane = t % 32;
    for (int i = 0; i < R; ++i) {
        const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        float sum = 0.0f;
        for (int k = 0; k < 16; ++k)
            sum += to_float(shared_b16(element_address(a, trans_a, row, k)), T{}) *
                   to_float(shared_b16(element_address(b, trans_b, col, k)), T{});
        d[i] += sum;
    }
}

// -- mbarriers and TMA tile loads (PTX ISA 8.0 "mbarrier", "cp.async.bulk.tensor") --------------
// A barrier's 64 bits hold its pending and expected arrivals (16 bits each), the transaction
// bytes still due (24 bits) and the phase parity (bit 63); a phase completes when no arrival and
// no byte is due, and the next one expects the same arrivals. One mutex guards every barrier.
inline std::mutex barrier_mutex;

struct BarrierState {
    uint32_t pending, expected, tx, phase;
};

inline BarrierState unpack(uint64_t bits) {
    return {uint32_t(bits & 0xFFFF), uint32_t((bits >> 16) & 0xFFFF), uint32_t((bits >> 32) & 0xFFFFFF),
            uint32_t(bits >> 63)};
}

inline uint64_t pack(const BarrierState& s) {
    return uint64_t(s.pending) | (uint64_t(s.expected) << 16) | (uint64_t(s.tx) << 32) | (uint64_t(s.phase) << 63);
}

// Applies one update to the barrier and completes the phase when nothing more is due.
template <class Update>
void update_barrier(uint64_t* bar, Update update) {
    std::lock_guard<std::mutex> lock(barrier_mutex);
    BarrierState s = unpack(*bar);
    update(s);
    if (s.pending == 0 && s.tx == 0) {
        s.phase ^= 1;
        s.pending = s.expected;
    }
    *bar = pack(s);
}

inline void mbar_init(uint64_t* bar, unsigned count) {
    std::lock_guard<std::mutex> lock(barrier_mutex);
    require(count > 0 && count < 0x10000, "mbarrier arrival count out of range");
    *bar = pack({count, count, 0, 0});
}

inline void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
    update_barrier(bar, [&](BarrierState& s) {
        require(s.pending > 0, "arrival on a barrier with none pending");
        s.tx += bytes;
        s.pending -= 1;
    });
}

inline void mbar_arrive(uint64_t* bar) {
    update_barrier(bar, [](BarrierState& s) {
        require(s.pending > 0, "arrival on a barrier with none pending");
        s.pending -= 1;
    });
}

inline void mbar_complete_tx(uint64_t* bar, unsigned bytes) {
    update_barrier(bar, [&](BarrierState& s) {
        require(s.tx >= bytes, "more transaction bytes than expected");
        s.tx -= bytes;
    });
}

// mbarrier.try_wait.parity in a loop: returns once the phase of this parity has completed
// (the current phase has the other parity).
inline void mbar_wait(uint64_t* bar, unsigned parity) {
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(barrier_mutex);
            if (unpack(*bar).phase != parity) return;
        }
        std::this_thread::yield();
    }
}

// What cuTensorMapEncodeTiled records, kept in the map's opaque bytes.
struct TileMap {
    const uint16_t* base;
    uint32_t rank;
    uint64_t dims[3];
    uint64_t strides[2];   // bytes
    uint32_t box[2];
};

inline int encode_tiled(void* map, int dtype, unsigned rank, void* base, const unsigned long long* dims,
                        const unsigned long long* strides, const unsigned* box, const unsigned* element_strides,
                        int interleave, int swizzle, int, int oob_fill) {
    require(dtype == 1 && interleave == 0 && swizzle == 3 && oob_fill == 0,
            "only 16-bit elements, no interleave, the 128-byte swizzle and zero fill are emulated");
    require(rank == 2 || rank == 3, "tensor maps of rank 2 or 3");
    require(box[0] * 2 == 128 && box[1] <= 256 && element_strides[0] == 1 && element_strides[1] == 1,
            "boxes of 128-byte rows");
    TileMap m{static_cast<const uint16_t*>(base), rank, {dims[0], dims[1], rank == 3 ? dims[2] : 1},
              {strides[0], rank == 3 ? strides[1] : 0}, {box[0], box[1]}};
    for (unsigned i = 0; i + 1 < rank; ++i) require(strides[i] % 16 == 0, "global strides are multiples of 16 B");
    std::memcpy(map, &m, sizeof m);
    return 0;
}

// cp.async.bulk.tensor: the box at (c0, c1, c2) into shared memory at dst (1024-byte aligned),
// rows of 128 bytes, 16-byte chunk c of row r at chunk c ^ (r % 8); zeros outside the tensor.
inline void tma_load(uint32_t dst, const void* map, int c0, int c1, int c2, uint64_t* bar) {
    TileMap m;
    std::memcpy(&m, map, sizeof m);
    require(dst % 1024 == 0, "a 128-byte-swizzled box starts on 1024 B");
    for (uint32_t r = 0; r < m.box[1]; ++r)
        for (uint32_t e = 0; e < m.box[0]; ++e) {
            const uint64_t x = uint64_t(c0) + e, y = uint64_t(c1) + r;
            uint16_t value = 0;
            if (x < m.dims[0] && y < m.dims[1] && uint64_t(c2) < m.dims[2])
                std::memcpy(&value, reinterpret_cast<const unsigned char*>(m.base) + c2 * m.strides[1] +
                                        y * m.strides[0] + x * 2, 2);
            const uint32_t byte = r * 128 + e * 2, swizzled = byte ^ (((byte >> 7) & 7) << 4);
            require(dst + swizzled + 2 <= sizeof shared_bytes, "TMA box outside shared memory");
            std::memcpy(shared_bytes + dst + swizzled, &value, 2);
        }
    mbar_complete_tx(bar, m.box[0] * m.box[1] * 2);
}

}  // namespace gemm_emu

// The runtime's driver entry point and device queries, for the launchers of TMA kernels.
inline cudaError_t emu_driver_entry_point(const char* symbol, void** function, unsigned, unsigned long long,
                                          cudaDriverEntryPointQueryResult* found) {
    const bool known = std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
    *function = known ? reinterpret_cast<void*>(&gemm_emu::encode_tiled) : nullptr;
    *found = known ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
#define cudaGetDriverEntryPointByVersion emu_driver_entry_point

inline cudaError_t emu_get_device(int* device) {
    *device = 0;
    return cudaSuccess;
}
#define cudaGetDevice emu_get_device

// Few SMs, so that persistent kernels loop over several tiles per block.
inline cudaError_t emu_device_attribute(int* value, cudaDeviceAttr attribute, int) {
    *value = attribute == cudaDevAttrMultiProcessorCount ? 3 : 0;
    return cudaSuccess;
}
#define cudaDeviceGetAttribute emu_device_attribute

