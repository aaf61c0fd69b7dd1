// reduce.cu — CUDA kernels for the "reduce" family. The input is a contiguous
// (outer, R, inner) tensor; output (o, i) reduces in[o, :, i] to a sum (or product), or to
// the best (value, index) pair for max/min/argmax/argmin.
//
// Two kernels, one per layout, each written once for every reduction (SumOp, BestOp
// below say what a thread keeps and how two results combine). All blocks have kBlock
// threads.
//
//   reduce_rows_kernel  inner == 1: an output's R values are one contiguous row. A group
//       of threads takes a row: one warp when the row has at most kWarpRowMax values,
//       the whole block for longer ones. The group's threads read the row with a stride
//       of the group size (consecutive threads, consecutive addresses), then combine
//       their results with warp shuffles, and for a block one step through shared memory.
//   reduce_cols_kernel  inner > 1: the outputs of one o are contiguous along i. One
//       thread per output; consecutive threads take consecutive i, so each of the R rows
//       they loop over is read coalesced.
//
// Few outputs and a long R (a full reduction has outer = inner = 1) would leave the GPU
// almost idle, so `split_for` cuts R into S slices, one per blockIdx.y, sized so the
// launch has about kFillBlocks blocks. Each block writes one partial per (o, slice, i) to a
// workspace laid out as (outer, S, inner); the last block of the S that share a blockIdx.x
// to finish then reduces that workspace's middle dim for their outputs, with the same
// code, in the same launch (last_block.cuh). Partials rather than atomic additions: the
// order of every addition is fixed, so results are the same run to run. Max/min partials
// carry their index and are combined with the same NaN and tie rules, so a NaN or a tie
// in any slice is found as it would be in one pass.
//
// Sums of float32 accumulate in double, as the CPU does, rather than in float with a
// tree: a reduction reads 4 bytes per addition, so it is limited by memory bandwidth
// even where double arithmetic is slow (a GPU with 1/64-rate fp64 still adds doubles
// faster than its memory delivers floats), and the result is the sum rounded once to
// float32 however long R is, so the CPU and both GPU paths agree to float32 precision
// (tests/test_reduce.py checks 10^6 x 0.1 to 1e-6). The partials of a split are double
// too, so splitting adds no float rounding.
//
// float16 / bfloat16 are read in place (the table's reduce16 entry skips Widen's float32
// staging copies): sums accumulate in double as float32's do, max/min compare the values in
// float32, and a result is rounded to 16 bits once, when it is stored -- the bits staging
// through float32 gave, in one pass over the 16-bit data.
//
// Indices: rows, outputs and element offsets are int64 (more than 2^31 elements work);
// a thread's loop counter within a slice is an int (split_for keeps slices below
// kMaxChunk values).
#include <algorithm>

#include "common.cuh"
#include "last_block.cuh"
#include "minitorch/stats_math.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

constexpr int kBlock = 256;                // threads per block, every reduce launch
constexpr int kWarps = kBlock / 32;
constexpr int kWarpRowMax = 1024;          // rows up to this long get a warp, longer ones a block
constexpr int64_t kMaxChunk = int64_t(1) << 30;  // values per slice, so positions fit an int
constexpr int64_t kMaxBlocksX = 4096;      // more outputs than that many blocks take: grid-stride

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// float32 sums accumulate in double (see above); a bool sum (sum(dtype=bool)) counts in
// int64 and is True where the count is not 0.
template <class T> struct AccT { using type = T; };
template <> struct AccT<float> { using type = double; };
template <> struct AccT<Half> { using type = double; };
template <> struct AccT<BFloat16> { using type = double; };
template <> struct AccT<bool> { using type = int64_t; };

// Sum (or, kProd, product): a thread keeps its running sum. Reads In, adds in A, writes Out
// (pass 1 of a split writes A partials, pass 2 reads them). Integer products multiply as
// unsigned, so an overflow wraps (as PyTorch's) instead of being undefined. A mean is the
// sum divided by `count` (R) in A before the store: one launch, rounded once to Out.
template <class A, class In, class Out, bool kProd = false>
struct SumOp {
    using State = A;
    const In* in;
    Out* out;
    int64_t count = 0;  // mean: the line's length; 0: a sum (or product), or a partial

