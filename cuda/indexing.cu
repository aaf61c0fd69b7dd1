// indexing.cu — CUDA kernels that index by tensors: whole rows (index_select and its
// backward), elements along one dim (gather, scatter: also index_add / index_copy /
// index_fill through an expanded index), NumPy's advanced indexing (index_put), cat in one
// launch for all its inputs, and nonzero. Layouts are those of kernels.h (same as the
// CPU); the geometry structs are minitorch/index_math.h, shared with cpu/indexing.cpp.
//
// Indices are checked where they are read: a bad one is recorded for the next
// synchronization (index_check.cu) and its element is skipped (gather writes 0 there).
//
// Kernels that only move elements (gather, index_select, put, read) run on an unsigned
// type of the element's size, so every dtype -- float16 / bfloat16 and the narrow integers
// included -- is read in place, with no staging copies. Adding (scatter_add, index_put with
// accumulate, index_add) and scatter_reduce's other reductions compute in the dtype: the
// storage-only dtypes reach them through Widen (runtime.cu), combined in float32 (or int64)
// and rounded once.
#include "common.cuh"
#include "minitorch/index_math.h"

namespace minitorch::cuda {

namespace {

// Thread mapping: one thread per element i of out (row b = i / row, column i % row),
// grid-stride. Each thread checks its row's index (the column-0 thread reports a bad one;
// the whole row gets zeros). The readable version: each thread reads the index, waits for it,
// reads the value, waits again; gather_rows_phased_kernel below keeps more reads in flight.
template <class T>
__global__ void gather_rows_kernel(const T* in, T* out, const int64_t* index, int64_t n, int64_t row, DivideBy by_row,
                                   IndexCheck c, IndexFaults faults)
{
    MT_GRID_STRIDE(i, n * row) {
        const int64_t b = by_row(i), j = i - b * row;
        int64_t k;
        if (resolve_index(index[b], c, k)) {
            out[i] = in[k * row + j];
        } else {
            if (j == 0) faults.report(c, index[b], b);
            out[i] = T{};  // zero bits: 0, +0.0, false
        }
    }
}

// Each thread of a phased gather takes this many elements (see gather_phased_kernel).
constexpr int kGatherUnroll = 4;

// The second phase of a phased gather: each of a thread's raw indices resolved (ok) and the value
// it names read, at in[at(u, k)] for element u and resolved index k; zero bits for a bad index.
// The elements of a thread's last step past the end take index 0 and their offsets 0: a read of
// the first element (there is one when any index is good), never past the end.
template <class T, class At>
__device__ __forceinline__ void read_named_values(T (&v)[kGatherUnroll], bool (&ok)[kGatherUnroll],
                                                  const int64_t (&raw)[kGatherUnroll], const T* __restrict__ in,
                                                  const IndexCheck& c, At at)
{
    MT_UNROLL
    for (int u = 0; u < kGatherUnroll; ++u) {
        int64_t k = 0;
        ok[u] = resolve_index(raw[u], c, k);
        v[u] = ok[u] ? in[at(u, k)] : T{};  // zero bits: 0, +0.0, false
    }
}

// Thread mapping: each thread takes kGatherUnroll elements i, i + stride, ... of out (row
// b = i / row, column i % row), grid-stride, in gather_phased_kernel's phases: the index reads,
// then the value reads, then the stores. Each element checks its row's index (the column-0
// one reports a bad one; the whole row gets zeros).
template <class T>
__global__ void gather_rows_phased_kernel(const T* __restrict__ in, T* __restrict__ out,
                                          const int64_t* __restrict__ index, int64_t n, int64_t row, DivideBy by_row,
                                          IndexCheck c, IndexFaults faults)
{
    const int64_t stride = int64_t(gridDim.x) * blockDim.x, total = n * row;
    for (int64_t i0 = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i0 < total; i0 += kGatherUnroll * stride) {
        int64_t j[kGatherUnroll], raw[kGatherUnroll];
        MT_UNROLL
        for (int u = 0; u < kGatherUnroll; ++u) {  // past the end: index 0, column 0 (read, not stored)
            const int64_t i = i0 + u * stride, b = i < total ? by_row(i) : 0;
            j[u] = i < total ? i - b * row : 0;
            raw[u] = i < total ? index[b] : 0;
        }
        T v[kGatherUnroll];
        bool ok[kGatherUnroll];
        read_named_values(v, ok, raw, in, c, [&](int u, int64_t k) { return k * row + j[u]; });
        MT_UNROLL
        for (int u = 0; u < kGatherUnroll; ++u)
            if (i0 + u * stride < total) out[i0 + u * stride] = v[u];
        MT_UNROLL
        for (int u = 0; u < kGatherUnroll; ++u) {
            const int64_t i = i0 + u * stride;
            if (i < total && !ok[u] && j[u] == 0) faults.report(c, raw[u], (i - j[u]) / (row ? row : 1));
        }
    }
}

// *place += v for every dtype a kernel sees: float and double have atomicAdd; int64 adds as
// unsigned long long (two's complement: the same bits; nvcc has no atomicAdd for long);
// bool adds as "or" (True + True is True), which a plain store of true does.
template <class T>
__device__ __forceinline__ void atomic_add_value(T* place, T v)
{
    if constexpr (std::is_same_v<T, bool>) {
        if (v) *place = true;
    } else if constexpr (std::is_same_v<T, int64_t>) {
        atomicAdd(reinterpret_cast<unsigned long long*>(place), static_cast<unsigned long long>(v));
    } else {
        atomicAdd(place, v);
    }
}

// *place = scatter_combine(op, *place, v) atomically, for the reductions with no atomic
// instruction (product, NaN-keeping max and min): read the place, combine, and swap the
// result in only if the place still holds what was read (atomicCAS on the element's bits),
// else try again with what it holds now. Nothing is written when the combination leaves
// the place as it was (a max below it). bool has no 1-byte CAS, and needs none: "and" and
// "or" are a plain store of false or true, or nothing.
template <class T>
__device__ __forceinline__ void atomic_combine(WriteOp op, T* place, T v)
{
    if constexpr (std::is_same_v<T, bool>) {
        const bool to = op == WriteOp::Max;  // Max is "or", Mul and Min are "and"
        if (v == to) *place = to;
    } else {
        static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic_combine: 4- or 8-byte elements");
        using Bits = std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>;
        Bits* at = reinterpret_cast<Bits*>(place);
        Bits seen = *at, was;
        do {
            was = seen;
            T now, next;
            memcpy(&now, &was, sizeof(T));
            next = scatter_combine(op, now, v);
            Bits next_bits;
            memcpy(&next_bits, &next, sizeof(T));
            if (next_bits == was) return;
            seen = atomicCAS(at, was, next_bits);
        } while (seen != was);
    }
}

// Thread mapping: one thread per element i of in (row b = i / row, column i % row),
// grid-stride; two rows may land on one: atomicAdd (as PyTorch's embedding backward and
// index_add_ on a GPU: the sum's order, so its last bits, may vary from run to run).
template <class T>
__global__ void scatter_add_rows_kernel(const T* in, T* out, const int64_t* index, int64_t n, int64_t row,
                                        DivideBy by_row, IndexCheck c, IndexFaults faults)
{
    MT_GRID_STRIDE(i, n * row) {
        const int64_t b = by_row(i), j = i - b * row;
        int64_t k;
        if (!resolve_index(index[b], c, k)) {
            if (j == 0) faults.report(c, index[b], b);
        } else if (k != c.ignore) {  // c.ignore: embedding's padding_idx, whose rows add nothing
            atomicAdd(out + k * row + j, in[i]);
        }
    }
}

// Thread mapping: one thread per element of in. Two rows naming one index race, and
// either may win (as PyTorch's index_copy_ on a GPU).
template <class T>
__global__ void put_rows_kernel(const T* in, T* out, const int64_t* index, int64_t n, int64_t row, DivideBy by_row)
{
    MT_GRID_STRIDE(i, n * row) {
        const int64_t b = by_row(i);
        out[index[b] * row + (i - b * row)] = in[i];
    }
}

// Thread mapping: one thread per element of index (= of out), grid-stride; reads one
// element of in, any strides (g, index_math.h). The readable version of gather_phased_kernel.
template <class T>
__global__ void gather_kernel(T* out, const T* in, const int64_t* index, DimIndexing g, IndexCheck c,
                              IndexFaults faults)
{
    MT_GRID_STRIDE(i, g.numel) {
        int64_t s, o, x, k;
        g.offsets(i, s, o, x);
        if (resolve_index(index[x], c, k)) {
            out[o] = in[s + k * g.self_dim_stride];
        } else {
            faults.report(c, index[x], i);
            out[o] = T{};
        }
    }
}

// Thread mapping: each thread takes kGatherUnroll elements of index (= of out), i, i + stride,
// ... (neighbouring threads take neighbouring elements), grid-stride; each reads one element of
// in, any strides (g, index_math.h). A gather is two reads, the second waiting on the first (the
// index, then the value it names), so the kernel works in phases: all of a thread's index reads,
// then all of its value reads, then the stores. Each phase's reads are in flight together, and
// nothing in between may stop the compiler from issuing them so: __restrict__ says out is none
// of the inputs (else every store could change what the next read sees, and each value read
// would wait for the store before it), and a bad index is reported after the stores.
// tests/tools/test_sass.py checks the compiled kernel for the two batches of reads.
template <class T>
__global__ void gather_phased_kernel(T* __restrict__ out, const T* __restrict__ in, const int64_t* __restrict__ index,
                                     DimIndexing g, IndexCheck c, IndexFaults faults)
{
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i0 = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i0 < g.numel; i0 += kGatherUnroll * stride) {
        int64_t s[kGatherUnroll], o[kGatherUnroll], raw[kGatherUnroll];
        MT_UNROLL
        for (int u = 0; u < kGatherUnroll; ++u) {  // past the end: element 0 (read if it exists, not stored)
            int64_t x = 0;
            s[u] = o[u] = 0;
            if (i0 + u * stride < g.numel) g.offsets(i0 + u * stride, s[u], o[u], x);
            raw[u] = i0 + u * stride < g.numel ? index[x] : 0;
        }
        T v[kGatherUnroll];
        bool ok[kGatherUnroll];
        read_named_values(v, ok, raw, in, c, [&](int u, int64_t k) { return s[u] + k * g.self_dim_stride; });
        MT_UNROLL
        for (int u = 0; u < kGatherUnroll; ++u)
            if (i0 + u * stride < g.numel) out[o[u]] = v[u];
        MT_UNROLL
        for (int u = 0; u < kGatherUnroll; ++u)
            if (i0 + u * stride < g.numel && !ok[u]) faults.report(c, raw[u], i0 + u * stride);
    }
}

// Thread mapping: one thread per element of index (= of src), grid-stride. Two threads
// may name one place of out: a put lets any one win, the reductions combine atomically.
template <class T, WriteOp kOp>
__global__ void scatter_kernel(T* out, const T* src, const int64_t* index, DimIndexing g, IndexCheck c,
                               IndexFaults faults)
{
    MT_GRID_STRIDE(i, g.numel) {
        int64_t s, o, x, k;
        g.offsets(i, s, o, x);
        if (!resolve_index(index[x], c, k)) {
            faults.report(c, index[x], i);
            continue;
        }
        T* place = out + s + k * g.self_dim_stride;
        if constexpr (kOp == WriteOp::Put) *place = src[o];
        else if constexpr (kOp == WriteOp::Add) atomic_add_value(place, src[o]);
        else atomic_combine(kOp, place, src[o]);
    }
}

// Thread mapping: one thread per element (b, r) of values, grid-stride: index position b
// (its k indices, each checked), element r of the rest. read: values = self there;
// otherwise writes (Put: any one of equal places wins) or adds atomically.
template <class T, bool kAdd>
__global__ void index_put_kernel(T* self, T* values, AdvancedIndexing g, const char* op, IndexFaults faults, bool read)
{
    MT_GRID_STRIDE(i, g.nb * g.rest_numel) {
        const int64_t b = g.by_rest_numel(i), r = i - b * g.rest_numel;
        int64_t off, v_off;
        g.rest_offsets(r, off, v_off);
        v_off += b * g.value_stride;
        bool ok = true;
        for (int j = 0; j < g.k && ok; ++j) {
            const IndexCheck c = advanced_check(g, j, op);
            int64_t k;
            ok = resolve_index(g.index(j, b), c, k);
            if (ok) off += k * g.stride[j];
            else faults.report(c, g.index(j, b), b);
        }
        if (!ok) {
            if (read) values[v_off] = T{};
            continue;
        }
        if (read) values[v_off] = self[off];
        else if constexpr (kAdd) atomic_add_value(self + off, values[v_off]);
        else self[off] = values[v_off];
    }
}

// cat: the inputs of one launch, seen as (outer, size, inner) with inner contiguous; in
// units (see cat_unit: an element, or up to 16 bytes of elements). At most kCatPieces per
// launch (the struct is a kernel parameter, < 4 KiB).
constexpr int kCatPieces = 64;
struct CatPiece {
    const char* data;
    int64_t start, size, outer_stride, dim_stride;  // start: first row of out along dim
};
struct CatArgs {
    int n = 0;
    int64_t outer = 1, inner = 1, total = 0;  // total: out's size along dim
    int64_t r0 = 0, rows = 0;                  // the rows of out this launch writes
    PlaneIndex split;                          // a flat index -> (outer, row - r0, inner)
    CatPiece piece[kCatPieces];
};

// 16 bytes moved as one: on a GPU, one 128-bit load and one store.
struct alignas(16) Bytes16 {
    uint64_t lo, hi;
};

// The last of the n pieces whose first row (start) is at or before row r: a binary search.
template <class Piece>
__device__ __forceinline__ int piece_of(const Piece* piece, int n, int64_t r)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (piece[mid].start <= r) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// Thread mapping: one thread per unit of out in rows [r0, r0 + rows) along dim, grid-stride;
// it splits its index by multiply-highs (no 64-bit division), finds its input by a binary
// search over the pieces' first rows, and copies one unit (U: an unsigned type of the unit's
// size, so any dtype; Bytes16 moves 4 floats or 8 halves at a time).
template <class U>
__global__ void cat_kernel(U* out, CatArgs a)
{
    MT_GRID_STRIDE(i, a.outer * a.rows * a.inner) {
        int64_t o, r, c;
        a.split.of(i, o, r, c);
        r += a.r0;
        const CatPiece& p = a.piece[piece_of(a.piece, a.n, r)];
        const U* src = reinterpret_cast<const U*>(p.data);
        out[(o * a.total + r) * a.inner + c] = src[o * p.outer_stride + (r - p.start) * p.dim_stride + c];
    }
}

// cat of inputs in layouts the pieces above cannot describe (a transposed input), when out
// has at most kCatDims dims: each piece keeps its own stride for every dim of out.
constexpr int kCatDims = 4;
struct StridedCatPiece {
    const char* data;
    int64_t start, stride[kCatDims];  // start: first row of out along dim
};
struct StridedCatArgs {
    int n = 0, ndim = 0, dim = 0;
    int64_t shape[kCatDims] = {};  // out's shape, with `rows` along dim
    int64_t r0 = 0, rows = 0, numel = 0, total = 0;
    StridedCatPiece piece[kCatPieces];
};
static_assert(sizeof(StridedCatArgs) < 4000 && sizeof(CatArgs) < 4000, "kernel parameters must fit in 4 KiB");

// Thread mapping: one thread per element of out in rows [r0, r0 + rows) along dim,
// grid-stride; it splits its position into out's coordinates (row-major), finds its input
// by the coordinate along dim, and reads it through that input's strides.
template <class U>
__global__ void cat_strided_kernel(U* out, StridedCatArgs a)
{
    MT_GRID_STRIDE(i, a.numel) {
        int64_t coord[kCatDims], rest = i;
        for (int d = a.ndim - 1; d >= 0; --d) {
            coord[d] = rest % a.shape[d];
            rest /= a.shape[d];
        }
        const int64_t r = coord[a.dim] + a.r0;
        const StridedCatPiece& p = a.piece[piece_of(a.piece, a.n, r)];
        int64_t src = 0, dst = 0;
        for (int d = 0; d < a.ndim; ++d) {
            const int64_t c = d == a.dim ? r : coord[d];
            dst = dst * (d == a.dim ? a.total : a.shape[d]) + c;
            src += (d == a.dim ? r - p.start : c) * p.stride[d];
        }
        out[dst] = reinterpret_cast<const U*>(p.data)[src];
    }
}

struct NonzeroShape {
    int ndim;
    int64_t shape[kMaxDims];
};

// Thread mapping: ONE block of kThreads threads walks `in` in chunks of kThreads elements
// (a compaction needs every earlier element's count: one block keeps it simple, at the
// price of n / kThreads sequential steps). Per chunk, each thread flags its element and
// an inclusive scan (Hillis-Steele) in shared memory gives each non-zero element its
// place: base + its prefix - 1. Rows past `limit` are not written; count gets the total.
template <class T>
__global__ void nonzero_kernel(const T* in, int64_t n, int64_t* out, int64_t limit, int64_t* count, NonzeroShape s)
{
    __shared__ int64_t sums[kThreads];
    const int t = int(threadIdx.x);
    int64_t base = 0;
    for (int64_t start = 0; start < n; start += kThreads) {
        const int64_t i = start + t;
        const bool flag = i < n && in[i] != T(0);
        sums[t] = flag;
        __syncthreads();  // every flag is in place before the scan reads its neighbours
        for (int step = 1; step < kThreads; step *= 2) {
            const int64_t add = t >= step ? sums[t - step] : 0;
            __syncthreads();  // this step's reads are done before anyone writes
            sums[t] += add;
            __syncthreads();  // this step's writes are seen by the next step's reads
        }
        const int64_t pos = base + sums[t] - 1;
        if (flag && pos < limit) {
            int64_t* row = out + pos * (s.ndim ? s.ndim : 1);
            if (s.ndim == 0) row[0] = 0;
            for (int64_t d = s.ndim - 1, r = i; d >= 0; --d) {
                row[d] = r % s.shape[d];
                r /= s.shape[d];
            }
        }
        base += sums[kThreads - 1];
        __syncthreads();  // everyone has read sums[last] before the next chunk overwrites sums
    }
    if (t == 0 && count) *count = base;
}

// The piece for input t of cat when it is (outer, size, inner) with inner contiguous and
// its outer dims one stride apart; false otherwise (the caller packs it).
bool cat_piece(const Tensor& t, int64_t dim, CatPiece& p)
{
    int64_t inner = 1;
    for (int64_t d = t->dim() - 1; d > dim; --d) {
        if (t->shape[size_t(d)] != 1 && t->strides[size_t(d)] != inner) return false;
        inner *= t->shape[size_t(d)];
    }
    p.dim_stride = t->strides[size_t(dim)];
    p.outer_stride = 0;
    int64_t next_stride = -1, next_size = 1;  // the outer dim just inside the one looked at
    for (int64_t d = dim - 1; d >= 0; --d) {
        if (t->shape[size_t(d)] == 1) continue;
        if (next_stride < 0) p.outer_stride = t->strides[size_t(d)];
        else if (t->strides[size_t(d)] != next_stride * next_size) return false;
        next_stride = t->strides[size_t(d)];
        next_size = t->shape[size_t(d)];
    }
    p.data = t->data();
    p.size = t->shape[size_t(dim)];
    return true;
}

// Launches kernel<U> with U a type of `unit` bytes (1, 2, 4, 8 or 16), for kernels that only
// move elements: an unsigned integer, or Bytes16.
template <class Launch>
void by_unit_size(int64_t unit, Launch&& launch)
{
    switch (unit) {
        case 1: launch(uint8_t{}); break;
        case 2: launch(uint16_t{}); break;
        case 4: launch(uint32_t{}); break;
        case 8: launch(uint64_t{}); break;
        default: launch(Bytes16{}); break;
    }
}

// The same with U of out's element size.
template <class Launch>
void by_element_size(const Tensor& out, Launch&& launch)
{
    by_unit_size(int64_t(itemsize(out->dtype)), launch);
}

template <WriteOp kOp, class Tg>
void launch_scatter(Tg, const Tensor& out, const Tensor& src, const Tensor& index, const DimIndexing& g,
                    const IndexCheck& check)
{
    using T = typename Tg::type;
    MT_LAUNCH(blocks_for(g.numel), kThreads, 0, 0, scatter_kernel<T, kOp>)(
        out->data_as<T>(), src->data_as<T>(), index->data_as<int64_t>(), g, check, index_faults(check.op));
}

// The reductions compute in the dtype (bool, int64, float32, float64: see scatter16).
template <WriteOp kOp>
void scatter_in_dtype(const Tensor& out, const Tensor& src, const Tensor& index, const DimIndexing& g,
                      const IndexCheck& check)
{
    dispatch(out->dtype, [&](auto tag) { launch_scatter<kOp>(tag, out, src, index, g, check); });
}

// MINITORCH_CUDA_GATHER=simple: gather and index_select through the readable one-element-a-
// thread kernels instead of the phased ones (to compare the two in one run). Read at every call.
bool gather_simple_forced() { return env_is("MINITORCH_CUDA_GATHER", "simple"); }

}  // namespace

