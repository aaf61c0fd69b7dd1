// sort.cu — CUDA kernels for sorting each line along the middle dim of a contiguous
// (outer, R, inner) tensor (sort, argsort, topk); layout as in kernels.h.
//
// The order is a strict total order on (value, place): by value (NaN above every number,
// descending reverses that), equal values by their place in the line, so every sort here is
// the stable sort. Two paths:
//   - a line of up to kBitonicMax values: one block sorts it in shared memory (bitonic);
//     MINITORCH_CUDA_SORT=block sends lines of more than 128 values (float32, float16,
//     bfloat16, bool) to CUB's BlockRadixSort instead, as PyTorch sorts them, in the nvcc
//     build (block_radix_sort_kernel; not yet measured against the bitonic kernel on a GPU);
//   - a longer line: its values are copied into a contiguous (lines, R) buffer (NaNs made one
//     NaN), sorted there, and written back through the sorted places. The sort is CUB's
//     radix sort in the nvcc build (as in PyTorch; see cub_sort_lines), bool lines aside;
//     the emulated build, where CUB's device code cannot compile, runs a merge sort made of the
//     kernels below (bitonic runs of kBitonicMax, then log2(R / kBitonicMax) merge passes).
//     MINITORCH_CUDA_SORT=merge sends the nvcc build there too, to compare the two on a GPU.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "common.cuh"
#include "minitorch/ops.h"

#if !MT_CUDA_EMULATED
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#endif

