// mma_sync.cuh — the tensor cores through PTX's mma.sync instructions (sm_80 on), whose fragment
// layouts PTX documents (unlike wmma's, see mma.cuh), so a kernel knows which lane holds which
// element and can work on them in registers:
//   float32   mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, at float32 accuracy ("3xTF32")
//   float16   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//   bfloat16  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// All take a 16 x k A, a k x 8 B and sum into a 16 x 8 float32 C.
//
// 3xTF32. A tensor core multiplies TF32 values: float32's 8-bit exponent with only 10 of its 23
// mantissa bits. One TF32 product loses precision, so each float32 x is split in two TF32 values,
// big = round(x) and small = round(x - big), which carry about 21 of x's mantissa bits between
// them. Then
//     a b ~= a_big b_big + a_big b_small + a_small b_big
// (a_small b_small is below float32's rounding and is dropped): three MMAs instead of one, still
// several times the float32 rate of the CUDA cores, with sums in float32. PyTorch's
// memory-efficient attention computes float32 the same way on these GPUs (CUTLASS's
// OpMultiplyAddFastF32).
//
// The layouts, with lane = 4 g + t (g = lane / 4 the group, t = lane % 4 the thread in the group).
// m16n8k8 (TF32, one value per register):
//     A (16 x 8, by rows)   a[0] = A[g][t]      a[1] = A[g + 8][t]
//                           a[2] = A[g][t + 4]  a[3] = A[g + 8][t + 4]
//     B (8 x 8, by columns) b[0] = B[t][g]      b[1] = B[t + 4][g]
// m16n8k16 (16-bit, two values per register, the first in the low half):
//     A (16 x 16)           a[0] = A[g][2t, 2t + 1]      a[1] = A[g + 8][2t, 2t + 1]
//                           a[2] = A[g][2t + 8, 2t + 9]  a[3] = A[g + 8][2t + 8, 2t + 9]
//     B (16 x 8)            b[0] = B[2t, 2t + 1][g]      b[1] = B[2t + 8, 2t + 9][g]
// both:
//     C, D (16 x 8)         c[0] = C[g][2t]     c[1] = C[g][2t + 1]
//                           c[2] = C[g + 8][2t] c[3] = C[g + 8][2t + 1]
// The emulator implements the same layouts (below): a kernel that gets one wrong fails its tests
// there too.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common.cuh"
#include "minitorch/half.h"
#include "warp.cuh"

namespace minitorch::cuda {

// x rounded to TF32 (to nearest, ties away from zero: cvt.rna), as float32 bits whose low 13
// mantissa bits are zero.
__device__ __forceinline__ uint32_t to_tf32(float x)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
#else
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7f800000u) == 0x7f800000u) return bits;  // inf and NaN stay as they are
    return (bits + 0x1000u) & 0xffffe000u;                 // half a TF32 ulp up the magnitude, then cut
#endif
}

__device__ __forceinline__ float tf32_value(uint32_t bits)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

// N float32 values split in TF32 pairs: x[i] ~= big[i] + small[i].
template <int N>
struct Tf32Split {
    uint32_t big[N], small[N];
};

template <int N>
__device__ __forceinline__ Tf32Split<N> split_tf32(const float (&x)[N])
{
    Tf32Split<N> s;
MT_UNROLL
    for (int i = 0; i < N; ++i) {
        s.big[i] = to_tf32(x[i]);
        s.small[i] = to_tf32(x[i] - tf32_value(s.big[i]));
    }
    return s;
}

