// scan.cu — CUDA kernels for running sums, products and log-sum-exps (cumsum, cumprod,
// logcumsumexp; each step in scan_math.h, shared with the CPU), and running max / min with
// their places (cummax, cummin), along the middle dim of a contiguous (outer, R, inner)
// tensor; layout as in kernels.h.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>

#include "common.cuh"
#include "minitorch/scan_math.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

// Values are combined in double (floats) or int64 (integers), rounded once per output.
template <class T>
using ScanAcc = std::conditional_t<std::is_floating_point<T>::value, double, int64_t>;

// Thread mapping: one thread per line (o, :, i), walking its R values in order. Adjacent
// threads take adjacent i, so each step's reads are coalesced when inner is large. This
// is the plain sequential scan, for lines along a strided dim (inner > 1); contiguous lines
// (inner == 1) go to the kernels below, as one thread would walk a long line alone.
template <class T>
__global__ void scan_kernel(const T* in, T* out, int64_t outer, int64_t len, int64_t inner, ScanOp op, bool reverse)
{
    using Acc = ScanAcc<T>;
    MT_GRID_STRIDE(line, outer * inner) {
        const int64_t o = line / inner, i = line % inner;
        Acc acc = scan_identity<Acc>(op);
        for (int64_t k = 0; k < len; ++k) {
            const int64_t r = reverse ? len - 1 - k : k;
            const int64_t at = (o * len + r) * inner + i;
            acc = scan_combine(op, acc, Acc(in[at]));
            out[at] = static_cast<T>(acc);
        }
    }
}

// Strided lines that are few and long (cumsum(0) of a (4096, 4096) matrix: 4096 lines of
// 4096) leave scan_kernel with a few thousand threads, each walking a chain of len
// dependent steps, on a GPU that holds a quarter of a million. So each line is cut into
// `chunks` pieces of `chunk` values (in the scan's order: a reverse scan's piece 0 is the
// line's end) and scanned in three launches:
//   1. chunk_scan_kernel with totals: each piece's sum (product) into totals (outer, chunks, inner);
//   2. scan_kernel over totals: the inclusive running total of the pieces, per line;
//   3. chunk_scan_kernel with out and before: each piece scanned again, starting from the
//      total of the pieces before it.
// Thread mapping of 1 and 3: one thread per (o, piece, i), adjacent threads on adjacent i
// (coalesced, as in scan_kernel). The input is read twice, but by 2^18 threads at once.
// Totals are kept in Acc, and each output is still rounded once.
template <class T>
__global__ void chunk_scan_kernel(const T* in, T* out, const ScanAcc<T>* before, ScanAcc<T>* totals, int64_t outer,
                                  int64_t len, int64_t inner, int64_t chunks, int64_t chunk, ScanOp op, bool reverse)
{
    using Acc = ScanAcc<T>;
    MT_GRID_STRIDE(e, outer * chunks * inner) {
        const int64_t i = e % inner, piece = (e / inner) % chunks, o = e / (inner * chunks);
        const int64_t end = (piece + 1) * chunk < len ? (piece + 1) * chunk : len;
        Acc acc = before && piece > 0 ? before[e - inner] : scan_identity<Acc>(op);  // the pieces before
        for (int64_t k = piece * chunk; k < end; ++k) {
            const int64_t at = (o * len + (reverse ? len - 1 - k : k)) * inner + i;
            acc = scan_combine(op, acc, Acc(in[at]));
            if (out) out[at] = static_cast<T>(acc);
        }
        if (totals) totals[e] = acc;
    }
}