void gather_rows(const Tensor& out, const Tensor& in, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel(), row = n ? out->numel() / n : 0;
    by_element_size(in, [&](auto unsigned_tag) {
        using T = decltype(unsigned_tag);
        const T* x = in->data_as<T>();
        const int64_t* i = index->data_as<int64_t>();
        if (gather_simple_forced())
            MT_LAUNCH(blocks_for(n * row), kThreads, 0, 0, gather_rows_kernel<T>)(
                x, out->data_as<T>(), i, n, row, DivideBy(row, n * row), check, index_faults(check.op));
        else
            MT_LAUNCH(blocks_for((n * row + kGatherUnroll - 1) / kGatherUnroll), kThreads, 0, 0,
                      gather_rows_phased_kernel<T>)(x, out->data_as<T>(), i, n, row, DivideBy(row, n * row), check,
                                                    index_faults(check.op));
    });
    MT_CUDA_CHECK_LAUNCH("gather_rows");
}

void scatter_add_rows(const Tensor& out, const Tensor& in, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel(), row = n ? in->numel() / n : 0;
    dispatch_floating(out->dtype, "scatter_add_rows", [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(n * row), kThreads, 0, 0, scatter_add_rows_kernel<T>)(
            in->data_as<T>(), out->data_as<T>(), index->data_as<int64_t>(), n, row, DivideBy(row, n * row), check,
            index_faults(check.op));
    });
    MT_CUDA_CHECK_LAUNCH("scatter_add_rows");
}