namespace minitorch::cuda {

namespace {

template <class T>
__device__ bool is_nan(T v)
{
    if constexpr (std::is_floating_point<T>::value) return v != v;
    else return false;
}

// a comes before b in ascending order: NaN is above every number, NaNs are equal.
template <class T>
__device__ bool less_nan_last(T a, T b)
{
    return is_nan(b) ? !is_nan(a) : a < b;
}

// The sorted order as a strict total order on (value, place): by value (NaN above every
// number; descending reverses that), equal values by place, so any sorting network gives
// the stable sort, and no two elements of a line are ever equal.
template <class T>
__device__ bool ordered_before(T a, int64_t a_at, T b, int64_t b_at, bool descending)
{
    if (descending ? less_nan_last(b, a) : less_nan_last(a, b)) return true;
    if (descending ? less_nan_last(a, b) : less_nan_last(b, a)) return false;
    return a_at < b_at;
}

// The same with the bitonic sort's padding: places >= len come after everything, by place
// among themselves.
template <class T>
__device__ bool comes_before(T a, int a_at, T b, int b_at, int len, bool descending)
{
    const bool a_pad = a_at >= len, b_pad = b_at >= len;
    if (a_pad || b_pad) return a_pad == b_pad ? a_at < b_at : b_pad;
    return ordered_before(a, a_at, b, b_at, descending);
}

// Lines up to this long are sorted by one block in shared memory: 4096 values and their
// int places are 48 KiB for 8-byte types, the most a block gets without opting in. (PyTorch
// sorts such lines the same way.) Longer lines are sorted in runs of this length first.
constexpr int64_t kBitonicMax = 4096;

// A long line's places travel with its values as int32 (a line has at most INT_MAX values, as
// in PyTorch): half the bytes of int64 for every pass of the sort to move. They become int64
// indices when the sorted line is written out.
using Place = int32_t;

// A value's bits turned into an unsigned number that orders as ordered_before does (NaN above
// every number, -0.0 equal to +0.0; descending: all bits flipped), for the types of at most 4
// bytes the sort kernels see: float32, bool, and float16 / bfloat16 in the bitonic kernel (sort16;
// narrow integers are widened to int64 first). A float: flip every bit of a negative, set the
// sign bit of a positive.
template <class T>
__device__ uint32_t ordered_bits(T v, bool descending)
{
    uint32_t u;
    if constexpr (std::is_same_v<T, float>) {
        u = v != v ? 0xFFFFFFFFu : (v == 0.0f ? 0x80000000u : half_bits::float_bits(v));
        if (v == v && v != 0.0f) u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        const float f = float(v);  // (NaN and zero read through float: every NaN and both zeros alike)
        u = f != f ? 0xFFFFu : (f == 0.0f ? 0x8000u : uint32_t(v.bits));
        if (f == f && f != 0.0f) u = (u & 0x8000u) ? (~u & 0xFFFFu) : (u | 0x8000u);
    } else {
        static_assert(std::is_same_v<T, bool>, "ordered_bits: float32, float16, bfloat16 or bool");
        u = v ? 1u : 0u;  // (a bool byte other than 0 or 1, as a reinterpreting view can make, is true)
    }
    return descending ? ~u : u;
}

// Whether the bitonic kernel sorts T as one 64-bit number per element: ordered_bits(value) << 32
// | place (float32, float16, bfloat16, bool). Places are unique, so no two numbers are equal,
// and `<` on them is the strict order of (value, place); the padding is all ones above, after
// every value.
template <class T>
constexpr bool kPackedSort = sizeof(T) <= 4;

template <class T>
size_t bitonic_shared_bytes(int P)
{
    return size_t(P) * (kPackedSort<T> ? sizeof(uint64_t) : sizeof(int) + sizeof(T));
}

// One bitonic network over the P staged elements: stage (k, j) calls compare_and_swap(p, q,
// ascending) for each of its pairs (see bitonic_sort_kernel).
template <class CompareAndSwap>
__device__ void bitonic_network(int P, CompareAndSwap compare_and_swap)
{
    for (int k = 2; k <= P; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = threadIdx.x; t < P / 2; t += blockDim.x) {
                const int p = 2 * t - (t & (j - 1));
                compare_and_swap(p, p + j, (p & k) == 0);
            }
            // A stage with j <= 32 pairs places within one 64-wide segment, and the segments a
            // thread touches (those of t, t + blockDim, ...) are its warp's for every such stage:
            // between two of them only the warp has to meet. Any other pair of stages (the next
            // one's j: j / 2, or the next k's first, k) needs the whole block.
            const int next_j = j > 1 ? j >> 1 : k;
            if (blockDim.x >= 32 && j <= 32 && next_j <= 32) __syncwarp();
            else __syncthreads();
        }
}

// Bitonic sort of pieces: a piece is a whole line when run >= len, else each run of `run`
// values of it (the last one may be shorter). Thread mapping: one block per piece, grid-
// striding over the pieces (line, k). The piece is staged in shared memory, padded to P (a
// power of two): for types of up to 4 bytes as one 64-bit number per element (kPackedSort),
// else as values and places side by side. Then, for each stage (k, j) of the network, thread t
// compare-and-swaps the pairs (p, p + j) where p is the t-th, (t + blockDim)-th, ... index
// with bit j clear, in ascending order where bit k of p is clear and descending where it is
// set. Every stage touches each element once; a barrier separates the stages (log2(P)
// (log2(P) + 1) / 2 of them): the block's, or only the warp's between two stages of j <= 32
// (for P = 1024, 40 of the 55). After the last, the piece is in order: it is written back to
// its own place in values (the places written, as I, are places in the whole line; a packed
// element's value is read again from `in` at its place, so a NaN keeps its own bits), the
// first out_len of each line only (topk: values and indices are (outer, out_len, inner)).
template <class T, class I>
__global__ void bitonic_sort_kernel(const T* in, T* values, I* indices, int64_t lines, int64_t len,
                                    int64_t out_len, int64_t inner, int64_t run, int P, bool descending)
{
    MT_DYNAMIC_SHARED(unsigned char, smem);
    const int64_t runs = (len + run - 1) / run;
    for (int64_t piece = blockIdx.x; piece < lines * runs; piece += gridDim.x) {
        const int64_t line = piece / runs, start = (piece % runs) * run;
        const int n = int(len - start < run ? len - start : run);
        const int64_t o = line / inner, i = line % inner;
        const int64_t base = o * len * inner + i + start * inner;  // element r of the piece is at base + r * inner
        const int64_t out = o * out_len * inner + i + start * inner;
        __syncthreads();  // the previous piece is written out
        if constexpr (kPackedSort<T>) {
            uint64_t* key = reinterpret_cast<uint64_t*>(smem);
            for (int p = threadIdx.x; p < P; p += blockDim.x)
                key[p] = (p < n ? uint64_t(ordered_bits(in[base + p * inner], descending)) : uint64_t(0xFFFFFFFFu))
                             << 32 | uint32_t(p);
            __syncthreads();
            bitonic_network(P, [&](int p, int q, bool ascending) {
                const uint64_t kp = key[p], kq = key[q];
                if ((kq < kp) == ascending) key[p] = kq, key[q] = kp;
            });
            for (int r = threadIdx.x; r < n && start + r < out_len; r += blockDim.x) {
                const int at = int(uint32_t(key[r]));
                values[out + r * inner] = in[base + at * inner];
                indices[out + r * inner] = I(start + at);
            }
        } else {
            int* at = reinterpret_cast<int*>(smem);                  // P places first: P * 4 bytes keep
            T* keys = reinterpret_cast<T*>(smem + P * sizeof(int));  // 8-byte alignment for P >= 2
            for (int p = threadIdx.x; p < P; p += blockDim.x) {
                at[p] = p;
                keys[p] = p < n ? in[base + p * inner] : T();
            }
            __syncthreads();
            bitonic_network(P, [&](int p, int q, bool ascending) {
                if (comes_before(keys[q], at[q], keys[p], at[p], n, descending) == ascending) {
                    const T kp = keys[p];
                    keys[p] = keys[q], keys[q] = kp;
                    const int ap = at[p];
                    at[p] = at[q], at[q] = ap;
                }
            });
            for (int r = threadIdx.x; r < n && start + r < out_len; r += blockDim.x) {
                values[out + r * inner] = keys[r];
                indices[out + r * inner] = I(start + at[r]);
            }
        }
    }
}

// The long lines are sorted in a contiguous (lines, len) copy, line = (o, i): a line along a
// strided dim (inner > 1) is moved to contiguous memory once here, so that the sort itself
// (CUB's sorts, the merge passes' binary searches) reads each line as one block of memory
// instead of every pass striding by inner. Thread mapping: one thread per element e = (line,
// r) of the copy. keys[e] = in[o, r, i] with every NaN (any sign or payload) made the one
// positive quiet NaN, and -0.0 made +0.0: a radix sort orders the bits, so a NaN with its
// sign bit set would otherwise come below -inf, and -0.0 before an equal +0.0 that comes
// earlier in the line (the stable sort keeps equal values in their order).
// at (CUB's sort only, else null): each element's place in the copy, at[e] = e.
template <class T>
__global__ void stage_lines_kernel(const T* in, T* keys, Place* at, int64_t lines, int64_t len, int64_t inner,
                                   DivideBy by_len, DivideBy by_inner)
{
    MT_GRID_STRIDE(e, lines * len) {
        const int64_t line = by_len(e), r = e - line * len, o = by_inner(line), i = line - o * inner;
        const T v = in[(o * len + r) * inner + i];
        if (at) at[e] = Place(e);
        if constexpr (std::is_floating_point<T>::value) keys[e] = is_nan(v) ? T(NAN) : (v == T(0) ? T(0) : v);
        else keys[e] = v;
    }
}

// One merge pass. Thread mapping: one thread per element e = (line, r) of the contiguous
// (lines, len) buffers, grid-striding. Each line is made of sorted runs of `width` values;
// runs 2m and 2m + 1 merge into one run of 2 * width. An element's place in the merged run
// is its place in its own run plus the number of elements of the partner run that come
// before it in the (value, place) order, and as the partner run is sorted, those are a
// prefix of it, found by binary search. Places are unique, so no two elements are equal:
// every element gets a destination of its own, and no thread waits for another.
template <class T>
__global__ void merge_pass_kernel(const T* keys, const Place* places, T* keys_out, Place* places_out,
                                  int64_t lines, int64_t len, int64_t width, bool descending)
{
    MT_GRID_STRIDE(e, lines * len) {
        const int64_t line = e / len, r = e % len;
        const int64_t merged = r - r % (2 * width);  // where the merged run starts
        const bool first = r - merged < width;
        const int64_t own = first ? merged : merged + width, partner = first ? merged + width : merged;
        const int64_t partner_len = partner >= len ? 0 : (len - partner < width ? len - partner : width);
        const T* key = keys + line * len;
        const Place* at = places + line * len;
        const T v = key[r];
        const Place p = at[r];
        int64_t lo = 0, hi = partner_len;  // the count is in [lo, hi]
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (ordered_before(key[partner + mid], at[partner + mid], v, p, descending)) lo = mid + 1;
            else hi = mid;
        }
        const int64_t to = line * len + merged + (r - own) + lo;
        keys_out[to] = v;
        places_out[to] = p;
    }
}