// The same for contiguous lines (inner == 1), where a thread per line would read with a
// stride of a whole line. Thread mapping: one warp per line (8 lines per block of 256
// threads, grid-striding over lines). The warp walks its line 32 values at a time: lane l
// takes value k0 + l, the warp's inclusive scan of the 32 (five shuffle steps: after the
// step with distance d, each lane holds the total of the 2d values ending at it, as in the
// lectures' prefix sum) gives each lane its running total within the chunk, and the carry
// of the chunks before (the previous chunk's last lane, broadcast) completes it. A single
// long line still runs on one warp: lookback_scan_kernel below splits it across blocks.
template <class T>
__global__ void warp_scan_kernel(const T* in, T* out, int64_t lines, int64_t len, ScanOp op, bool reverse)
{
    using Acc = ScanAcc<T>;
    const int lane = threadIdx.x % kWarp;
    const int64_t warps_per_block = blockDim.x / kWarp;
    for (int64_t line = blockIdx.x * warps_per_block + threadIdx.x / kWarp; line < lines;
         line += int64_t(gridDim.x) * warps_per_block) {
        const T* src = in + line * len;
        T* dst = out + line * len;
        Acc carry = scan_identity<Acc>(op);
        for (int64_t k0 = 0; k0 < len; k0 += kWarp) {
            const int64_t k = k0 + lane, r = reverse ? len - 1 - k : k;
            Acc x = k < len ? Acc(src[r]) : scan_identity<Acc>(op);
            for (int d = 1; d < kWarp; d <<= 1) {
                const Acc y = __shfl_up_sync(kFullMask, x, d);
                if (lane >= d) x = scan_combine(op, y, x);
            }
            x = scan_combine(op, carry, x);
            if (k < len) dst[r] = static_cast<T>(x);
            carry = __shfl_sync(kFullMask, x, kWarp - 1);
        }
    }
}

// ---- a few long lines: the single-pass scan with decoupled look-back ----
// (Merrill & Garland 2016, "Single-pass Parallel Prefix Scan with Decoupled Look-back".)
//
// Thread mapping: one block per tile of kTileThreads x kTileItems = 2048 consecutive values
// of a line; a line of len values is ceil(len / 2048) tiles, and the tiles of all lines are
// numbered one after another (tile number -> (line, tile k of that line)), so one launch
// scans every line. A block scans its tile on its own (below), and needs only one number
// from outside: the combination of every value of its line before the tile (its exclusive
// prefix). It finds it from the tiles before it, which publish, in a global array, one
// state each:
//   kNotReady  nothing yet;
//   kAggregate the combination of the tile's own values (known as soon as it has scanned);
//   kPrefix    the combination of its line up to and including the tile (its inclusive prefix).
// A tile publishes its aggregate at once, then looks back: it combines the aggregates of
// the tiles before it, nearest first, until it meets a published prefix (tile 0 of a line
// publishes its prefix at once), then publishes its own prefix. So the blocks do not wait
// for each other one by one (a chain through every tile), and each value is read and
// written once: a single pass, where a scan-then-propagate takes two.
//
// Why tiles are numbered by an atomic counter, not by blockIdx: a block waits only for
// tiles before its own, and a tile number taken from the counter when the block has started
// belongs to a block that has started before it. On a GPU, blocks are not started in index
// order, and a block k whose tile k - 1 went to a block not yet started (waiting for a free
// place on an SM occupied by spinning blocks) could spin forever. With the counter, the
// lowest unfinished tile always belongs to a running block that waits for nothing, so the
// scan makes progress. The CUDA emulator runs the blocks one after another: there every
// earlier tile has finished, and a block never spins.
//
// Reverse scans (the derivative of cumsum) number the tiles from the line's end. Values are
// combined in Acc, as in the kernels above. The order in which a tile's prefix is combined
// depends on which predecessors had published their prefix when it looked: for floats the
// last bits may differ between runs on a GPU (as with CUB's scans); integers are exact.
constexpr int kTileThreads = 256;
constexpr int kTileItems = 8;  // values per thread: 2048 per tile
constexpr int64_t kTileMax = int64_t(kTileThreads) * kTileItems;
constexpr unsigned long long kNotReady = 0, kAggregate = 1, kPrefix = 2;

// The scratch of one launch: the counter tiles are taken from, and each tile's state.
// A tile's status flag and its value are separate words, each written once: the value is
// stored, then __threadfence() makes it visible to the whole GPU before the flag that
// announces it is set (atomicExch); a reader waits for the flag with volatile reads (never
// a copy cached in a register), fences, then reads the value (volatile: from memory). So a
// reader that sees kAggregate or kPrefix sees the matching value, never a torn pair.
template <class A>
struct TileStates {
    unsigned long long* next_tile;  // the tile counter, from 0
    unsigned long long* status;     // per tile: kNotReady (0), kAggregate or kPrefix
    A* aggregate;                   // per tile, set before status = kAggregate
    A* prefix;                      // per tile, set before status = kPrefix
};

template <class A>
__device__ void publish(const TileStates<A>& st, int64_t tile, unsigned long long status, A value)
{
    *static_cast<volatile A*>(status == kPrefix ? st.prefix + tile : st.aggregate + tile) = value;
    __threadfence();  // the value reaches memory before the flag that announces it
    atomicExch(st.status + tile, status);
}