void put_rows(const Tensor& out, const Tensor& in, const Tensor& index)
{
    const int64_t n = index->numel(), row = n ? in->numel() / n : 0;
    by_element_size(in, [&](auto unsigned_tag) {
        using T = decltype(unsigned_tag);
        MT_LAUNCH(blocks_for(n * row), kThreads, 0, 0, put_rows_kernel<T>)(
            in->data_as<T>(), out->data_as<T>(), index->data_as<int64_t>(), n, row, DivideBy(row, n * row));
    });
    MT_CUDA_CHECK_LAUNCH("put_rows");
}

void gather(const Tensor& out, const Tensor& in, const Tensor& index, int64_t dim, const IndexCheck& check)
{
    const DimIndexing g = dim_indexing(in, out, index, dim);
    by_element_size(in, [&](auto unsigned_tag) {
        using T = decltype(unsigned_tag);
        const T* x = in->data_as<T>();
        const int64_t* i = index->data_as<int64_t>();
        if (gather_simple_forced())
            MT_LAUNCH(blocks_for(g.numel), kThreads, 0, 0, gather_kernel<T>)(out->data_as<T>(), x, i, g, check,
                                                                             index_faults(check.op));
        else
            MT_LAUNCH(blocks_for((g.numel + kGatherUnroll - 1) / kGatherUnroll), kThreads, 0, 0,
                      gather_phased_kernel<T>)(out->data_as<T>(), x, i, g, check, index_faults(check.op));
    });
    MT_CUDA_CHECK_LAUNCH("gather");
}

