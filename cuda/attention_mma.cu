// attention_mma.cu — the fused attention (attention.cu explains the algorithm) on tensor cores
// through mma.sync (mma_sync.cuh), head dims up to 128: float32 at float32 accuracy (3xTF32,
// m16n8k8), float16 and bfloat16 with 16-bit products (m16n8k16); every sum in float32. The scores
// never leave registers, as in FlashAttention-2.
//
// A warp owns 16 rows (queries in the forward and dQ, keys in dK/dV): one MMA's M. Its rows' part
// of the head-dim operand (Q, dO, K or V) is loaded once into A fragments in registers; the other
// side of each product is staged in shared memory (in the call's own type), 32 rows per tile, and
// read as B fragments. After S = Q K^T, lane 4g + t holds the scores of rows g and g + 8 against
// keys 8n + 2t and 8n + 2t + 1 of each 8-key slice n of the tile (the C layout), so the online
// softmax of a row is over the lane's 8 values and the 3 other lanes of its group (two shuffles).
//
// The second product of each step (P V, dS K, P^T dO, dS^T Q) takes those weights as its A
// fragment, straight from the score registers:
//   16-bit  A's columns 2t, 2t + 1 (and 2t + 8, 2t + 9) of a 16-key slice are exactly what the lane
//           holds for two neighbouring 8-key slices: each pair is rounded and packed in a register.
//   float32 A wants columns t and t + 4 of an 8-key slice where the lane holds 2t and 2t + 1. So
//           the product takes the slice's keys in another order: A's column t is key 2t, column
//           t + 4 is key 2t + 1. A sum over the keys does not care about their order, as long as
//           the B fragment's rows (V's, K's, dO's or Q's rows) follow it: b[0] is row 2t, b[1]
//           row 2t + 1.
//
// In 16 bits that product's B fragments (two values down a column of the staged tile) come by
// ldmatrix .trans (load_matrices_x4, mma_sync.cuh): one instruction for the fragments of two
// 8-column output tiles, where reading them value by value takes eight 16-bit loads and four packs;
// and the first product's (two neighbours along a staged row) by ldmatrix: one instruction for two
// 8-key slices' fragments, where they take four 32-bit loads; float32 too (its B values are 32 bits
// a register, read as pairs of 16-bit halves: ldmatrix moves bits).
//
// Staged rows are 4 words (mod 32) longer than the head size H, 64 or 128 (H + 4 floats, or H + 8
// 16-bit values), so the 32 lanes' reads of a B fragment fall on 32 different banks, or share a
// word (and ldmatrix's eight 16-byte rows of a matrix, 4 words apart mod 32, too).
#include <cfloat>

#include "attention_common.cuh"
#include "copy_async.cuh"
#include "mma_sync.cuh"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

// Head dims up to H = 64 or 128 (multiples of the MMA's depth): each kernel comes in both sizes,
// so a call with small heads does not hold registers for 128 columns.
template <int H>
constexpr int kCols = H / 8;            // 8-column output tiles of a head
constexpr int kTcWarps = 4;             // 128 threads per block
constexpr int kTcRows = kTcWarps * 16;  // rows a block owns: 16 per warp
constexpr int kTcTile = 32;             // rows of a staged tile ...
constexpr int kTcSlices = kTcTile / 8;  // ... as 4 slices of 8: the N of the first product's MMAs

// Per element type: the MMA's depth K (8 for TF32, 16 for 16 bits), the registers of an A or B
// fragment (one float32, or two packed 16-bit values, each), and the staged rows' pitch.
template <class T>
constexpr bool kF32 = std::is_same_v<T, float>;
template <class T>
constexpr int kDepth = kF32<T> ? 8 : 16;
template <class T, int H>
constexpr int kSteps = H / kDepth<T>;  // K slices of a head
template <class T, int H>
constexpr int kPitch = H + (kF32<T> ? 4 : 8);  // 68 or 132 words, or 36 or 68: all 4 mod 32
template <class T>
using Reg = std::conditional_t<kF32<T>, float, uint32_t>;
template <class T, int H>
using ConstStaged = const T (*)[kPitch<T, H>];

// The lane's coordinates in a fragment: g = lane / 4, t = lane % 4 (mma_sync.cuh).
struct Lane {
    int g, t;
};

__device__ __forceinline__ Lane lane_of() { return {int(threadIdx.x % kWarp) / 4, int(threadIdx.x % 4)}; }