// The exclusive prefix of `tile` (tile k > 0 of its line): called by a whole warp. Lane l
// looks at tile `tile - 1 - l` (32 predecessors at once), waits until it has published
// something, and reads it. The nearest lane that found a prefix ends the look-back: it and
// the lanes before it (nearer tiles, aggregates) are combined; lanes beyond a line's first
// tile count as a prefix of `one`, so the look-back stops at the line's start. Without a
// prefix in the window, the 32 aggregates are combined and the window moves 32 tiles back.
template <class A>
__device__ A look_back(const TileStates<A>& st, int64_t tile, int64_t k, A one, ScanOp op)
{
    const int lane = threadIdx.x % kWarp;
    auto combine = [op](A a, A b) { return scan_combine(op, a, b); };
    A exclusive = one;
    for (int64_t window = tile - 1, left = k;; window -= kWarp, left -= kWarp) {
        unsigned long long s = kPrefix;
        A v = one;
        if (lane < left) {  // tile window - lane is in this line
            const volatile unsigned long long* flag = st.status + (window - lane);
            while ((s = *flag) == kNotReady) {
#if MT_CUDA_EMULATED
                // Blocks run one after another here: an earlier tile that has not published
                // never will (a bug, not a wait), so fail the launch instead of hanging.
                throw std::logic_error("lookback_scan_kernel: a predecessor tile has not published");
#endif
            }
            __threadfence();  // the value is read after the flag that announced it
            v = *static_cast<const volatile A*>(s == kPrefix ? st.prefix + (window - lane)
                                                               : st.aggregate + (window - lane));
        }
        const unsigned prefixes = __ballot_sync(kFullMask, s == kPrefix);
        if (prefixes & ((1u << lane) - 1u)) v = one;  // a nearer lane found a prefix
        exclusive = combine(exclusive, warp_all_reduce(
                                           v, [](A x, int m) { return __shfl_xor_sync(kFullMask, x, m); }, combine));
        if (prefixes) return exclusive;
    }
}

// The tile itself, in shared memory (values: the tile, as Acc; 17 KiB for doubles, padded):
//   1. load: coalesced, value at j * blockDim + t of the tile to thread t;
//   2. thread t scans its run of `items` consecutive values of the tile, t * items ...;
//   3. the block scans the runs' totals: a warp's inclusive scan by shuffles (as in
//      warp_scan_kernel), then each thread combines the totals of the warps before its own;
//   4. warp 0 publishes the tile's aggregate, looks back, publishes its prefix;
//   5. each thread completes its run with what comes before it, and the block stores the
//      tile, coalesced as it loaded it.
// blockDim.x (a multiple of 32, at most kTileThreads) and items (at most kTileItems) make
// the tile; the tests make it small (MINITORCH_SCAN_TILE) to run many tiles in the emulator.
//
// Shared memory has 32 banks of 4 bytes, and the lanes of a warp that read different words
// of one bank wait for each other. In step 2 lane t reads word 2 * (t * items + j) (doubles):
// with 8 items, lanes 16 words apart, only two banks for all lanes. So the tile sits in
// values with one empty slot after every 16 values (padded): lane t's run moves by t / 2
// slots, and a half-warp's reads (a 64-bit access is served 16 lanes at a time) fall in 16
// different bank pairs. A run (at most 8 values, starting at a multiple of items) never
// crosses a gap, so it stays contiguous in values.
static_assert(16 % kTileItems == 0, "a run must not cross a gap of padded()");
__device__ inline int64_t padded(int64_t i) { return i + i / 16; }