// Thread mapping: one thread per element (line, r) of the sorted copy: r-th of the line in
// sorted order is the element that was at place = places[line, r], so values[o, r, i] =
// in[o, place, i] (the original value: a NaN keeps its own bits) and indices[o, r, i] = place.
// (The merge sort's places are places in the line, CUB's places in the whole copy, line * len
// + place: % len gives the place in the line from either.) Only the first out_len of each
// line are written (topk): e = (line, r) with r < out_len.
template <class T>
__global__ void write_lines_kernel(const T* in, const Place* places, T* values, int64_t* indices, int64_t lines,
                                   int64_t len, int64_t out_len, int64_t inner, DivideBy by_out_len, DivideBy by_inner,
                                   DivideBy by_len)
{
    MT_GRID_STRIDE(e, lines * out_len) {
        const int64_t line = by_out_len(e), r = e - line * out_len, o = by_inner(line), i = line - o * inner;
        const int64_t at = places[line * len + r], place = at - by_len(at) * len;
        values[(o * out_len + r) * inner + i] = in[(o * len + place) * inner + i];
        indices[(o * out_len + r) * inner + i] = place;
    }
}

// One block per piece, P = the piece's length rounded up to a power of two (at least 2: the
// places before the values keep them 8-byte aligned).
template <class T, class I>
void launch_bitonic(const T* in, T* values, I* indices, int64_t lines, int64_t len, int64_t out_len, int64_t inner,
                    int64_t run, bool descending)
{
    int P = 2;
    while (P < std::min(len, run)) P *= 2;
    const int threads = std::min(P / 2, 1024);
    const int64_t pieces = lines * ((len + run - 1) / run);
    const unsigned grid = unsigned(std::min<int64_t>(pieces, int64_t(1) << 30));
    MT_LAUNCH(grid, threads, bitonic_shared_bytes<T>(P), 0, bitonic_sort_kernel<T, I>)(
        in, values, indices, lines, len, out_len, inner, run, P, descending);
    MT_CUDA_CHECK_LAUNCH("sort");
}