// The operands of one MMA, ready for the tensor cores: split in TF32 pairs, or already packed.
__device__ __forceinline__ Tf32Split<4> prepare(const float (&x)[4]) { return split_tf32(x); }
__device__ __forceinline__ Tf32Split<2> prepare(const float (&x)[2]) { return split_tf32(x); }
__device__ __forceinline__ Packed<4> prepare(const uint32_t (&x)[4]) { return {{x[0], x[1], x[2], x[3]}}; }
__device__ __forceinline__ Packed<2> prepare(const uint32_t (&x)[2]) { return {{x[0], x[1]}}; }

template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const Tf32Split<4>& a, const Tf32Split<2>& b)
{
    mma_3xtf32(d, a, b);
}

template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const Packed<4>& a, const Packed<2>& b)
{
    mma_16bit<T>(d, a, b);
}

// 16 bytes, moved as one access (the address is 16-byte aligned).
struct alignas(16) Piece {
    uint32_t w[4];
};

// Rows [row0, row0 + 32) of a (rows, width) matrix of T (row r at src + r * row_stride) into a
// staged tile, zeros past `rows` (the columns past width are never read). A thread moves 16-byte
// pieces (4 floats or 8 16-bit values; width is a multiple of that): piece x is in row x / (H / 4)
// or x / (H / 8), a division by a constant, not by the run-time width. With kAsync the pieces go
// by cp.async (copy_async.cuh): a thread's copies are all in flight together, where a loop of
// loads and stores waits on memory once per piece; the tile is complete after copy_async_wait()
// (stage_tiles) and the block's __syncthreads(). Where the source rows are not 16-byte aligned (a
// view that starts mid-row, an odd row stride) each piece is copied value by value instead.
template <class T, int H, bool kAsync>
__device__ __forceinline__ void stage_tile(T (*dst)[kPitch<T, H>], const T* src, int64_t row_stride, int64_t row0,
                                           int64_t rows, int width)
{
    constexpr int kVec = int(sizeof(Piece) / sizeof(T));  // values per piece
    constexpr int kPieces = H / kVec;                // pieces of a full row
    const bool whole = reinterpret_cast<uintptr_t>(src) % sizeof(Piece) == 0 && row_stride % kVec == 0;
    for (int x = threadIdx.x; x < kTcTile * kPieces; x += blockDim.x) {
        const int r = x / kPieces, c = x % kPieces * kVec;
        if (c >= width) continue;
        Piece* d = reinterpret_cast<Piece*>(&dst[r][c]);
        if (row0 + r >= rows) {
            *d = Piece{};  // zero bits: 0.0 in every type
            continue;
        }
        const T* from = src + (row0 + r) * row_stride + c;
        if (whole) {
            if constexpr (kAsync) copy_async_16(d, from);
            else *d = *reinterpret_cast<const Piece*>(from);
        } else {
            T* to = &dst[r][c];
            for (int i = 0; i < kVec; ++i) to[i] = from[i];
        }
    }
}

// The two tiles of one step (K and V, or Q and dO); the caller's __syncthreads() then makes them
// visible to the whole block.
template <class T, int H>
struct TileCopy {
    T (*dst)[kPitch<T, H>];
    const T* src;
    int64_t row_stride, row0, rows;
    int width;
};

template <class T, int H, bool kAsync>
__device__ __forceinline__ void stage_tiles(const TileCopy<T, H>& a, const TileCopy<T, H>& b)
{
    stage_tile<T, H, kAsync>(a.dst, a.src, a.row_stride, a.row0, a.rows, a.width);
    stage_tile<T, H, kAsync>(b.dst, b.src, b.row_stride, b.row0, b.rows, b.width);
    if constexpr (kAsync) copy_async_wait();
}

// Shared-memory buffers of the forward's K and V tiles: two, so that the next tile's copies are in
// flight while the warps work on this one, where both fit the 48 KiB a block has without opting
// in (all but float32 at H = 128: 66 KiB).
template <class T, int H>
constexpr int kFwdStages = 2 * 2 * kTcTile * kPitch<T, H> * sizeof(T) <= 48 * 1024 ? 2 : 1;

// Which kernels stage by cp.async: where ptxas (sm_80, sm_90) gives the kernel the same number
// of blocks an SM as with loads and stores, and no spills: the forward, and dQ but for float32
// at H = 128. The dK/dV kernels hold more registers than that allows (tools/sass.py shows it).
template <class T, int H>
constexpr bool kAsyncDq = !(kF32<T> && H == 128);