template <class T>
__global__ void __launch_bounds__(kTileThreads)
    lookback_scan_kernel(const T* in, T* out, int64_t len, int64_t tiles_per_line, int items,
                         TileStates<ScanAcc<T>> st, ScanOp op, bool reverse)
{
    using A = ScanAcc<T>;
    __shared__ A values[kTileMax + kTileMax / 16];
    __shared__ A warp_totals[kTileThreads / kWarp];
    __shared__ A tile_prefix;
    __shared__ unsigned long long tile_number;
    const int t = threadIdx.x, lane = t % kWarp, warp = t / kWarp, warps = blockDim.x / kWarp;
    const A one = scan_identity<A>(op);
    auto combine = [op](A a, A b) { return scan_combine(op, a, b); };

    if (t == 0) tile_number = atomicAdd(st.next_tile, 1ull);  // see above: why not blockIdx
    __syncthreads();  // every thread reads tile_number
    const int64_t tile = int64_t(tile_number), line = tile / tiles_per_line, k = tile % tiles_per_line;
    const int64_t size = int64_t(blockDim.x) * items, start = k * size;
    const T* src = in + line * len;
    T* dst = out + line * len;

    for (int j = 0; j < items; ++j) {  // 1.
        const int64_t at = int64_t(j) * blockDim.x + t, p = start + at;
        values[padded(at)] = p < len ? A(src[reverse ? len - 1 - p : p]) : one;
    }
    __syncthreads();  // thread t's run was loaded by other threads

    A* run = values + padded(int64_t(t) * items);  // 2.
    for (int j = 1; j < items; ++j) run[j] = combine(run[j - 1], run[j]);

    A x = run[items - 1];  // 3.
    for (int d = 1; d < kWarp; d <<= 1) {
        const A y = __shfl_up_sync(kFullMask, x, d);
        if (lane >= d) x = combine(y, x);
    }
    if (lane == kWarp - 1) warp_totals[warp] = x;
    A before = __shfl_up_sync(kFullMask, x, 1);  // the runs before this one in its warp
    if (lane == 0) before = one;
    __syncthreads();  // every warp's total is written
    A warps_before = one, aggregate = one;
    for (int w = 0; w < warps; ++w) {
        if (w == warp) warps_before = aggregate;
        aggregate = combine(aggregate, warp_totals[w]);
    }
    before = combine(warps_before, before);

    if (warp == 0) {  // 4.
        A exclusive = one;
        if (k > 0) {
            if (lane == 0) publish(st, tile, kAggregate, aggregate);
            exclusive = look_back(st, tile, k, one, op);
        }
        if (lane == 0) {
            publish(st, tile, kPrefix, combine(exclusive, aggregate));
            tile_prefix = exclusive;
        }
    }
    __syncthreads();  // tile_prefix is written
    before = combine(tile_prefix, before);

    for (int j = 0; j < items; ++j) run[j] = combine(before, run[j]);  // 5.
    __syncthreads();  // every run is complete before threads store other threads' values
    for (int j = 0; j < items; ++j) {
        const int64_t at = int64_t(j) * blockDim.x + t, p = start + at;
        if (p < len) dst[reverse ? len - 1 - p : p] = static_cast<T>(values[padded(at)]);
    }
}

// cummax / cummin. Thread mapping as scan_kernel: one thread per line (o, :, i), adjacent
// threads on adjacent i (lines along a strided dim; contiguous lines take the next kernel).
// The best so far is replaced by a NaN, or (the best not a NaN) by a value >= it (cummax;
// <= cummin), so ties move the index to the later place, as PyTorch's.
template <class T>
__global__ void scan_extreme_kernel(const T* in, T* values, int64_t* indices, int64_t outer, int64_t len,
                                    int64_t inner, bool is_max)
{
    MT_GRID_STRIDE(line, outer * inner) {
        const int64_t o = line / inner, i = line % inner;
        T best = T(0);
        int64_t best_at = 0;
        for (int64_t r = 0; r < len; ++r) {
            const int64_t at = (o * len + r) * inner + i;
            const T v = in[at];
            if (r == 0 || is_nan(v) || (!is_nan(best) && (is_max ? v >= best : v <= best))) {
                best = v;
                best_at = r;
            }
            values[at] = best;
            indices[at] = best_at;
        }
    }
}


// cummax / cummin of contiguous lines (inner == 1), where a thread per line would read with
// a stride of a whole line. Thread mapping as warp_scan_kernel: one warp per line (8 lines
// per block, grid-striding over lines), 32 values per step. The running best is a (value,
// place) pair, and scan_extreme_kernel's rule is associative on pairs: the best of a later
// stretch of the line takes over from the best before it exactly when it would have in the
// walk one value at a time (takes_over). So the warp scans pairs as warp_scan_kernel scans
// sums (lane l combines with lane l - d), and the previous step's last pair is the carry.
template <class T>
__device__ bool takes_over(T later, T earlier, bool is_max)
{
    return is_nan(later) || (!is_nan(earlier) && (is_max ? later >= earlier : later <= earlier));
}