#if !MT_CUDA_EMULATED
// The bits of ordered_bits(v) that a radix sort has to look at: 32 for float32, 16 for float16
// and bfloat16, 1 for bool (descending flips all 32, and the bits above these are ignored).
template <class T>
constexpr int kOrderedBits = std::is_same_v<T, bool> ? 1 : int(sizeof(T) * 8);

// Lines of up to kBlock * kItems values, a line a block (grid-striding over the lines), by
// CUB's BlockRadixSort: each thread reads kItems values of the line, striped (value u * kBlock +
// t: adjacent threads read adjacent places, where inner == 1), as ordered_bits keys (places past
// the line: all ones, after every key), exchanged into the blocked order (thread t holds
// places t * kItems .. + kItems - 1) that the radix sort ranks in; its sort is stable, so equal
// keys keep the order of their places, and (key, place) is ordered_before's order. It leaves
// the sorted line striped: thread t's u-th is rank u * kBlock + t, written out as the bitonic
// kernel writes (the value read again from `in` at its place, the first out_len of each line).
template <class T, int kBlock, int kItems>
__global__ void __launch_bounds__(kBlock)
    block_radix_sort_kernel(const T* in, T* values, int64_t* indices, int64_t lines, int64_t len, int64_t out_len,
                            int64_t inner, bool descending)
{
    using Exchange = cub::BlockExchange<uint32_t, kBlock, kItems>;
    using Sort = cub::BlockRadixSort<uint32_t, kBlock, kItems, int>;
    __shared__ union {
        typename Exchange::TempStorage exchange;
        typename Sort::TempStorage sort;
    } temp;
    for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
        const int64_t o = line / inner, i = line % inner;
        const int64_t base = o * len * inner + i, out = o * out_len * inner + i;
        uint32_t key[kItems];
        int at[kItems];
MT_UNROLL
        for (int u = 0; u < kItems; ++u) {
            const int p = u * kBlock + int(threadIdx.x);
            key[u] = p < len ? ordered_bits(in[base + p * inner], descending) : 0xFFFFFFFFu;
        }
        __syncthreads();  // the previous line's sort is done with temp
        Exchange(temp.exchange).StripedToBlocked(key);
MT_UNROLL
        for (int u = 0; u < kItems; ++u) at[u] = int(threadIdx.x) * kItems + u;
        __syncthreads();  // the exchange is done with temp
        Sort(temp.sort).SortBlockedToStriped(key, at, 0, kOrderedBits<T>);
MT_UNROLL
        for (int u = 0; u < kItems; ++u) {
            const int r = u * kBlock + int(threadIdx.x);
            if (r < len && r < out_len) {
                values[out + r * inner] = in[base + at[u] * inner];
                indices[out + r * inner] = at[u];
            }
        }
    }
}