// Put moves elements (any dtype, as unsigned); Add computes in the dtype (never a
// storage-only one here: see the file's head).
void scatter(WriteOp op, const Tensor& out, const Tensor& src, const Tensor& index, int64_t dim,
             const IndexCheck& check)
{
    const DimIndexing g = dim_indexing(out, src, index, dim);
    switch (op) {
        case WriteOp::Put:
            by_element_size(out, [&](auto unsigned_tag) {
                launch_scatter<WriteOp::Put>(Tag<decltype(unsigned_tag)>{}, out, src, index, g, check);
            });
            break;
        case WriteOp::Add: scatter_in_dtype<WriteOp::Add>(out, src, index, g, check); break;
        case WriteOp::Mul: scatter_in_dtype<WriteOp::Mul>(out, src, index, g, check); break;
        case WriteOp::Max: scatter_in_dtype<WriteOp::Max>(out, src, index, g, check); break;
        case WriteOp::Min: scatter_in_dtype<WriteOp::Min>(out, src, index, g, check); break;
    }
    MT_CUDA_CHECK_LAUNCH("scatter");
}

// read and Put move elements (any dtype); Add computes in the dtype, as scatter.
void index_put(WriteOp op, bool read, const Tensor& self, const Tensor& values, const std::vector<Tensor>& indices,
               const char* op_name)
{
    const AdvancedIndexing g = advanced_indexing(self, values, indices);
    if (op == WriteOp::Add && !read) {
        dispatch(self->dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            MT_LAUNCH(blocks_for(g.nb * g.rest_numel), kThreads, 0, 0, index_put_kernel<T, true>)(
                self->data_as<T>(), values->data_as<T>(), g, op_name, index_faults(op_name), read);
        });
    } else {
        by_element_size(self, [&](auto unsigned_tag) {
            using T = decltype(unsigned_tag);
            MT_LAUNCH(blocks_for(g.nb * g.rest_numel), kThreads, 0, 0, index_put_kernel<T, false>)(
                self->data_as<T>(), values->data_as<T>(), g, op_name, index_faults(op_name), read);
        });
    }
    MT_CUDA_CHECK_LAUNCH("index_put");
}

