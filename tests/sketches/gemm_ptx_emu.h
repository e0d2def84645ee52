// C++ stand-ins for the tensor-core GEMMs' inline-PTX wrappers (mma.sync and wgmma), written
// from the PTX ISA's descriptions (not from the sketches), for cuda_emu.h's
// one-OS-thread-per-CUDA-thread model.
//
// Dynamic shared memory is one static buffer (blocks run one at a time); a "shared address"
// is a byte offset into it. ldmatrix and mma are warp-collective: every lane publishes its
// operands in a per-warp table, the warp meets at a barrier, each lane computes its own
// result from the table, and the warp meets again before the table is reused.
// cp.async copies synchronously (commit/wait are no-ops); wgmma runs synchronously too, each
// thread computing its own accumulator fragment from shared memory through the descriptors.
#pragma once
#include <vector_functions.h>

#include <cstdint>
#include <cstring>

#include "cuda_emu.h"

#define cudaFuncSetAttribute(...) cudaSuccess

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

inline void cp_async_16(uint32_t dst, const void* src, bool valid) {
    if (valid) std::memcpy(shared_bytes + dst, src, 16);
    else std::memset(shared_bytes + dst, 0, 16);
}
inline void cp_async_commit() {}
template <int N>
void cp_async_wait() {}

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

}  // namespace gemm_emu