// The A fragment of K slice kk of 16 rows r0 .. r0 + 15 of a (rows, width) matrix in global memory
// (row r at src + r * row_stride), zeros past `rows` and width.
template <class T>
__device__ __forceinline__ void load_a_slice(Reg<T> (&a)[4], const T* src, int64_t row_stride, int64_t r0,
                                             int64_t rows, int width, int kk, Lane ln)
{
    const int64_t lo = r0 + ln.g, hi = lo + 8;
    // element (r, c) and its neighbour c + 1 (16 bits) or c alone (float32); zero outside
    const auto at = [&](int64_t r, int c) -> Reg<T> {
        if (r >= rows || c >= width) return Reg<T>(0);
        const T* p = src + r * row_stride + c;
        if constexpr (kF32<T>) return p[0];
        else return pack2(p[0], p[1]);
    };
    const int c = kF32<T> ? 8 * kk + ln.t : 16 * kk + 2 * ln.t, c2 = c + (kF32<T> ? 4 : 8);
    a[0] = at(lo, c);
    a[1] = at(hi, c);
    a[2] = at(lo, c2);
    a[3] = at(hi, c2);
}

// acc[n] += A B_n over the width, for the 4 slices n of a staged tile: A the warp's 16 rows (its
// fragment of K slice kk from a_of(kk, fragment)), B_n = X^T for the tile's rows 8n .. 8n + 7
// (b[0] = X[8n + g][column t or 2t of the K slice], ...).
template <class T, int H, class AOf>
__device__ __forceinline__ void rows_times_tile(float (&acc)[kTcSlices][4], AOf a_of, ConstStaged<T, H> x, int width,
                                                Lane ln)
{
MT_UNROLL
    for (int kk = 0; kk < kSteps<T, H>; ++kk) {
        if (kDepth<T> * kk >= width) break;
        Reg<T> a[4];
        a_of(kk, a);
        const auto ap = prepare(a);
        // The B fragments of two slices, n and n + 1, by one ldmatrix .x4: matrix j holds tile rows
        // 8(n + j / 2) .. + 7 at the K slice's first or second half of columns (j % 2), and lane
        // 8j + i points at its row i. m[0], m[1] are slice n's b[0] and b[1], m[2], m[3] slice
        // n + 1's: in 16 bits b[0] = X[8n + g][16kk + 2t, + 1] (two neighbours in a register), b[1]
        // 8 columns on; in float32 (an 8 x 4 matrix of 32-bit values read as 8 x 8 of 16-bit
        // halves: lane 4g + t gets value t of row g) b[0] = X[8n + g][8kk + t], b[1] 4 columns on.
        const int lane = 4 * ln.g + ln.t, j = lane / 8, i = lane % 8;
MT_UNROLL
        for (int n = 0; n < kTcSlices; n += 2) {
            uint32_t m[4];
            load_matrices_x4<false>(m, &x[8 * (n + j / 2) + i][(kF32<T> ? 8 : 16) * kk + (kF32<T> ? 4 : 8) * (j % 2)]);
            if constexpr (kF32<T>) {
                const float b0[2] = {tf32_value(m[0]), tf32_value(m[1])}, b1[2] = {tf32_value(m[2]), tf32_value(m[3])};
                mma<T>(acc[n], ap, prepare(b0));
                mma<T>(acc[n + 1], ap, prepare(b1));
            } else {
                const Reg<T> b0[2] = {m[0], m[1]}, b1[2] = {m[2], m[3]};
                mma<T>(acc[n], ap, prepare(b0));
                mma<T>(acc[n + 1], ap, prepare(b1));
            }
        }
    }
}

// The warp's 16 rows of a head-dim operand (Q, or in the backward Q and dO, or K and V) as A
// fragments: loaded once and kept in registers, or -- float32 backward kernels with 128-column
// heads, where two such operands beside dK and dV would not fit a thread's 255 registers -- read
// again from global memory (L1 and L2 hold them), a K slice at a time, at each use.
// times_tile(acc, x) adds these rows times the staged tile x.
template <class T, int H, bool kKeep = true>
struct OperandRows {
    const T* src;
    int64_t row_stride, r0, rows;
    int width;
    Reg<T> a[kKeep ? kSteps<T, H> : 1][4];

    __device__ __forceinline__ OperandRows(const T* src_, int64_t row_stride_, int64_t r0_, int64_t rows_, int width_,
                                           Lane ln)
        : src(src_), row_stride(row_stride_), r0(r0_), rows(rows_), width(width_)
    {
        if constexpr (kKeep) {
MT_UNROLL
            for (int kk = 0; kk < kSteps<T, H>; ++kk) load_a_slice<T>(a[kk], src, row_stride, r0, rows, width, kk, ln);
        }
    }