// The table's scatter / index_put entries: a reduction (sum, product, max, min) into a
// storage-only dtype goes through Widen (float32 or int64, rounded once); everything else
// runs in place.
void scatter16(WriteOp op, const Tensor& out, const Tensor& src, const Tensor& index, int64_t dim,
               const IndexCheck& check)
{
    if (op == WriteOp::Put || !is_storage_only(out->dtype)) return scatter(op, out, src, index, dim, check);
    MT_WIDEN(scatter, WriteOp, const Tensor&, const Tensor&, const Tensor&, int64_t, const IndexCheck&)(op, out, src,
                                                                                                       index, dim, check);
}

void index_put16(WriteOp op, bool read, const Tensor& self, const Tensor& values, const std::vector<Tensor>& indices,
                 const char* op_name)
{
    if (op != WriteOp::Add || read || !is_storage_only(self->dtype))
        return index_put(op, read, self, values, indices, op_name);
    using W = detail::Widen<void(WriteOp, bool, const Tensor&, const Tensor&, const std::vector<Tensor>&, const char*)>;
    // self (argument 2) is added into, values only read (read is false here)
    W::call<&index_put, &copy, W::kNoWork, detail::at({2}), 0>(op, read, self, values, indices, op_name);
}

namespace {

// cat through cat_strided_kernel: every input read where it is, kCatPieces per launch.
void cat_strided(const Tensor& out, const std::vector<Tensor>& inputs, int64_t dim)
{
    StridedCatArgs a;
    a.ndim = int(out->dim());
    a.dim = int(dim);
    a.total = out->shape[size_t(dim)];
    for (int d = 0; d < a.ndim; ++d) a.shape[d] = out->shape[size_t(d)];
    auto launch = [&](int64_t end) {
        if (a.n == 0) return;
        a.r0 = a.piece[0].start;
        a.rows = end - a.r0;
        a.shape[a.dim] = a.rows;
        a.numel = out->numel() / a.total * a.rows;
        by_element_size(out, [&](auto unsigned_tag) {
            using U = decltype(unsigned_tag);
            MT_LAUNCH(blocks_for(a.numel), kThreads, 0, 0, cat_strided_kernel<U>)(reinterpret_cast<U*>(out->data()), a);
        });
        MT_CUDA_CHECK_LAUNCH("cat");
        a.n = 0;
    };
    int64_t start = 0;
    for (const Tensor& t : inputs) {
        if (t->numel() == 0) continue;
        StridedCatPiece& p = a.piece[a.n++];
        p.data = t->data();
        p.start = start;
        for (int d = 0; d < a.ndim; ++d) p.stride[d] = t->strides[size_t(d)];
        start += t->shape[size_t(dim)];
        if (a.n == kCatPieces) launch(start);
    }
    launch(start);
}

}  // namespace