    __device__ static A combine(A a, A b)
    {
        if constexpr (!kProd) return a + b;
        else if constexpr (std::is_integral_v<A>) return A(uint64_t(a) * uint64_t(b));
        else return a * b;
    }
    __device__ State none() const { return A(kProd ? 1 : 0); }
    // Fold in in[at], which sits at position pos along R.
    __device__ void take(State& s, int64_t at, int64_t) const { s = combine(s, A(in[at])); }
    __device__ void merge(State& s, State other) const { s = combine(s, other); }
    __device__ State shfl_down(State s, int offset) const { return __shfl_down_sync(kFullMask, s, offset); }
    __device__ void store(int64_t at, State s) const
    {
        if constexpr (std::is_floating_point_v<A>)
            if (count) s /= A(count);
        out[at] = static_cast<Out>(s);
    }
};

// Should (bv, bi) replace (av, ai)? NaN wins; ties go to the smaller index; -1 = empty.
template <class T>
__device__ __forceinline__ bool take_b(bool is_max, T av, int64_t ai, T bv, int64_t bi)
{
    if (bi < 0) return false;
    if (ai < 0) return true;
    const bool an = is_nan(av), bn = is_nan(bv);
    if (an || bn) return (an && bn) ? bi < ai : bn;
    if (av == bv) return bi < ai;
    return is_max ? bv > av : bv < av;
}

// Max/min and their arg: a thread keeps the best (value, index) so far, index -1 = none.
// Values are compared as Compute<T> (float32 for the 16-bit types).
template <class T>
struct BestOp {
    using C = Compute<T>;
    struct State {
        T v;
        int64_t i;
    };
    const T* in;
    const int64_t* in_idx;  // pass 2: the partials' positions along R; null: position = index
    T* out_v;               // null for argmax / argmin
    int64_t* out_i;         // null for max() / min() of everything
    bool is_max;

    __device__ State none() const { return {T(), -1}; }
    // A thread takes its values in increasing position (in pass 2 too: slice s holds
    // positions from s * chunk on), so take_b shortens to: a value replaces the best
    // only if it is a NaN or beats it, and never once the best is a NaN.
    __device__ void take(State& s, int64_t at, int64_t pos) const
    {
        const T x = in[at];
        const C cx = C(x), cv = C(s.v);
        if (s.i < 0 || (!is_nan(cv) && (is_nan(cx) || (is_max ? cx > cv : cx < cv))))
            s = {x, in_idx ? in_idx[at] : pos};
    }
    __device__ void merge(State& s, State other) const
    {
        if (take_b(is_max, C(s.v), s.i, C(other.v), other.i)) s = other;
    }
    __device__ State shfl_down(State s, int offset) const
    {
        T v;
        if constexpr (std::is_same_v<T, bool>) v = __shfl_down_sync(kFullMask, int(s.v), offset) != 0;
        else if constexpr (!std::is_same_v<T, C>) v = T(__shfl_down_sync(kFullMask, C(s.v), offset));  // exact
        else v = __shfl_down_sync(kFullMask, s.v, offset);
        return {v, __shfl_down_sync(kFullMask, s.i, offset)};
    }
    __device__ void store(int64_t at, State s) const
    {
        if (out_v) out_v[at] = s.v;
        if (out_i) out_i[at] = s.i;
    }
};

// Combines the states of the 32 threads of a warp: the result is in lane 0.
template <class Op>
__device__ typename Op::State warp_merge(const Op& op, typename Op::State s)
{
    using State = typename Op::State;
    return warp_reduce(
        s, [&op](State v, int offset) { return op.shfl_down(v, offset); },
        [&op](State a, State b) {
            op.merge(a, b);
            return a;
        });
}

// Combines the states of a group of `group` threads (32: a warp; kBlock: the block); the
// result is in the group's first thread. Every thread of the block calls it (a block
// group passes two barriers).
template <class Op>
__device__ typename Op::State group_merge(const Op& op, typename Op::State s, int group,
                                          typename Op::State* warp_states)
{
    s = warp_merge(op, s);
    if (group == 32) return s;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_states[warp] = s;
    __syncthreads();  // every warp's result is in shared memory before they are read
    s = warp_merge(op, lane < kWarps ? warp_states[lane] : op.none());  // every warp does it; warp 0's counts
    // All have read warp_states before the caller's next group_merge writes it (else a
    // warp could finish its next row and overwrite its entry before warp 0 read this one).
    __syncthreads();
    return s;
}