#if MT_CUDA_EMULATED
namespace detail {

// The emulator's warp-collective instructions (mma.sync, ldmatrix): each lane posts what it
// holds (post(slot, lane)) where the warp's other lanes can read it, then reads what PTX gives it
// (read(slot, lane)). The blocks of a launch run one after another on the calling thread, so one
// slot per warp index is enough.
template <class Slot, class Post, class Read>
void emulated_warp_exchange(Post post, Read read)
{
    static thread_local Slot slots[32];  // a block has at most 32 warps
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int lane = int(tid % kWarp);
    Slot& x = slots[tid / kWarp];
    post(x, lane);
    __syncwarp();  // every lane has posted
    read(static_cast<const Slot&>(x), lane);
    __syncwarp();  // every lane has read before the next instruction posts
}

// The emulator's MMA: the lanes post their fragments, then each computes its own four elements
// of D, d[e] = dot(slot, row, col, d[e]), from the C layout above.
template <class Slot, class Post, class Dot>
void emulated_mma(float (&d)[4], Post post, Dot dot)
{
    emulated_warp_exchange<Slot>(post, [&](const Slot& x, int lane) {
        const int g = lane / 4, t = lane % 4;
        for (int e = 0; e < 4; ++e) d[e] = dot(x, g + e / 2 * 8, 2 * t + e % 2, d[e]);
    });
}

struct Tf32Exchange {
    float a_big[kWarp][4], a_small[kWarp][4], b_big[kWarp][2], b_small[kWarp][2];
};

// A[row][k] and B[k][col] of the fragments the warp's lanes posted (the layouts at the top).
inline float a_at(const float (*a)[4], int row, int k) { return a[row % 8 * 4 + k % 4][row / 8 + k / 4 * 2]; }
inline float b_at(const float (*b)[2], int k, int col) { return b[col * 4 + k % 4][k / 4]; }

}  // namespace detail
#endif

// d += a b at float32 accuracy: a is a split A fragment, b a split B fragment (layouts above),
// d a C fragment. Warp-collective: all 32 lanes call it with their fragments.
__device__ __forceinline__ void mma_3xtf32(float (&d)[4], const Tf32Split<4>& a, const Tf32Split<2>& b)
{
#if MT_CUDA_EMULATED
    detail::emulated_mma<detail::Tf32Exchange>(
        d,
        [&](detail::Tf32Exchange& x, int lane) {
            for (int i = 0; i < 4; ++i)
                x.a_big[lane][i] = tf32_value(a.big[i]), x.a_small[lane][i] = tf32_value(a.small[i]);
            for (int i = 0; i < 2; ++i)
                x.b_big[lane][i] = tf32_value(b.big[i]), x.b_small[lane][i] = tf32_value(b.small[i]);
        },
        [](const detail::Tf32Exchange& x, int row, int col, float sum) {
            // the three MMAs in the order the GPU code issues them, each summing over k in float32
            for (int k = 0; k < 8; ++k) sum += detail::a_at(x.a_small, row, k) * detail::b_at(x.b_big, k, col);
            for (int k = 0; k < 8; ++k) sum += detail::a_at(x.a_big, row, k) * detail::b_at(x.b_small, k, col);
            for (int k = 0; k < 8; ++k) sum += detail::a_at(x.a_big, row, k) * detail::b_at(x.b_big, k, col);
            return sum;
        });
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // the small products first: they are the smallest terms of the sum
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a.small[0]), "r"(a.small[1]), "r"(a.small[2]), "r"(a.small[3]), "r"(b.big[0]), "r"(b.big[1]));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a.big[0]), "r"(a.big[1]), "r"(a.big[2]), "r"(a.big[3]), "r"(b.small[0]), "r"(b.small[1]));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a.big[0]), "r"(a.big[1]), "r"(a.big[2]), "r"(a.big[3]), "r"(b.big[0]), "r"(b.big[1]));
#elif defined(__CUDA_ARCH__)
    // sm_75 and older: no TF32 MMA. The host never launches a kernel that calls this there
    // (compute_capability() >= 80); if one runs anyway, it traps instead of leaving its output unwritten.
    (void)d, (void)a, (void)b;
    __trap();
#endif
}

// ---- 16-bit: m16n8k16 ----

// Two 16-bit values in one register, the first in the low half (neighbours along a row of an A
// fragment, or down a column of a B fragment).
template <class T>
__device__ __forceinline__ uint32_t pack2(T lo, T hi)
{
    return uint32_t(lo.bits) | uint32_t(hi.bits) << 16;
}

// Packed 16-bit fragments: A (4 registers) or B (2).
template <int N>
struct Packed {
    uint32_t v[N];
};

#if MT_CUDA_EMULATED
namespace detail {

struct Mma16Exchange {
    float a[kWarp][8], b[kWarp][4];  // register r's half h at [2r + h]
};

// A[row][k] and B[k][col] of the posted 16-bit fragments: half k % 2 of a register.
inline float a16_at(const float (*a)[8], int row, int k)
{
    return a[row % 8 * 4 + k % 8 / 2][(row / 8 + k / 8 * 2) * 2 + k % 2];
}
inline float b16_at(const float (*b)[4], int k, int col) { return b[col * 4 + k % 8 / 2][k / 8 * 2 + k % 2]; }

template <class T>
float half_value(uint32_t r, int h)
{
    T x;
    x.bits = uint16_t(r >> (16 * h));
    return float(x);
}

}  // namespace detail
#endif