template <class T>
__global__ void warp_scan_extreme_kernel(const T* in, T* values, int64_t* indices, int64_t lines, int64_t len,
                                         bool is_max)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps_per_block = blockDim.x / kWarp;
    for (int64_t line = blockIdx.x * warps_per_block + threadIdx.x / kWarp; line < lines;
         line += int64_t(gridDim.x) * warps_per_block) {
        const int64_t first = line * len;
        T carry = T(0);
        int64_t carry_at = -1;  // no values before this step yet
        for (int64_t k0 = 0; k0 < len; k0 += kWarp) {
            int64_t at = k0 + lane;  // lanes past the end compute garbage no other lane reads
            T best = at < len ? in[first + at] : T(0);
            for (int d = 1; d < kWarp; d <<= 1) {
                const T other = __shfl_up_sync(kFullMask, best, d);
                const int64_t other_at = __shfl_up_sync(kFullMask, at, d);
                if (lane >= d && !takes_over(best, other, is_max)) {
                    best = other;
                    at = other_at;
                }
            }
            if (carry_at >= 0 && !takes_over(best, carry, is_max)) {
                best = carry;
                at = carry_at;
            }
            if (k0 + lane < len) {
                values[first + k0 + lane] = best;
                indices[first + k0 + lane] = at;
            }
            carry = __shfl_sync(kFullMask, best, kWarp - 1);
            carry_at = __shfl_sync(kFullMask, at, kWarp - 1);
        }
    }
}

}  // namespace

void scan_extreme(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (inner == 1 && len > 1) {
            const int64_t warps_per_block = kThreads / kWarp;
            const unsigned grid = unsigned(std::min<int64_t>((outer + warps_per_block - 1) / warps_per_block, 4096));
            MT_LAUNCH(std::max(grid, 1u), kThreads, 0, 0, warp_scan_extreme_kernel<T>)(
                in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer, len, is_max);
            return;
        }
        MT_LAUNCH(blocks_for(outer * inner), kThreads, 0, 0, scan_extreme_kernel<T>)(
            in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer, len, inner, is_max);
    });
    MT_CUDA_CHECK_LAUNCH("scan_extreme");
}