// One pass over rows: in (rows, R) contiguous, R cut into `slices` slices of `chunk` values
// (none empty); this block reduces slice `slice` of its rows, and the result of (row, slice)
// goes to op.store(row * slices + slice) (one slice: row).
// Thread mapping: the block's kBlock / group groups take rows blockIdx.x * (kBlock / group)
// + g, then gridDim.x * (kBlock / group) further on, ...; thread t of a group reads
// values t, t + group, ... of its row's slice. A group past the last row still joins
// the block's barriers, holding the empty state.
template <class Op>
__device__ void rows_pass(const Op& op, int64_t rows, int64_t R, int64_t chunk, int group, int64_t slice,
                          int64_t slices, typename Op::State* warp_states)
{
    const int64_t begin = slice * chunk;
    const int len = int(R - begin < chunk ? R - begin : chunk);
    const int per_block = kBlock / group, lane = threadIdx.x % group;
    for (int64_t first = int64_t(blockIdx.x) * per_block; first < rows; first += int64_t(gridDim.x) * per_block) {
        const int64_t row = first + threadIdx.x / group, base = row * R + begin;
        typename Op::State s = op.none();
        if (row < rows)
            for (int k = lane; k < len; k += group) op.take(s, base + k, begin + k);
        s = group_merge(op, s, group, warp_states);
        if (lane == 0 && row < rows) op.store(row * slices + slice, s);
    }
}

// One pass over columns: in (outer, R, inner) contiguous, R cut as above; the result of
// (o, slice, i) goes to op.store((o * slices + slice) * inner + i).
// Thread mapping: one thread per output j = o * inner + i (grid-stride over
// blockIdx.x * kBlock + threadIdx.x); it loops over its slice's rows, inner apart, so
// neighbouring threads read neighbouring addresses. No shared memory, no barriers.
template <class Op>
__device__ void cols_pass(const Op& op, int64_t outer, int64_t R, int64_t inner, int64_t chunk, int64_t slice,
                          int64_t slices)
{
    const int64_t begin = slice * chunk;
    const int len = int(R - begin < chunk ? R - begin : chunk);
    MT_GRID_STRIDE(j, outer * inner) {
        const int64_t o = j / inner, i = j - o * inner;
        int64_t at = (o * R + begin) * inner + i;
        typename Op::State s = op.none();
        for (int k = 0; k < len; ++k, at += inner) op.take(s, at, begin + k);
        op.store((o * slices + slice) * inner + i, s);
    }
}

// in (rows, R), split or not (see rows_pass). Split: `op` writes the partials and the last
// block of each blockIdx.x to arrive (last_block.cuh) reduces them with `finish` (its R is
// gridDim.y: the partials of a row are contiguous); not split, `finish` and `arrivals` are
// unused.
template <class Op, class Finish>
__global__ void reduce_rows_kernel(Op op, Finish finish, unsigned* arrivals, int64_t rows, int64_t R, int64_t chunk,
                                   int group)
{
    __shared__ typename Op::State warp_states[kWarps];
    rows_pass(op, rows, R, chunk, group, blockIdx.y, gridDim.y, warp_states);
    if (gridDim.y == 1 || !last_to_arrive(arrivals)) return;
    __shared__ typename Finish::State finish_states[kWarps];
    rows_pass(finish, rows, int64_t(gridDim.y), int64_t(gridDim.y), group, 0, 1, finish_states);
}

// in (outer, R, inner), split or not (see cols_pass); split, as reduce_rows_kernel.
template <class Op, class Finish>
__global__ void reduce_cols_kernel(Op op, Finish finish, unsigned* arrivals, int64_t outer, int64_t R, int64_t inner,
                                   int64_t chunk)
{
    cols_pass(op, outer, R, inner, chunk, blockIdx.y, gridDim.y);
    if (gridDim.y == 1 || !last_to_arrive(arrivals)) return;
    cols_pass(finish, outer, int64_t(gridDim.y), inner, int64_t(gridDim.y), 0, 1);
}