#if MT_CUDA_EMULATED
namespace detail {

struct RowAddresses {
    const uint16_t* row[kWarp];
};

}  // namespace detail
#endif

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: four 8 x 8 matrices of 16-bit values in
// shared memory, row i of matrix j (8 neighbouring values, 16-byte aligned) at the address that
// lane 8j + i gives. Lane 4g + t receives in d[j], the first value in the low half,
//   kTrans = false: matrix j's elements (g, 2t) and (g, 2t + 1): two neighbours along row g;
//   kTrans = true:  matrix j's elements (2t, g) and (2t + 1, g): two values down column g.
// Either is how a fragment of the m16n8k16 MMA holds its values (b[0] = B[2t, 2t + 1][g]: a row
// of B^T or a column of B). One instruction for four registers, where reading them takes four
// 32-bit loads (neighbours) or eight 16-bit loads and four packs (a column). Warp-collective;
// sm_75 on (a GPU before that never launches its callers, see mma_16bit). The emulator posts the
// lanes' addresses (emulated_warp_exchange, as its MMA posts fragments), and each lane reads its
// values from the rows PTX assigns it.
template <bool kTrans>
__device__ __forceinline__ void load_matrices_x4(uint32_t (&d)[4], const void* row)
{
#if MT_CUDA_EMULATED
    detail::emulated_warp_exchange<detail::RowAddresses>(
        [&](detail::RowAddresses& x, int lane) {
            // A GPU faults on a row address that is not 16-byte aligned ("misaligned address",
            // and the context is lost): the emulator ends the launch with the same complaint.
            if (reinterpret_cast<uintptr_t>(row) % 16 != 0) {
                ::emu::detail::report("block (%u,%u,%u) thread (%u,%u,%u): ldmatrix row address %p is not 16-byte "
                                      "aligned", blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
                                      threadIdx.z, row);
                throw std::runtime_error("ldmatrix: a row address is not 16-byte aligned");
            }
            x.row[lane] = static_cast<const uint16_t*>(row);
        },
        [&](const detail::RowAddresses& x, int lane) {
            const int g = lane / 4, t = lane % 4;
            for (int j = 0; j < 4; ++j) {
                if (kTrans) d[j] = uint32_t(x.row[8 * j + 2 * t][g]) | uint32_t(x.row[8 * j + 2 * t + 1][g]) << 16;
                else d[j] = uint32_t(x.row[8 * j + g][2 * t]) | uint32_t(x.row[8 * j + g][2 * t + 1]) << 16;
            }
        });
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    const uint32_t address = uint32_t(__cvta_generic_to_shared(row));
    if constexpr (kTrans)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                     : "r"(address));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                     : "r"(address));
#elif defined(__CUDA_ARCH__)
    (void)d, (void)row;
    __trap();
#endif
}

// d += a b for float16 or bfloat16 fragments (T = Half or BFloat16): products of 16-bit values
// (exact in float32), sums in float32. Warp-collective.
template <class T>
__device__ __forceinline__ void mma_16bit(float (&d)[4], const Packed<4>& a, const Packed<2>& b)
{
#if MT_CUDA_EMULATED
    detail::emulated_mma<detail::Mma16Exchange>(
        d,
        [&](detail::Mma16Exchange& x, int lane) {
            for (int i = 0; i < 8; ++i) x.a[lane][i] = detail::half_value<T>(a.v[i / 2], i % 2);
            for (int i = 0; i < 4; ++i) x.b[lane][i] = detail::half_value<T>(b.v[i / 2], i % 2);
        },
        [](const detail::Mma16Exchange& x, int row, int col, float sum) {
            for (int k = 0; k < 16; ++k) sum += detail::a16_at(x.a, row, k) * detail::b16_at(x.b, k, col);
            return sum;
        });
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, BFloat16>)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.v[0]), "r"(b.v[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.v[0]), "r"(b.v[1]));
#elif defined(__CUDA_ARCH__)
    (void)d, (void)a, (void)b;  // sm_75 and older: never launched there (see mma_3xtf32)
    __trap();
#endif
}

}  // namespace minitorch::cuda