template <class T, int kBlock, int kItems>
void launch_block_radix(const T* in, T* values, int64_t* indices, int64_t lines, int64_t len, int64_t out_len,
                        int64_t inner, bool descending)
{
    const unsigned grid = unsigned(std::min<int64_t>(lines, int64_t(1) << 30));
    MT_LAUNCH(grid, kBlock, 0, 0, block_radix_sort_kernel<T, kBlock, kItems>)(in, values, indices, lines, len, out_len,
                                                                             inner, descending);
    MT_CUDA_CHECK_LAUNCH("sort");
}
#endif

// Sorts the short lines by CUB's BlockRadixSort where MINITORCH_CUDA_SORT=block asks for it (read
// at every call), and says whether it did: lines of 129 to kBitonicMax values of the types that
// have ordered_bits, in the nvcc build. (Shorter lines stay with the bitonic kernel, whose
// block is as small as the line; PyTorch sorts those by a warp merge sort.)
template <class T>
bool sorted_by_block_radix(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
#if !MT_CUDA_EMULATED
    if constexpr (kPackedSort<T>) {
        const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
        if (len <= 128 || len > kBitonicMax || !env_is("MINITORCH_CUDA_SORT", "block")) return false;
        const auto launch = len <= 1024 ? launch_block_radix<T, 256, 4>
                            : len <= 2048 ? launch_block_radix<T, 256, 8>
                                          : launch_block_radix<T, 512, 8>;
        launch(in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer * inner, len,
               values->shape[1], inner, descending);
        return true;
    }
#endif
    (void)values, (void)indices, (void)in, (void)descending;
    return false;
}

// The merge sort of the contiguous (lines, len) keys: bitonic runs of kBitonicMax into
// (keys2, places) (the runs' places written anew: the staged ones are r anyway), then merge
// passes that double the run width, ping-ponging between the two pairs of buffers. On return
// keys / places are the pair that holds the sorted lines.
template <class T>
void merge_sort_lines(Tensor& keys, Tensor& places, int64_t lines, int64_t len, bool descending)
{
    Tensor keys2 = empty(keys->shape, keys->dtype, keys->device());
    Tensor places2 = empty(places->shape, DType::Int32, places->device());
    launch_bitonic<T, Place>(keys->data_as<T>(), keys2->data_as<T>(), places->data_as<Place>(), lines, len, len, 1,
                             kBitonicMax, descending);
    std::swap(keys, keys2);
    for (int64_t width = kBitonicMax; width < len; width *= 2) {
        MT_LAUNCH(blocks_for(lines * len), kThreads, 0, 0, merge_pass_kernel<T>)(
            keys->data_as<T>(), places->data_as<Place>(), keys2->data_as<T>(), places2->data_as<Place>(), lines,
            len, width, descending);
        MT_CUDA_CHECK_LAUNCH("sort");
        std::swap(keys, keys2);
        std::swap(places, places2);
    }
}