    __device__ __forceinline__ void times_tile(float (&acc)[kTcSlices][4], ConstStaged<T, H> x, Lane ln) const
    {
        rows_times_tile<T, H>(
            acc,
            [&](int kk, Reg<T>(&f)[4]) {
                if constexpr (kKeep) {
                    f[0] = a[kk][0], f[1] = a[kk][1], f[2] = a[kk][2], f[3] = a[kk][3];
                } else {
                    load_a_slice<T>(f, src, row_stride, r0, rows, width, kk, ln);
                }
            },
            x, width, ln);
    }
};

// Whether a backward kernel keeps its two operands' fragments in registers (see OperandRows).
template <class T, int H>
constexpr bool kKeepBackward = !(kF32<T> && H == 128);
template <class T, int H>
using BackwardRows = OperandRows<T, H, kKeepBackward<T, H>>;

// out[nt] += W X over the tile's 32 rows, for the 8-column output tiles nt below width: W the
// warp's 16 x 32 weights as C fragments (w[n]: rows g, g + 8 against tile rows 8n + 2t, + 1),
// taken as A fragments (top of the file), X the staged tile.
template <class T, int H>
__device__ __forceinline__ void weights_times_tile(float (&out)[kCols<H>][4], const float (&w)[kTcSlices][4],
                                                   ConstStaged<T, H> x, int width, Lane ln)
{
MT_UNROLL
    for (int kk = 0; kk < kTcTile / kDepth<T>; ++kk) {
        Reg<T> wa[4];
        if constexpr (kF32<T>) {  // the slice's keys reordered: A column t is key 2t, t + 4 is 2t + 1
            wa[0] = w[kk][0], wa[1] = w[kk][2], wa[2] = w[kk][1], wa[3] = w[kk][3];
        } else {  // slices 2kk and 2kk + 1 are the 16-key slice's columns 0-7 and 8-15
            wa[0] = pack2(T(w[2 * kk][0]), T(w[2 * kk][1]));
            wa[1] = pack2(T(w[2 * kk][2]), T(w[2 * kk][3]));
            wa[2] = pack2(T(w[2 * kk + 1][0]), T(w[2 * kk + 1][1]));
            wa[3] = pack2(T(w[2 * kk + 1][2]), T(w[2 * kk + 1][3]));
        }
        const auto ap = prepare(wa);
        if constexpr (kF32<T>) {
            const int r0 = kDepth<T> * kk + 2 * ln.t;  // B's rows: tile rows r0, r0 + 1
MT_UNROLL
            for (int nt = 0; nt < kCols<H>; ++nt) {
                if (8 * nt >= width) break;
                const Reg<T> bv[2] = {x[r0][8 * nt + ln.g], x[r0 + 1][8 * nt + ln.g]};
                mma<T>(out[nt], ap, prepare(bv));
            }
        } else {
            // The B fragments of two 8-column output tiles, nt and nt + 1 (16-bit head dims are
            // multiples of 16), by one ldmatrix .x4 .trans: matrix j holds tile rows 16kk + 8(j % 2)
            // .. + 7 of columns 8(nt + j / 2) .. + 7, and lane 8j + i points at its row i. Then
            // m[0], m[1] are tile nt's b[0] = rows 16kk + 2t, + 1 and b[1] = rows 16kk + 8 + 2t, + 1
            // of column 8nt + g; m[2], m[3] the same for tile nt + 1.
            const int lane = 4 * ln.g + ln.t, j = lane / 8, i = lane % 8;
MT_UNROLL
            for (int nt = 0; nt < kCols<H>; nt += 2) {
                if (8 * nt >= width) break;
                uint32_t m[4];
                load_matrices_x4<true>(m, &x[kDepth<T> * kk + 8 * (j % 2) + i][8 * (nt + j / 2)]);
                const Reg<T> b0[2] = {m[0], m[1]}, b1[2] = {m[2], m[3]};
                mma<T>(out[nt], ap, prepare(b0));
                mma<T>(out[nt + 1], ap, prepare(b1));
            }
        }
    }
}

template <int N>
__device__ __forceinline__ void zero(float (&a)[N][4])
{
MT_UNROLL
    for (int i = 0; i < N; ++i) a[i][0] = a[i][1] = a[i][2] = a[i][3] = 0.f;
}

// The two products every backward step starts with, over a staged tile: s = A X^T (scores: Q K^T,
// or K Q^T for dK/dV) and dp = G Y^T (dO V^T, or V dO^T).
template <class T, int H>
__device__ __forceinline__ void scores_and_dp(float (&s)[kTcSlices][4], float (&dp)[kTcSlices][4],
                                              const BackwardRows<T, H>& a, ConstStaged<T, H> x,
                                              const BackwardRows<T, H>& g, ConstStaged<T, H> y, Lane ln)
{
    zero(s);
    zero(dp);
    a.times_tile(s, x, ln);
    g.times_tile(dp, y, ln);
}