// How R is cut (last_block.cuh's split_to_fill): each slice keeps at least 16 values per
// thread of a row block, 32 rows for a column thread (less would cost more in pass 2 than
// it saves), and at most kMaxChunk.
Split split_for(int64_t outer, int64_t R, int64_t inner)
{
    const bool rows = inner == 1;
    const int64_t threads = rows ? outer * (R <= kWarpRowMax ? 32 : kBlock) : outer * inner;
    return split_to_fill(ceil_div(threads, kBlock), R, rows ? 16 * kBlock : 32, kMaxChunk);
}

// One launch: `op` over (outer, R, inner) cut as `split`; split, `finish` reduces op's
// partials ((outer, slices, inner) in the workspace) in the same launch.
template <class Op, class Finish>
void launch(const Op& op, const Finish& finish, int64_t outer, int64_t R, int64_t inner, Split split)
{
    unsigned* arrivals = split.slices > 1 ? arrival_counters() : nullptr;
    if (inner == 1) {
        const int group = split.chunk <= kWarpRowMax ? 32 : kBlock;
        const dim3 grid(unsigned(std::min(ceil_div(outer, kBlock / group), kMaxBlocksX)), unsigned(split.slices));
        MT_LAUNCH(grid, kBlock, 0, 0, reduce_rows_kernel<Op, Finish>)(op, finish, arrivals, outer, R, split.chunk,
                                                                       group);
    } else {
        const dim3 grid(unsigned(std::min(ceil_div(outer * inner, kBlock), kMaxBlocksX)), unsigned(split.slices));
        MT_LAUNCH(grid, kBlock, 0, 0, reduce_cols_kernel<Op, Finish>)(op, finish, arrivals, outer, R, inner,
                                                                       split.chunk);
    }
    MT_CUDA_CHECK_LAUNCH("reduce");
}

// Not split: one pass, nothing to finish.
template <class Op>
void launch(const Op& op, int64_t outer, int64_t R, int64_t inner, Split split)
{
    launch(op, op, outer, R, inner, split);
}

// var / std / logsumexp / norm (reduce_stats): a thread keeps a StatState (stats_math.h)
// of its values. Pass 1 reads T (in) and, split, writes partial states (out_states);
// pass 2 reads those states (in_states) and merges them. The last pass writes the
// statistic (out) and, for var_mean / std_mean, the mean (out_mean, may be null).
template <class T>
struct StatOp {
    using State = StatState;
    StatReduce spec;
    const T* in;                  // pass 1
    const StatState* in_states;   // pass 2 of a split: null in pass 1
    StatState* out_states;        // pass 1 of a split: null in the last pass
    T* out;
    T* out_mean;

    __device__ State none() const { return stat_none(spec); }
    __device__ void take(State& s, int64_t at, int64_t) const
    {
        if (in_states) stat_merge(spec, s, in_states[at]);
        else stat_take(spec, s, double(in[at]));
    }
    __device__ void merge(State& s, State other) const { stat_merge(spec, s, other); }
    __device__ State shfl_down(State s, int offset) const
    {
        return {__shfl_down_sync(kFullMask, s.a, offset), __shfl_down_sync(kFullMask, s.b, offset),
                __shfl_down_sync(kFullMask, s.c, offset)};
    }
    __device__ void store(int64_t at, State s) const
    {
        if (out_states) {
            out_states[at] = s;
            return;
        }
        out[at] = static_cast<T>(stat_result(spec, s));
        if (out_mean) out_mean[at] = static_cast<T>(stat_mean(s));
    }
};

}  // namespace