#if !MT_CUDA_EMULATED
// MINITORCH_CUDA_SORT=merge: the nvcc build sorts long lines by the merge sort too. Read at
// every call, as the other switches.
bool merge_sort_forced()
{
    return env_is("MINITORCH_CUDA_SORT", "merge");
}

// Thread mapping: one thread per element j of the copy sorted by value: line[j] = the line
// the element came from (its place in the copy is places[j] = line * len + r).
__global__ void line_of_kernel(const Place* places, uint32_t* line, int64_t n, DivideBy by_len)
{
    MT_GRID_STRIDE(j, n) line[j] = uint32_t(by_len(places[j]));
}

// DeviceRadixSort: keys (and the places with them) into keys_out, places_out, ascending or
// descending; stable, -0.0 and +0.0 taken as equal, as `<` does. With temp == nullptr it
// only says how many temporary bytes it needs. end_bit: the key bits that matter.
template <class K>
cudaError_t cub_sort(void* temp, size_t& temp_bytes, const K* keys, K* keys_out, const Place* places,
                     Place* places_out, int n, bool descending, int end_bit)
{
    return descending ? cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys, keys_out, places, places_out,
                                                                  n, 0, end_bit, cudaStream_t(0))
                      : cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, keys_out, places, places_out, n, 0,
                                                        end_bit, cudaStream_t(0));
}

// One DeviceRadixSort, its temporary storage from minitorch's allocator (on stream 0, as
// every kernel here).
template <class K>
void cub_sort_pairs(const K* keys, K* keys_out, const Place* places, Place* places_out, int n, bool descending,
                    Device dev, int end_bit = int(sizeof(K) * 8))
{
    size_t temp_bytes = 0;
    MT_CUDA_CHECK(cub_sort<K>(nullptr, temp_bytes, keys, keys_out, places, places_out, n, descending, end_bit));
    Tensor temp = empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
    MT_CUDA_CHECK(
        cub_sort<K>(temp->data_as<uint8_t>(), temp_bytes, keys, keys_out, places, places_out, n, descending, end_bit));
}

// CUB's radix sort of the contiguous (lines, len) keys, every line on its own, as two stable
// sorts of the whole copy: by value, carrying each element's
// place in the copy; then by line, carrying the same places. The second sort is stable, so
// within each line the elements stay in the order of the first: by value, equal values by
// place. Both sorts spread over the whole GPU however few the lines (a flat tensor of a
// million values is one line: then the first is all), and the second looks only at the bits
// of a line number. (Not DeviceSegmentedRadixSort: one block per line, and its kernel spills
// registers for float keys on sm_80 or sm_90, whichever int type the places are.)
// at: each element's place in the copy (at[e] = e, written as the copy was staged).
template <class T>
void cub_sort_lines(Tensor& keys, Tensor& places, Tensor at, int64_t lines, int64_t len, bool descending)
{
    const Device dev = keys->device();
    const int n = int(lines * len);
    Tensor sorted = empty(keys->shape, keys->dtype, dev);
    cub_sort_pairs<T>(keys->data_as<T>(), sorted->data_as<T>(), at->data_as<Place>(), places->data_as<Place>(), n,
                      descending, dev);
    keys = sorted;  // its lines are mixed until the second sort: only the places are read after it
    if (lines == 1) return;
    Tensor line = empty({n}, DType::Int32, dev), line_sorted = empty({n}, DType::Int32, dev);
    MT_LAUNCH(blocks_for(n), kThreads, 0, 0, line_of_kernel)(places->data_as<Place>(), line->data_as<uint32_t>(), n,
                                                               DivideBy(len, n));
    MT_CUDA_CHECK_LAUNCH("sort");
    int line_bits = 1;
    while ((int64_t(1) << line_bits) < lines) ++line_bits;
    cub_sort_pairs<uint32_t>(line->data_as<uint32_t>(), line_sorted->data_as<uint32_t>(), places->data_as<Place>(),
                             at->data_as<Place>(), n, false, dev, line_bits);
    places = at;
}
#endif