// fn(n, x, col) for each of the lane's elements of a 16 x 32 tile of C fragments (slice n's element
// x, of row half x / 2): col = 8n + 2t + x % 2 is its column in the tile.
template <class F>
__device__ __forceinline__ void for_each_element(Lane ln, F fn)
{
MT_UNROLL
    for (int n = 0; n < kTcSlices; ++n)
MT_UNROLL
        for (int x = 0; x < 4; ++x) fn(n, x, 8 * n + 2 * ln.t + x % 2);
}

// A warp's 16 rows of C fragments written out: row r0 + g (elements 0, 1) and r0 + g + 8
// (elements 2, 3), columns 8nt + 2t and + 1 below width, as T(finish(h, value)) with h the half.
template <int H, class T, class RowOf, class F>
__device__ __forceinline__ void store_rows(const float (&acc)[kCols<H>][4], T* dst, RowOf row_of, int width, Lane ln,
                                           F finish)
{
MT_UNROLL
    for (int h = 0; h < 2; ++h) {
        const int64_t at = row_of(h);
        if (at < 0) continue;
MT_UNROLL
        for (int nt = 0; nt < kCols<H>; ++nt) {
            if (8 * nt >= width) break;
            dst[at + 8 * nt + 2 * ln.t] = T(finish(h, acc[nt][2 * h]));
            dst[at + 8 * nt + 2 * ln.t + 1] = T(finish(h, acc[nt][2 * h + 1]));
        }
    }
}

// bfloat16 and float16 m16n8k16 and TF32 all need sm_80: the sm_75 build compiles these kernels
// empty (they trap, see mma_sync.cuh), and the host launches them only where the GPU and the code
// the driver loaded for it are sm_80 or later (mma_sync_attention).

// Forward. Grid (pairs, ceil(L / 64)), 4 warps; warp w owns query rows q0 + 16w .. + 15, their Q
// as A fragments and their output (16 x Ev) as C fragments, in registers. Per 32-key tile (K and V
// staged): S = Q K^T, the online softmax of each row (its m and l in the lanes of its group, each
// lane rescaling its own output elements by alpha), then O += P V. The tiles come by cp.async
// into two buffers (kFwdStages), the next tile's copies in flight during this one's work; float32
// at H = 128 has one (its two would be 66 KiB). Shared memory: 18 KiB (16-bit, H = 64), 34 KiB
// (16-bit at H = 128, float32 at H = 64), 33 KiB (float32, H = 128).
template <class T, int H>
__global__ void __launch_bounds__(kTcWarps * kWarp)
    attention_mma_kernel(const T* q, const T* k, const T* v, T* out, float* lse, AttentionLayout lay,
                         AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E,
                         int Ev, float scale, bool causal)
{
    constexpr int kStages = kFwdStages<T, H>;
    __shared__ __align__(16) T k_s[kStages][kTcTile][kPitch<T, H>];
    __shared__ __align__(16) T v_s[kStages][kTcTile][kPitch<T, H>];
    const Lane ln = lane_of();
    const int64_t q0 = tile_in_order(causal) * kTcRows, r0 = q0 + threadIdx.x / kWarp * 16;
    const int64_t rows[2] = {r0 + ln.g, r0 + ln.g + 8};  // the lane's two query rows
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        const OperandRows<T, H> qa(q + lay.q.pair(b), lay.q.row_stride, r0, L, E, ln);
        float o[kCols<H>][4];
        zero(o);
        float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
        const int64_t end = keys_end(S, q0 + kTcRows, causal);
        // Starts the copies of the tile of keys from k0 into buffer `to` (no wait).
        const auto start_tile = [&](int64_t k0, int to) {
            stage_tile<T, H, true>(k_s[to], k + lay.k.pair(b), lay.k.row_stride, k0, S, E);
            stage_tile<T, H, true>(v_s[to], v + lay.v.pair(b), lay.v.row_stride, k0, S, Ev);
        };
        if (kStages == 2 && end > 0) {
            __syncthreads();  // every warp is done with the previous pair's tiles
            start_tile(0, 0);
        }
        for (int64_t k0 = 0, t = 0; k0 < end; k0 += kTcTile, ++t) {
            const int cur = int(t % kStages);
            if (kStages == 1) {
                __syncthreads();  // every warp is done with the previous tile
                start_tile(k0, 0);
            }
            copy_async_wait();  // this thread's copies of the tile have landed
            __syncthreads();    // everyone's have; and every warp is done with the previous tile
            // Two buffers: the next tile's copies go into the other one (which the previous tile
            // used: every warp is past it, see the barrier) while the warps work on this one.
            if (kStages == 2 && k0 + kTcTile < end) start_tile(k0 + kTcTile, 1 - cur);
            float s[kTcSlices][4];
            zero(s);
            qa.times_tile(s, k_s[cur], ln);
MT_UNROLL
            for (int h = 0; h < 2; ++h) {
                float mx = -INFINITY;
MT_UNROLL
                for (int n = 0; n < kTcSlices; ++n)
MT_UNROLL
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[n][2 * h + e];
                        x = score_of(x, scale, mask_matrix, mask, rows[h], k0 + 8 * n + 2 * ln.t + e, L, S, causal);
                        mx = fmaxf(mx, x);
                    }
                const float m_new = fmaxf(m[h], lanes_max<4>(mx));
                const float alpha = m_new == -INFINITY ? 1.f : __expf(m[h] - m_new);
                float sum = 0.f;
MT_UNROLL
                for (int n = 0; n < kTcSlices; ++n)
MT_UNROLL
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[n][2 * h + e];
                        float p = m_new == -INFINITY ? 0.f : __expf(x - m_new);
                        sum += p;  // the un-dropped weights
                        if (drop.on && p != 0.f) p *= drop.factor(b, rows[h], k0 + 8 * n + 2 * ln.t + e);
                        x = p;
                    }
                l[h] = l[h] * alpha + lanes_sum<4>(sum);
                m[h] = m_new;
MT_UNROLL
                for (int nt = 0; nt < kCols<H>; ++nt) o[nt][2 * h] *= alpha, o[nt][2 * h + 1] *= alpha;
            }
            weights_times_tile<T, H>(o, s, v_s[cur], Ev, ln);
        }
        const auto row_of = [&](int h) { return rows[h] < L ? lay.out.row(b, rows[h]) : int64_t(-1); };
        // l = 0 (every key masked): NaN, as the composed formula
        store_rows<H>(o, out, row_of, Ev, ln, [&](int h, float x) { return x / l[h]; });