namespace {

// Which lines the look-back scan takes (thresholds reasoned, not yet timed on a GPU):
// contiguous lines (inner == 1), at least four tiles long (a shorter line is at most 256
// steps of its warp in warp_scan_kernel, and its tiles would spend their time looking back),
// and few enough that one warp per line leaves most of a GPU idle: an H100 / H200 holds
// 132 SMs x 64 = 8448 warps at once, and warp_scan_kernel's lines run len / 32 dependent
// steps each; at up to 4096 lines, under half the GPU's warps have a line.
constexpr int64_t kLookbackMinLen = 4 * kTileMax;
constexpr int64_t kLookbackMaxLines = 4096;

struct TileShape {
    int threads, items;
    bool forced;  // set by MINITORCH_SCAN_TILE: every contiguous line takes the look-back
};

// The tile of lookback_scan_kernel: kTileThreads x kTileItems, or, for tests, the size in
// MINITORCH_SCAN_TILE (a power of two from 32 to 2048: threads = max(32, size / 8)), which
// also sends every contiguous line there, so that a small test runs dozens of tiles.
TileShape lookback_tile()
{
    const char* env = std::getenv("MINITORCH_SCAN_TILE");
    if (!env || !*env) return {kTileThreads, kTileItems, false};
    const long size = std::strtol(env, nullptr, 10);
    MT_CHECK(size >= kWarp && size <= kTileMax && (size & (size - 1)) == 0,
             "cumsum / cumprod: MINITORCH_SCAN_TILE must be a power of two from ", kWarp, " to ", kTileMax,
             ", got '", env, "'");
    const int threads = int(std::max<long>(kWarp, size / kTileItems));
    return {threads, int(size / threads), true};
}

// Launches: one cudaMemsetAsync (the counter and the status flags to 0) and the kernel.
template <class T>
void lookback_scan(const T* in, T* out, int64_t lines, int64_t len, TileShape shape, ScanOp op, bool reverse,
                   Device dev)
{
    using A = ScanAcc<T>;
    static_assert(sizeof(A) == sizeof(int64_t), "tile values live in an int64 scratch");
    const int64_t size = int64_t(shape.threads) * shape.items, tiles_per_line = (len + size - 1) / size;
    const int64_t tiles = lines * tiles_per_line;
    MT_CHECK(tiles < (int64_t(1) << 31), "cumsum / cumprod: ", lines, " lines of ", len, " values are too many tiles");
    // [counter | status per tile | aggregate per tile | prefix per tile], 8 bytes each
    Tensor scratch = empty({1 + 3 * tiles}, DType::Int64, dev);
    int64_t* base = scratch->data_as<int64_t>();
    TileStates<A> st{reinterpret_cast<unsigned long long*>(base), reinterpret_cast<unsigned long long*>(base + 1),
                     reinterpret_cast<A*>(base + 1 + tiles), reinterpret_cast<A*>(base + 1 + 2 * tiles)};
    MT_CUDA_CHECK(cudaMemsetAsync(base, 0, size_t(1 + tiles) * sizeof(int64_t), 0));
    MT_LAUNCH(unsigned(tiles), unsigned(shape.threads), 0, 0, lookback_scan_kernel<T>)(
        in, out, len, tiles_per_line, shape.items, st, op, reverse);
}

// The pieces of chunked_scan: enough threads to fill an H100 / H200 (132 SMs x 2048 threads
// resident, about 2^18), each piece at least kChunkMin values (its walk outweighs reading
// its start); worth the two extra launches only from 4 pieces a line.
constexpr int64_t kChunkThreads = int64_t(1) << 18;
constexpr int64_t kChunkMin = 64;
int64_t scan_chunks(int64_t lines, int64_t len)
{
    const int64_t chunks = std::min((kChunkThreads + lines - 1) / lines, len / kChunkMin);
    return chunks >= 4 ? chunks : 1;
}

template <class T>
void chunked_scan(const T* in, T* out, int64_t outer, int64_t len, int64_t inner, int64_t chunks, ScanOp op,
                  bool reverse, Device dev)
{
    using A = ScanAcc<T>;
    const int64_t chunk = (len + chunks - 1) / chunks;
    chunks = (len + chunk - 1) / chunk;  // no empty piece at the end
    const Tensor totals = empty({outer, chunks, inner}, std::is_floating_point<A>::value ? DType::Float64 : DType::Int64,
                                dev);
    A* running = totals->data_as<A>();
    const int64_t threads = outer * chunks * inner;
    MT_LAUNCH(blocks_for(threads), kThreads, 0, 0, chunk_scan_kernel<T>)(in, nullptr, nullptr, running, outer, len,
                                                                         inner, chunks, chunk, op, reverse);
    MT_LAUNCH(blocks_for(outer * inner), kThreads, 0, 0, scan_kernel<A>)(running, running, outer, chunks, inner, op,
                                                                         false);
    MT_LAUNCH(blocks_for(threads), kThreads, 0, 0, chunk_scan_kernel<T>)(in, out, running, nullptr, outer, len, inner,
                                                                         chunks, chunk, op, reverse);
}

}  // namespace

// A ladder of kernels: one thread per line (strided lines, inner > 1), or pieces of lines
// (few long strided lines), one warp per line (contiguous lines), and the look-back scan
// (a few long contiguous lines: many blocks per line).
void scan(ScanOp op, const Tensor& out, const Tensor& in, bool reverse)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (inner == 1) {
            const TileShape tile = lookback_tile();
            if (tile.forced || (len >= kLookbackMinLen && outer <= kLookbackMaxLines)) {
                lookback_scan<T>(in->data_as<T>(), out->data_as<T>(), outer, len, tile, op, reverse, in->device());
                return;
            }
        }
        if (inner == 1 && len > 1) {
            const int64_t warps_per_block = kThreads / kWarp;
            const unsigned grid = unsigned(std::min<int64_t>((outer + warps_per_block - 1) / warps_per_block, 4096));
            MT_LAUNCH(std::max(grid, 1u), kThreads, 0, 0, warp_scan_kernel<T>)(in->data_as<T>(), out->data_as<T>(),
                                                                               outer, len, op, reverse);
            return;
        }
        const int64_t chunks = scan_chunks(outer * inner, len);
        if (chunks > 1) {
            chunked_scan<T>(in->data_as<T>(), out->data_as<T>(), outer, len, inner, chunks, op, reverse,
                            in->device());
            return;
        }
        MT_LAUNCH(blocks_for(outer * inner), kThreads, 0, 0, scan_kernel<T>)(
            in->data_as<T>(), out->data_as<T>(), outer, len, inner, op, reverse);
    });
    MT_CUDA_CHECK_LAUNCH("scan");
}

}  // namespace minitorch::cuda