void reduce(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const int64_t outer = in->shape[0], R = in->shape[1], inner = in->shape[2];
    const Split split = split_for(outer, R, inner);
    auto workspace = [&](DType dtype) { return empty({outer, split.slices, inner}, dtype, in->device()); };
    dispatch_with16(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        // Out: T, or int64 for a bool input counted (b.sum(): the bools read as they are).
        auto sum_or_prod = [&](auto prod, auto* out) {
            constexpr bool P = decltype(prod)::value;
            using A = typename AccT<T>::type;
            using Out = std::remove_pointer_t<decltype(out)>;
            const int64_t count = op == ReduceOp::Mean ? R : 0;
            if (split.slices == 1) return launch(SumOp<A, T, Out, P>{x, out, count}, outer, R, inner, split);
            Tensor partial = workspace(std::is_same_v<A, double> ? DType::Float64 : DType::Int64);
            return launch(SumOp<A, T, A, P>{x, partial->data_as<A>()},
                          SumOp<A, A, Out, P>{partial->data_as<A>(), out, count}, outer, R, inner, split);
        };
        if constexpr (std::is_same_v<T, bool>)
            if (op == ReduceOp::Sum && values->dtype == DType::Int64)
                return sum_or_prod(std::false_type{}, values->data_as<int64_t>());
        if (op == ReduceOp::Sum || op == ReduceOp::Mean) return sum_or_prod(std::false_type{}, values->data_as<T>());
        if (op == ReduceOp::Prod) return sum_or_prod(std::true_type{}, values->data_as<T>());
        const bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
        T* v = values ? values->data_as<T>() : nullptr;
        int64_t* i = indices ? indices->data_as<int64_t>() : nullptr;
        if (split.slices == 1) return launch(BestOp<T>{x, nullptr, v, i, is_max}, outer, R, inner, split);
        Tensor pv = workspace(in->dtype), pi = workspace(DType::Int64);
        const BestOp<T> merge_partials{pv->data_as<T>(), pi->data_as<int64_t>(), v, i, is_max};
        return launch(BestOp<T>{x, nullptr, pv->data_as<T>(), pi->data_as<int64_t>(), is_max}, merge_partials, outer,
                      R, inner, split);
    });
}

// The same two launches as reduce (rows or columns, split when few lines are long), with
// a StatState per partial: the workspace holds (outer, slices, inner) states of three
// doubles each. An empty line (R = 0) is the op's to fill; it never comes here.
void reduce_stats(const Tensor& out, const Tensor& mean, const Tensor& in, const StatReduce& spec)
{
    const int64_t outer = in->shape[0], R = in->shape[1], inner = in->shape[2];
    const Split split = split_for(outer, R, inner);
    dispatch_with16(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* m = mean ? mean->data_as<T>() : nullptr;
        if (split.slices == 1)
            return launch(StatOp<T>{spec, in->data_as<T>(), nullptr, nullptr, out->data_as<T>(), m}, outer, R, inner,
                          split);
        constexpr int64_t kDoubles = sizeof(StatState) / sizeof(double);
        Tensor partial = empty({outer, split.slices, inner * kDoubles}, DType::Float64, in->device());
        auto* states = reinterpret_cast<StatState*>(partial->data_as<double>());
        launch(StatOp<T>{spec, in->data_as<T>(), nullptr, states, nullptr, nullptr},
               StatOp<T>{spec, nullptr, states, nullptr, out->data_as<T>(), m}, outer, R, inner, split);
    });
}

// The table's reduce / reduce_stats entries: a float16 / bfloat16 input with outputs of its
// own dtype is read in place, and so is a bool input counted into int64; anything else goes
// through Widen.
void reduce16(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in)
{
    const bool native16 = is_16bit(in->dtype) && (!values || values->dtype == in->dtype);
    const bool count = op == ReduceOp::Sum && in->dtype == DType::Bool && values && values->dtype == DType::Int64;
    if (native16 || count) return reduce(op, values, indices, in);
    MT_WIDEN(reduce, ReduceOp, const Tensor&, const Tensor&, const Tensor&)(op, values, indices, in);
}

void reduce_stats16(const Tensor& out, const Tensor& mean, const Tensor& in, const StatReduce& spec)
{
    if (is_16bit(in->dtype) && out->dtype == in->dtype && (!mean || mean->dtype == in->dtype))
        return reduce_stats(out, mean, in, spec);
    MT_WIDEN(reduce_stats, const Tensor&, const Tensor&, const Tensor&, const StatReduce&)(out, mean, in, spec);
}

}  // namespace minitorch::cuda