MT_UNROLL
        for (int h = 0; h < 2; ++h)
            if (ln.t == 0 && rows[h] < L) lse[b * L + rows[h]] = m[h] + logf(l[h]);
    }
}

// Backward, dQ. Grid (pairs, ceil(L / 64)), 4 warps; warp w owns query rows i0 + 16w .. + 15: Q and
// dO as A fragments, their lse and D, and dQ as C fragments. Per 32-key tile (K and V staged):
// S = Q K^T and dP = dO V^T, dS = P (dP Z - D) in place of S, then dQ += dS K. Shared memory:
// 9 to 33 KiB, as the forward.
template <class T, int H>
__global__ void __launch_bounds__(kTcWarps * kWarp)
    attention_mma_dq_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                            const float* delta, T* grad_q, AttentionLayout lay, AttentionMask<float> mask,
                            AttentionDropout drop, int64_t B, int64_t L, int64_t S, int E, int Ev, float scale,
                            bool causal)
{
    __shared__ __align__(16) T k_s[kTcTile][kPitch<T, H>];
    __shared__ __align__(16) T v_s[kTcTile][kPitch<T, H>];
    const Lane ln = lane_of();
    const int64_t i0 = tile_in_order(causal) * kTcRows, r0 = i0 + threadIdx.x / kWarp * 16;
    const int64_t rows[2] = {r0 + ln.g, r0 + ln.g + 8};
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        const BackwardRows<T, H> qa(q + lay.q.pair(b), lay.q.row_stride, r0, L, E, ln);
        const BackwardRows<T, H> ga(grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, r0, L, Ev, ln);
        float dq[kCols<H>][4], row_lse[2], row_delta[2];
        zero(dq);
MT_UNROLL
        for (int h = 0; h < 2; ++h) {
            row_lse[h] = rows[h] < L ? lse[b * L + rows[h]] : 0.f;
            row_delta[h] = rows[h] < L ? delta[b * L + rows[h]] : 0.f;
        }
        for (int64_t k0 = 0; k0 < keys_end(S, i0 + kTcRows, causal); k0 += kTcTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_tiles<T, H, kAsyncDq<T, H>>({k_s, k + lay.k.pair(b), lay.k.row_stride, k0, S, E},
                                              {v_s, v + lay.v.pair(b), lay.v.row_stride, k0, S, Ev});
            __syncthreads();  // the tile is staged
            float s[kTcSlices][4], dp[kTcSlices][4];
            scores_and_dp<T, H>(s, dp, qa, k_s, ga, v_s, ln);
            for_each_element(ln, [&](int n, int x, int col) {
                const int h = x / 2;
                const int64_t i = rows[h], j = k0 + col;
                const float sc = score_of(s[n][x], scale, mask_matrix, mask, i, j, L, S, causal);
                float ds = 0.f;
                if (sc != -INFINITY) {
                    const float z = drop.factor(b, i, j);  // 1 without dropout
                    ds = __expf(sc - row_lse[h]) * (dp[n][x] * z - row_delta[h]);
                }
                s[n][x] = ds;
            });
            weights_times_tile<T, H>(dq, s, k_s, E, ln);
        }
        const auto row_of = [&](int h) { return rows[h] < L ? lay.grad_q.row(b, rows[h]) : int64_t(-1); };
        store_rows<H>(dq, grad_q, row_of, E, ln, [&](int, float x) { return x * scale; });
    }
}