namespace {

// The widest unit cat_kernel can move (16, 8, 4, 2 or 1 bytes, at least one element): every
// address it forms must be a multiple of it -- out's and each piece's data, the bytes of a
// row (inner elements) and of each piece's strides. A cat of float32 matrices along dim 0
// moves 16 bytes per thread.
int64_t cat_unit(const Tensor& out, const std::vector<CatPiece>& pieces, int64_t inner)
{
    const int64_t esize = itemsize(out->dtype);
    int64_t unit = 16;
    for (; unit > esize; unit /= 2) {
        auto fits = [&](int64_t bytes) { return bytes % unit == 0; };
        bool ok = fits(inner * esize) && fits(int64_t(reinterpret_cast<uintptr_t>(out->data())));
        for (const CatPiece& p : pieces)
            ok = ok && fits(int64_t(reinterpret_cast<uintptr_t>(p.data))) && fits(p.outer_stride * esize) &&
                 fits(p.dim_stride * esize);
        if (ok) break;
    }
    return unit;
}

}  // namespace

// cat: inputs of the (outer, size, inner) form take cat_kernel, several per launch, moving
// the widest unit all of them allow; when one is not of that form (a transposed input), out
// of at most kCatDims dims takes cat_strided_kernel for all; beyond that, such inputs are
// packed first (a copy each).
void cat(const Tensor& out, const std::vector<Tensor>& inputs, int64_t dim)
{
    bool simple = true;
    for (const Tensor& t : inputs) {
        CatPiece p{};
        simple = simple && (t->numel() == 0 || cat_piece(t, dim, p));
    }
    if (!simple && out->dim() <= kCatDims) return cat_strided(out, inputs, dim);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= out->shape[size_t(d)];
    for (int64_t d = dim + 1; d < out->dim(); ++d) inner *= out->shape[size_t(d)];
    std::vector<Tensor> keep;  // packed copies of inputs in other layouts, alive until launched
    std::vector<CatPiece> pieces;
    int64_t start = 0;
    for (const Tensor& t : inputs) {
        if (t->numel() == 0) continue;
        CatPiece p{};
        if (!cat_piece(t, dim, p)) {
            keep.push_back(packed(t, &copy));
            cat_piece(keep.back(), dim, p);
        }
        p.start = start;
        start += p.size;
        if (p.size == 1) p.dim_stride = 0;  // never stepped along: whatever it is, it does not count
        if (outer == 1) p.outer_stride = 0;
        pieces.push_back(p);
    }
    const int64_t unit = cat_unit(out, pieces, inner), per_unit = unit / itemsize(out->dtype);
    CatArgs a;
    a.outer = outer;
    a.inner = inner / per_unit;
    a.total = out->shape[size_t(dim)];
    for (size_t first = 0; first < pieces.size(); first += kCatPieces) {
        a.n = int(std::min<size_t>(kCatPieces, pieces.size() - first));
        for (int k = 0; k < a.n; ++k) {
            a.piece[k] = pieces[first + size_t(k)];
            a.piece[k].outer_stride /= per_unit;
            a.piece[k].dim_stride /= per_unit;
        }
        a.r0 = a.piece[0].start;
        a.rows = a.piece[a.n - 1].start + a.piece[a.n - 1].size - a.r0;
        const int64_t count = a.outer * a.rows * a.inner;
        a.split = PlaneIndex(a.inner, a.rows, count);
        by_unit_size(unit, [&](auto unit_tag) {
            using U = decltype(unit_tag);
            MT_LAUNCH(blocks_for(count), kThreads, 0, 0, cat_kernel<U>)(reinterpret_cast<U*>(out->data()), a);
        });
        MT_CUDA_CHECK_LAUNCH("cat");
    }
}

void nonzero(const Tensor& out, const Tensor& count, const Tensor& in)
{
    NonzeroShape s{int(in->dim()), {}};
    for (int d = 0; d < s.ndim; ++d) s.shape[d] = in->shape[size_t(d)];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(1, kThreads, 0, 0, nonzero_kernel<T>)(in->data_as<T>(), in->numel(),
                                                       out ? out->data_as<int64_t>() : nullptr,
                                                       out ? out->shape[0] : 0,
                                                       count ? count->data_as<int64_t>() : nullptr, s);
    });
    MT_CUDA_CHECK_LAUNCH("nonzero");
}

}  // namespace minitorch::cuda