// Whether CUB sorts the contiguous (lines, len) copy. It cannot in the emulated build, is not
// wanted with MINITORCH_CUDA_SORT=merge, counts in int (the places in a copy of more than
// INT_MAX values would not fit), and is not used for bool lines: CUB's kernels for 1-byte keys
// with int values spill registers on sm_80 (so they are not even instantiated). The merge
// sort takes those.
template <class T>
bool cub_takes(int64_t lines, int64_t len)
{
#if !MT_CUDA_EMULATED
    if constexpr (!std::is_same_v<T, bool>) return !merge_sort_forced() && lines * len <= INT_MAX;
#endif
    (void)lines, (void)len;
    return false;
}

// Lines longer than kBitonicMax: copied contiguous (NaNs made one NaN), sorted by CUB or the
// merge sort, written back through the sorted places.
template <class T>
void sort_long_lines(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2], lines = outer * inner;
    const int64_t out_len = values->shape[1];
    const Device dev = in->device();
    MT_CHECK(len <= INT_MAX, "sort: the dimension being sorted can not have more than INT_MAX (", INT_MAX,
             ") elements on CUDA, got ", len);
    const bool by_cub = cub_takes<T>(lines, len);
    Tensor keys = empty({lines, len}, in->dtype, dev), places = empty({lines, len}, DType::Int32, dev);
    Tensor at = by_cub ? empty({lines * len}, DType::Int32, dev) : Tensor();
    MT_LAUNCH(blocks_for(lines * len), kThreads, 0, 0, stage_lines_kernel<T>)(
        in->data_as<T>(), keys->data_as<T>(), at ? at->data_as<Place>() : nullptr, lines, len, inner,
        DivideBy(len, lines * len), DivideBy(inner, lines));
    MT_CUDA_CHECK_LAUNCH("sort");
#if !MT_CUDA_EMULATED
    if constexpr (!std::is_same_v<T, bool>)
        if (by_cub) cub_sort_lines<T>(keys, places, at, lines, len, descending);
#endif
    if (!by_cub) merge_sort_lines<T>(keys, places, lines, len, descending);
    MT_LAUNCH(blocks_for(lines * out_len), kThreads, 0, 0, write_lines_kernel<T>)(
        in->data_as<T>(), places->data_as<Place>(), values->data_as<T>(), indices->data_as<int64_t>(), lines, len,
        out_len, inner, DivideBy(out_len, lines * out_len), DivideBy(inner, lines), DivideBy(len, lines * len));
    MT_CUDA_CHECK_LAUNCH("sort");
}

}  // namespace

namespace {

// Lines of up to kBitonicMax values: one bitonic launch, each line a piece of its own.
template <class T>
void sort_short_lines(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
    if (sorted_by_block_radix<T>(values, indices, in, descending)) return;
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2];
    launch_bitonic<T, int64_t>(in->data_as<T>(), values->data_as<T>(), indices->data_as<int64_t>(), outer * inner, len,
                               values->shape[1], inner, len, descending);
}

}  // namespace

void sort(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
    if (!values->numel()) return;
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (in->shape[1] <= kBitonicMax)
            sort_short_lines<T>(values, indices, in, descending);
        else
            sort_long_lines<T>(values, indices, in, descending);
    });
}

// The table's sort entry: float16 / bfloat16 lines of up to kBitonicMax values are sorted by the
// bitonic kernel as they are (packed keys: one launch, no staging copies); longer lines, and
// the narrow integer types, through Widen (float32 / int64 stand-ins), as every kernel without a
// 16-bit form.
void sort16(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
    if (is_16bit(in->dtype) && values->dtype == in->dtype && in->shape[1] <= kBitonicMax) {
        if (!values->numel()) return;
        if (in->dtype == DType::Float16) return sort_short_lines<Half>(values, indices, in, descending);
        return sort_short_lines<BFloat16>(values, indices, in, descending);
    }
    MT_WIDEN(sort, const Tensor&, const Tensor&, const Tensor&, bool)(values, indices, in, descending);
}

}  // namespace minitorch::cuda