// Backward, dK and dV. Grid (pairs, ceil(S / 64)), 4 warps; warp w owns keys j0 + 16w .. + 15: K
// and V as A fragments, dK and dV as C fragments. Per 32-query tile (Q, dO, lse and D staged; from
// the block's diagonal on when causal): S^T = K Q^T and dP^T = V dO^T, then P Z and dS in their
// place, dV += (P Z)^T dO and dK += dS^T Q. Shared memory: 9 to 33 KiB, as the forward.
template <class T, int H>
__global__ void __launch_bounds__(kTcWarps * kWarp)
    attention_mma_dkdv_kernel(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                              const float* delta, T* grad_k, T* grad_v, AttentionLayout lay,
                              AttentionMask<float> mask, AttentionDropout drop, int64_t B, int64_t L, int64_t S,
                              int E, int Ev, float scale, bool causal)
{
    __shared__ __align__(16) T q_s[kTcTile][kPitch<T, H>];
    __shared__ __align__(16) T g_s[kTcTile][kPitch<T, H>];  // dO
    __shared__ float lse_s[kTcTile], delta_s[kTcTile];
    const Lane ln = lane_of();
    const int64_t j0 = int64_t(blockIdx.y) * kTcRows, r0 = j0 + threadIdx.x / kWarp * 16;
    const int64_t keys[2] = {r0 + ln.g, r0 + ln.g + 8};  // the lane's two keys
    for (int64_t b = blockIdx.x; b < B; b += gridDim.x) {
        const float* mask_matrix = mask.data ? mask.matrix(b) : nullptr;
        const BackwardRows<T, H> ka(k + lay.k.pair(b), lay.k.row_stride, r0, S, E, ln);
        const BackwardRows<T, H> va(v + lay.v.pair(b), lay.v.row_stride, r0, S, Ev, ln);
        float dk[kCols<H>][4], dv[kCols<H>][4];
        zero(dk);
        zero(dv);
        for (int64_t i0 = causal ? j0 : 0; i0 < L; i0 += kTcTile) {
            __syncthreads();  // every warp is done with the previous tile
            stage_tile<T, H, false>(q_s, q + lay.q.pair(b), lay.q.row_stride, i0, L, E);
            stage_tile<T, H, false>(g_s, grad_out + lay.grad_out.pair(b), lay.grad_out.row_stride, i0, L, Ev);
            stage_row_stats(lse_s, delta_s, lse, delta, b, i0, L, kTcTile);
            __syncthreads();  // the tile is staged
            float s[kTcSlices][4], dp[kTcSlices][4];
            scores_and_dp<T, H>(s, dp, ka, q_s, va, g_s, ln);
            for_each_element(ln, [&](int n, int x, int qi) {
                const int64_t i = i0 + qi, j = keys[x / 2];
                const float sc = score_of(s[n][x], scale, mask_matrix, mask, i, j, L, S, causal);
                float p = 0.f, ds = 0.f;
                if (sc != -INFINITY) {
                    p = __expf(sc - lse_s[qi]);
                    const float z = drop.factor(b, i, j);  // 1 without dropout
                    ds = p * (dp[n][x] * z - delta_s[qi]);
                    p *= z;  // dV takes the weight that met v in the forward
                }
                s[n][x] = p;
                dp[n][x] = ds;
            });
            weights_times_tile<T, H>(dv, s, g_s, Ev, ln);
            weights_times_tile<T, H>(dk, dp, q_s, E, ln);
        }
        const auto v_row = [&](int h) { return keys[h] < S ? lay.grad_v.row(b, keys[h]) : int64_t(-1); };
        const auto k_row = [&](int h) { return keys[h] < S ? lay.grad_k.row(b, keys[h]) : int64_t(-1); };
        store_rows<H>(dv, grad_v, v_row, Ev, ln, [](int, float x) { return x; });
        store_rows<H>(dk, grad_k, k_row, E, ln, [&](int, float x) { return x * scale; });
    }
}

}  // namespace

#if !MT_CUDA_EMULATED
// Whether the kernels running on this GPU were compiled for sm_80 or later. The GPU being sm_80 is
// not enough: a build for sm_75 alone runs on it through its sm_75 PTX, compiled when loaded with
// __CUDA_ARCH__ = 750, where these kernels are empty and trap (mma_sync.cuh), which would end the
// process's CUDA context. ptxVersion tells which code the driver took. Asked once.
bool built_for_mma()
{
    static const bool ok = [] {
        cudaFuncAttributes a{};
        if (cudaFuncGetAttributes(&a, attention_mma_kernel<float, 64>) != cudaSuccess) {
            cudaGetLastError();  // not an error of the next launch
            return false;
        }
        return a.ptxVersion >= 80;
    }();
    return ok;
}
#endif

// mma.sync needs sm_80 (TF32 and bfloat16 alike), on the GPU and in the code built for it; the
// emulator counts as sm_90. Head dims up to 128 that are multiples of the MMA's depth: 8 for
// float32, 16 for float16 and bfloat16.
bool mma_sync_attention(DType t, int E, int Ev)
{
    if (t != DType::Float32 && t != DType::Float16 && t != DType::BFloat16) return false;
    const int depth = t == DType::Float32 ? 8 : 16;
    if (E <= 0 || Ev <= 0 || E > 128 || Ev > 128 || E % depth != 0 || Ev % depth != 0) return false;
#if MT_CUDA_EMULATED
    return true;
#else
    return compute_capability() >= 80 && built_for_mma();
#endif
}

// f(H) with the kernels' head size H: 64 where both head dims fit, else 128.
template <class F>
void with_head_size(int E, int Ev, F&& f)
{
    if (E <= 64 && Ev <= 64) return f(std::integral_constant<int, 64>{});
    f(std::integral_constant<int, 128>{});
}

template <class T>
void attention_mma(const T* q, const T* k, const T* v, T* out, float* lse, const AttentionLayout& lay,
                   const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B, int64_t L, int64_t S,
                   int E, int Ev, float scale, bool causal)
{
    with_head_size(E, Ev, [&](auto head) {
        constexpr int H = decltype(head)::value;
        MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kTcRows)), kTcWarps * kWarp, 0, 0, attention_mma_kernel<T, H>)(
            q, k, v, out, lse, lay, mask, drop, B, L, S, E, Ev, scale, causal);
    });
    MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention");
}

template <class T>
void attention_mma_backward(const T* q, const T* k, const T* v, const T* grad_out, const float* lse,
                            const float* delta, T* grad_q, T* grad_k, T* grad_v, const AttentionLayout& lay,
                            const AttentionMask<float>& mask, const AttentionDropout& drop, int64_t B, int64_t L,
                            int64_t S, int E, int Ev, float scale, bool causal)
{
    with_head_size(E, Ev, [&](auto head) {
        constexpr int H = decltype(head)::value;
        MT_LAUNCH(dim3(pair_blocks(B), tiles(S, kTcRows)), kTcWarps * kWarp, 0, 0, attention_mma_dkdv_kernel<T, H>)(
            q, k, v, grad_out, lse, delta, grad_k, grad_v, lay, mask, drop, B, L, S, E, Ev, scale, causal);
        MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dK, dV)");
        if (L == 0) return;
        MT_LAUNCH(dim3(pair_blocks(B), tiles(L, kTcRows)), kTcWarps * kWarp, 0, 0, attention_mma_dq_kernel<T, H>)(
            q, k, v, grad_out, lse, delta, grad_q, lay, mask, drop, B, L, S, E, Ev, scale, causal);
        MT_CUDA_CHECK_LAUNCH("scaled_dot_product_attention_backward (dQ)");
    });
}

#define MT_INSTANTIATE(T)                                                                                       \
    template void attention_mma<T>(const T*, const T*, const T*, T*, float*, const AttentionLayout&,            \
                                   const AttentionMask<float>&, const AttentionDropout&, int64_t, int64_t,       \
                                   int64_t, int, int, float, bool);                                              \
    template void attention_mma_backward<T>(const T*, const T*, const T*, const T*, const float*, const float*, \
                                            T*, T*, T*, const AttentionLayout&, const AttentionMask<float>&,    \
                                            const AttentionDropout&, int64_t, int64_t, int64_t, int, int, float, \
                                            bool);
MT_INSTANTIATE(float)
MT_INSTANTIATE(Half)
MT_INSTANTIATE(BFloat16)
#undef MT_INSTANTIATE

}  // namespace minitorch::cuda
