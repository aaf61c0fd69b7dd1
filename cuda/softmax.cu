// softmax.cu — CUDA kernels for softmax / log_softmax and the class-target losses
// (cross_entropy, nll_loss), forward and backward, as kernels.h describes them. What
// each computes on one element is in softmax_math.h, shared with the CPU kernels.
//
// All of them work on rows: a contiguous tensor is seen as (outer, C, inner)
// (softmax_rows), that is outer * inner rows of C elements each, `inner` apart. A row
// is first reduced to a small State (a running max and sum for the forward, plain sums
// for the backward), then every element is written from the row's state. What is
// reduced and written is a small struct, a "row op":
//
//   using State;                                  what a row reduces to (below)
//   add(State&, const Row&, int64_t at)           adds the element at flat offset `at`
//   write(const State&, const Row&, int64_t at)   writes element `at` from the row's state
//   finish(const State&, const Row&)              once per row (thread holding element 0)
//
// Three kernels map rows to threads, whatever op they run (launch_rows picks one):
//
//   warp_rows_kernel    inner == 1, C <= 1024: one warp (32 threads) per row, 8 rows per
//                       block of 256 threads. Lane l takes elements l, l + 32, ... (the
//                       warp reads 32 adjacent values at a time); shuffles combine lanes.
//                       (softmax and its backward run warp_rows_cached_kernel instead: the
//                       same mapping, with a lane's elements read once, into registers.)
//   block_rows_kernel   inner == 1, C > 1024: one block of 512 threads per row; shuffles
//                       combine each warp, shared memory then carries the 16 warps'
//                       states to warp 0, which combines them. Also sums a loss's rows.
//   thread_rows_kernel  inner > 1: one thread per row. Adjacent threads take adjacent
//                       rows, whose elements are adjacent in memory, so loads coalesce.
//
// The softmax forward of float32 and 16-bit rows (inner == 1) has two kernels of its own that
// hold a row in registers: softmax_rows_kernel (a warp a row, C <= 1024) and
// softmax_block_rows_kernel (a block of 512 threads a row, C <= 16384).
//
// Every grid is capped (grid-stride loops over rows), so any number of rows works.
// Accumulation is in the element type (float for float32, double for float64). softmax,
// its backward and the class losses read float16 / bfloat16 in place (the table's softmax16
// entries; class_loss and its backward directly): values are
// converted to float32 as they are loaded, accumulate in float32 and are rounded once when
// stored, the bits staging through float32 copies gave, in one launch.
#include "common.cuh"
#include "minitorch/softmax_math.h"
#include "warp.cuh"

namespace minitorch::cuda {

namespace {

constexpr int64_t kWarpRowMaxC = 1024;  // longer rows get a whole block
constexpr int kRowBlockThreads = 512;   // threads per block of block_rows_kernel and softmax_block_rows_kernel
constexpr int64_t kBlockRowMaxC = 32 * kRowBlockThreads;  // softmax_block_rows_kernel's longest row

// A row: its number (0 .. outer * inner - 1) and the flat offset of its element 0.
struct Row {
    int64_t index, base;
};

// ---- the states a row reduces to: empty(), merge(a, b), shfl_xor(s, lane_mask) ----

// A row's running max m and sum s of exp(x - m) (softmax_merge: the online softmax).
template <class A>
struct MaxSum {
    A m, s;
    static __device__ MaxSum empty() { return {A(-INFINITY), A(0)}; }
};
template <class A>
__device__ MaxSum<A> merge(MaxSum<A> a, MaxSum<A> b)
{
    softmax_merge(a.m, a.s, b.m, b.s);
    return a;
}
template <class A>
__device__ MaxSum<A> shfl_xor(MaxSum<A> a, int lane_mask)
{
    return {__shfl_xor_sync(kFullMask, a.m, lane_mask), __shfl_xor_sync(kFullMask, a.s, lane_mask)};
}

// A class loss's row with label smoothing: the running max and sum, and sum_c w[c] x[c] and
// sum_c w[c] in double (weighted_row_loss, softmax_math.h).
template <class A>
struct MaxSumDot {
    A m, s;
    double wx, ws;
    static __device__ MaxSumDot empty() { return {A(-INFINITY), A(0), 0.0, 0.0}; }
};
template <class A>
__device__ MaxSumDot<A> merge(MaxSumDot<A> a, MaxSumDot<A> b)
{
    softmax_merge(a.m, a.s, b.m, b.s);
    a.wx += b.wx, a.ws += b.ws;
    return a;
}
template <class A>
__device__ MaxSumDot<A> shfl_xor(MaxSumDot<A> a, int lane_mask)
{
    return {__shfl_xor_sync(kFullMask, a.m, lane_mask), __shfl_xor_sync(kFullMask, a.s, lane_mask),
            __shfl_xor_sync(kFullMask, a.wx, lane_mask), __shfl_xor_sync(kFullMask, a.ws, lane_mask)};
}

// N sums.
template <class A, int N>
struct Sums {
    A v[N];
    static __device__ Sums empty()
    {
        Sums z;
        for (int k = 0; k < N; ++k) z.v[k] = A(0);
        return z;
    }
};
template <class A, int N>
__device__ Sums<A, N> merge(Sums<A, N> a, Sums<A, N> b)
{
    for (int k = 0; k < N; ++k) a.v[k] += b.v[k];
    return a;
}
template <class A, int N>
__device__ Sums<A, N> shfl_xor(Sums<A, N> a, int lane_mask)
{
    for (int k = 0; k < N; ++k) a.v[k] = __shfl_xor_sync(kFullMask, a.v[k], lane_mask);
    return a;
}

// Every lane ends with the whole warp's state: a butterfly, lane i combining with lane
// i ^ 16, then i ^ 8, ..., i ^ 1. Both lanes of a pair merge the same two states (merge
// is commutative, bit for bit), so all 32 lanes agree exactly. All 32 lanes must call it.
template <class State>
__device__ State warp_all_merge(State st)
{
    return warp_all_reduce(
        st, [](State s, int lane_mask) { return shfl_xor(s, lane_mask); },
        [](State a, State b) { return merge(a, b); });
}

// ---- the three mappings of rows to threads (see the top of the file) ----

// Thread mapping: warp w of block b takes rows b * 8 + w, then + gridDim.x * 8, ...;
// lane l takes the row's elements l, l + 32, ... (inner == 1: a row is C adjacent values).
template <class Op>
__global__ void warp_rows_kernel(Op op, int64_t rows, int64_t C)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps) {
        const Row row{r, r * C};
        typename Op::State st = Op::State::empty();
        for (int64_t c = lane; c < C; c += kWarp) op.add(st, row, row.base + c);
        st = warp_all_merge(st);  // r is the same in all 32 lanes, so whole warps get here
        for (int64_t c = lane; c < C; c += kWarp) op.write(st, row, row.base + c);
        if (lane == 0) op.finish(st, row);
    }
}

// Thread mapping: as warp_rows_kernel, for ops that say what they read of an element (Value,
// load; softmax and its backward): each lane first loads its at most kPerLane elements of the
// row into registers, all of the loads in flight at once, then adds and writes from those.
// The row is read from memory once, and a warp waits on memory once per row instead of once
// per element. The adds go in warp_rows_kernel's order: the same bits.
template <class Op, int kPerLane>
__global__ void warp_rows_cached_kernel(Op op, int64_t rows, int64_t C)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps) {
        const int64_t base = r * C;
        typename Op::Value v[kPerLane] = {};
        MT_UNROLL
        for (int k = 0; k < kPerLane; ++k)
            if (lane + k * kWarp < C) v[k] = op.load(base + lane + k * kWarp);
        typename Op::State st = Op::State::empty();
        MT_UNROLL
        for (int k = 0; k < kPerLane; ++k)
            if (lane + k * kWarp < C) op.add_value(st, v[k]);
        st = warp_all_merge(st);  // r is the same in all 32 lanes, so whole warps get here
        MT_UNROLL
        for (int k = 0; k < kPerLane; ++k)
            if (lane + k * kWarp < C) op.write_value(st, base + lane + k * kWarp, v[k]);
    }
}

// Thread mapping: block b takes rows b, b + gridDim.x, ...; thread t takes the row's
// elements t, t + blockDim.x, ... Shared memory: one state per warp (blockDim.x <= 1024,
// so at most 32) and the row's total.
template <class Op>
__global__ void block_rows_kernel(Op op, int64_t rows, int64_t C)
{
    using State = typename Op::State;
    __shared__ State warp_states[kWarp];
    __shared__ State row_state;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const Row row{r, r * C};
        State st = State::empty();
        for (int64_t c = threadIdx.x; c < C; c += blockDim.x) op.add(st, row, row.base + c);
        st = warp_all_merge(st);
        if (lane == 0) warp_states[warp] = st;
        __syncthreads();  // every warp's state is written before warp 0 reads them
        if (warp == 0) {
            st = warp_all_merge(lane < warps ? warp_states[lane] : State::empty());
            if (lane == 0) row_state = st;
        }
        __syncthreads();  // row_state is written before anyone reads it
        // No third barrier before the next row: its writes to warp_states come after this
        // barrier, which warp 0 passes only after reading them; its write to row_state
        // comes after the next row's first barrier, which all threads pass only after
        // reading row_state here.
        st = row_state;
        for (int64_t c = threadIdx.x; c < C; c += blockDim.x) op.write(st, row, row.base + c);
        if (threadIdx.x == 0) op.finish(st, row);
    }
}

// softmax / log_softmax forward over a row held in registers, as PyTorch's warp softmax does
// it: the row's `threads` threads (a warp, or a block for longer rows) hold its elements
// first, first + threads, ... (kPer of them each). Three passes over the registers: the
// row's max M, the sum S of e = exp(v - M) (both reduced over the row's threads by `row`:
// WarpRow or BlockRow, warp.cuh), then e / S or (v - M) - log S. Unlike the online merge
// (one exp per value, each waiting on the previous merge), the exps of a lane are
// independent of each other.
//
// The loads: a GPU hides memory latency only with loads in flight together, so every lane
// issues all of its loads before it uses a value. Each is a predicated load (`c < C ? x[c] :
// -inf`, no branch) and the max is taken over the whole array after them. What the compiler
// makes of it decides, not the source: a version that took the max with `if (c < C && v > m)`
// compiled to a load, a compare, the next load ..., one memory round trip per value, and the
// H200 measured it 45% slower than the online merge (ba1949c). This one compiles to the 32 loads,
// then the max; tests/tools/test_sass.py checks that in the compiled kernels.
//
// Special values give what the CPU's online merge gives (softmax_math.h): a NaN makes its row
// NaN (e is NaN there, so S is), a row of -inf only is NaN (M = -inf: e = exp(NaN)); a row
// whose max is +inf has S = 1 if that +inf is its only one (the +inf entry is NaN, the others
// 0), NaN if there are more.
template <class T, int kPer, bool kLog, class Reduce>
__device__ __forceinline__ void softmax_row(const T* __restrict__ xr, T* __restrict__ yr, int C, int first,
                                            int threads, const Reduce& row)
{
    using A = Compute<T>;
    A v[kPer];
    MT_UNROLL
    for (int k = 0; k < kPer; ++k) v[k] = first + k * threads < C ? A(xr[first + k * threads]) : A(-INFINITY);
    A m = v[0];
    MT_UNROLL
    for (int k = 1; k < kPer; ++k) m = max(m, v[k]);  // fmax: NaN shows up in S instead
    m = row.row_max(m);
    A s;
    if (m == A(INFINITY)) {  // m is the row's: all its threads take this branch or none
        A infs = A(0), nans = A(0);
        MT_UNROLL
        for (int k = 0; k < kPer; ++k) infs += v[k] == A(INFINITY), nans += v[k] != v[k];
        infs = row.row_sum(infs);
        nans = row.row_sum(nans);
        s = infs == A(1) && nans == A(0) ? A(1) : A(NAN);
    }
    A sum = A(0);
    MT_UNROLL
    for (int k = 0; k < kPer; ++k) {
        const A e = math_exp(v[k] - m);  // 0 for the padding (m > -inf; else all is NaN)
        sum += e;
        if (!kLog) v[k] = e;
    }
    if (m != A(INFINITY)) s = row.row_sum(sum);
    const A log_s = kLog ? math_log(s) : A(0);
    MT_UNROLL
    for (int k = 0; k < kPer; ++k)
        if (first + k * threads < C) yr[first + k * threads] = T(kLog ? (v[k] - m) - log_s : v[k] / s);
}

// Rows of up to 32 * kPerLane values (C <= 1024). Thread mapping: as warp_rows_cached_kernel
// (warp = row, lane l holds the row's elements l, l + 32, ..., 4 rows per block).
template <class T, int kPerLane, bool kLog>
__global__ void softmax_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int C)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = blockDim.x / kWarp;
    for (int64_t r = blockIdx.x * warps + threadIdx.x / kWarp; r < rows; r += gridDim.x * warps)
        softmax_row<T, kPerLane, kLog>(x + r * C, y + r * C, C, lane, kWarp, WarpRow{});
}

// Rows of up to kRowBlockThreads * kPerThread values (1024 < C <= 16384). Thread mapping: block
// b takes rows b, b + gridDim.x, ...; thread t holds the row's elements t, t + blockDim.x, ...
// in registers (the row is read once, as in softmax_rows_kernel; block_rows_kernel reads it
// twice and merges online, one exp waiting on the last).
template <class T, int kPerThread, bool kLog>
__global__ void __launch_bounds__(kRowBlockThreads)
    softmax_block_rows_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int C)
{
    using A = Compute<T>;
    constexpr int kWarps = kRowBlockThreads / kWarp;
    __shared__ A part[kWarps];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
        softmax_row<T, kPerThread, kLog>(x + r * C, y + r * C, C, threadIdx.x, kRowBlockThreads,
                                         BlockRow<A, kWarps>{part});
}

// Thread mapping: one thread per row r = (o, i) of the (outer, C, inner) view, grid-stride;
// its elements are inner apart, and threads r, r + 1 read adjacent values.
template <class Op>
__global__ void thread_rows_kernel(Op op, int64_t outer, int64_t C, int64_t inner)
{
    MT_GRID_STRIDE(r, outer * inner) {
        const Row row{r, (r / inner) * C * inner + r % inner};
        typename Op::State st = Op::State::empty();
        for (int64_t c = 0; c < C; ++c) op.add(st, row, row.base + c * inner);
        for (int64_t c = 0; c < C; ++c) op.write(st, row, row.base + c * inner);
        op.finish(st, row);
    }
}

unsigned capped_grid(int64_t blocks) { return unsigned(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks)); }

// Whether Op says what it reads of an element (warp_rows_cached_kernel can run it).
template <class Op, class = void>
struct Cacheable : std::false_type {};
template <class Op>
struct Cacheable<Op, std::void_t<typename Op::Value>> : std::true_type {};

constexpr int kCachedThreads = 128;  // 4 rows per block: a 1000-row call still fills 250 blocks

// Runs op over every row of the (outer, C, inner) view with the mapping that suits it.
template <class Op>
void launch_rows(const Op& op, const SoftmaxRows& g, const char* name)
{
    const int64_t rows = g.outer * g.inner;
    if constexpr (Cacheable<Op>::value) {
        if (g.inner == 1 && g.C <= kWarpRowMaxC) {
            const unsigned grid = capped_grid((rows + kCachedThreads / kWarp - 1) / (kCachedThreads / kWarp));
            if (g.C <= 4 * kWarp)
                MT_LAUNCH(grid, kCachedThreads, 0, 0, warp_rows_cached_kernel<Op, 4>)(op, rows, g.C);
            else
                MT_LAUNCH(grid, kCachedThreads, 0, 0, warp_rows_cached_kernel<Op, kWarpRowMaxC / kWarp>)(op, rows, g.C);
            MT_CUDA_CHECK_LAUNCH(name);
            return;
        }
    }
    if (g.inner > 1) {
        MT_LAUNCH(blocks_for(rows), kThreads, 0, 0, thread_rows_kernel<Op>)(op, g.outer, g.C, g.inner);
    } else if (g.C <= kWarpRowMaxC) {
        const int64_t rows_per_block = kThreads / kWarp;
        MT_LAUNCH(capped_grid((rows + rows_per_block - 1) / rows_per_block), kThreads, 0, 0,
                  warp_rows_kernel<Op>)(op, rows, g.C);
    } else {
        MT_LAUNCH(capped_grid(rows), kRowBlockThreads, 0, 0, block_rows_kernel<Op>)(op, rows, g.C);
    }
    MT_CUDA_CHECK_LAUNCH(name);
}

// ---- the row ops ----

// softmax / log_softmax: y from x, computed in C (float32 for the 16-bit types). (Value, load,
// add_value, write_value: what warp_rows_cached_kernel keeps of an element in registers.)
template <class T>
struct SoftmaxOp {
    using C = Compute<T>;
    using State = MaxSum<C>;
    using Value = C;
    const T* x;
    T* y;
    bool log;
    __device__ Value load(int64_t at) const { return C(x[at]); }
    __device__ void add_value(State& st, Value v) const { softmax_merge(st.m, st.s, v, C(1)); }
    __device__ void write_value(const State& st, int64_t at, Value v) const
    {
        y[at] = T(softmax_value(log, v, st.m, st.s));
    }
    __device__ void add(State& st, const Row&, int64_t at) const { add_value(st, load(at)); }
    __device__ void write(const State& st, const Row&, int64_t at) const { write_value(st, at, load(at)); }
    __device__ void finish(const State&, const Row&) const {}
};

// Their backward: gx from g and the forward's y.
template <class T>
struct SoftmaxBackwardOp {
    using C = Compute<T>;
    using State = Sums<C, 1>;
    struct Value {
        C g, y;
    };
    const T* g;
    const T* y;
    T* gx;
    bool log;
    __device__ Value load(int64_t at) const { return {C(g[at]), C(y[at])}; }
    __device__ void add_value(State& st, Value v) const { st.v[0] += softmax_backward_term(log, v.g, v.y); }
    __device__ void write_value(const State& st, int64_t at, Value v) const
    {
        gx[at] = T(softmax_backward_value(log, v.g, v.y, st.v[0]));
    }
    __device__ void add(State& st, const Row&, int64_t at) const { add_value(st, load(at)); }
    __device__ void write(const State& st, const Row&, int64_t at) const { write_value(st, at, load(at)); }
    __device__ void finish(const State&, const Row&) const {}
};

// A class loss's per-row losses (inner == 1, row = sample). From logits, the row is
// reduced to its logsumexp (and, with label smoothing, sum_c w[c] x[c]); from
// log-probabilities nothing is read but the target's entry (add does nothing, and its loop
// compiles away). finish checks the target, reporting one out of range as check_index does,
// and writes the row's loss (and lse). x is stored as T and computed in C; the losses are
// stored as Out: T when they are the result (reduction none), C when the total sums them (so
// a 16-bit loss is rounded once). w (class weights) null: all 1.
template <class T, class Out, bool FROM_LOGITS>
struct ClassLossOp {
    using C = Compute<T>;
    using State = MaxSumDot<C>;
    const T* x;
    const int64_t* target;
    Out* loss;
    double* lse;  // null unless FROM_LOGITS (row_logsumexp)
    const T* w;
    double smoothing;
    IndexCheck check;
    IndexFaults faults;
    __device__ void add(State& st, const Row& row, int64_t at) const
    {
        if constexpr (FROM_LOGITS) {
            softmax_merge(st.m, st.s, C(x[at]), C(1));
            if (smoothing > 0) {
                const double wc = w ? double(C(w[at - row.base])) : 1.0;
                st.wx += wc * double(C(x[at])), st.ws += wc;
            }
        }
    }
    __device__ void write(const State&, const Row&, int64_t) const {}
    __device__ void finish(const State& st, const Row& row) const
    {
        const int64_t t = target[row.index];
        int64_t resolved;
        if (!resolve_index(t, check, resolved)) faults.report(check, t, row.index);
        const double row_lse = FROM_LOGITS ? row_logsumexp(st.m, st.s) : 0.0;
        if constexpr (FROM_LOGITS) lse[row.index] = row_lse;
        const int64_t cls = target_class(t, check);
        const C nll = class_row_loss(x + row.base, cls, FROM_LOGITS, st.m, st.s);
        if (!w && smoothing == 0) {  // the plain loss, in C
            loss[row.index] = Out(nll);
            return;
        }
        const double w_cls = cls >= 0 && w ? double(C(w[cls])) : 1.0;
        loss[row.index] = Out(weighted_row_loss(double(nll), cls, w_cls, smoothing, check.size, row_lse, st.ws, st.wx));
    }
};

// The reduction of a class loss: all N per-row losses (C, the compute type) as one row,
// summed, with the count of rows whose target counts; the mean divides by it (0 / 0 = NaN
// for none). out and count are stored as T.
template <class T>
struct LossTotalOp {
    using C = Compute<T>;
    using State = Sums<C, 2>;  // the losses' sum, the rows counted
    const C* loss;
    const int64_t* target;
    const T* w;  // class weights: a row counts w[t] in the mean (null: 1)
    IndexCheck check;
    bool mean;
    T* out;
    T* count;  // null unless mean
    __device__ void add(State& st, const Row&, int64_t at) const
    {
        st.v[0] += loss[at];
        const int64_t cls = target_class(target[at], check);
        st.v[1] += cls < 0 ? C(0) : w ? C(w[cls]) : C(1);
    }
    __device__ void write(const State&, const Row&, int64_t) const {}
    __device__ void finish(const State& st, const Row&) const
    {
        out[0] = T(mean ? st.v[0] / st.v[1] : st.v[0]);
        if (count) count[0] = T(st.v[1]);
    }
};

// A class loss's gradient, one element at a time (inner == 1, row = sample); stored as T,
// computed in C. w: the class weights (null: 1); with label smoothing and weights the row is
// first reduced to sum_c w[c] (the same for every row; nothing is read otherwise).
template <class T>
struct ClassLossBackwardOp {
    using C = Compute<T>;
    using State = Sums<double, 1>;
    T* gx;
    const T* g;
    int64_t g_stride;
    const T* x;    // null from log-probabilities
    const double* lse;  // null from log-probabilities
    const T* count;
    const int64_t* target;
    const T* w;
    ClassLoss spec;
    __device__ void add(State& st, const Row& row, int64_t at) const
    {
        if (w && spec.smoothing > 0) st.v[0] += double(C(w[at - row.base]));
    }
    __device__ void write(const State& st, const Row& row, int64_t at) const
    {
        const double wsum = w ? st.v[0] : double(spec.check.size);
        const int64_t cls = target_class(target[row.index], spec.check), c = at - row.base;
        const C r = class_row_weight<T, C>(spec, g, g_stride, count, row.index, cls);
        const C w_cls = cls >= 0 && w ? C(w[cls]) : C(1), w_c = w ? C(w[c]) : C(1);
        gx[at] = T(class_loss_grad(spec.from_logits, x ? C(x[at]) : C(0), lse ? lse[row.index] : 0.0, c, cls, r, w_cls,
                                   w_c, spec.smoothing, spec.check.size, wsum));
    }
    __device__ void finish(const State&, const Row&) const {}
};

template <class T>
T* data_or_null(const Tensor& t)
{
    return t ? t->data_as<T>() : nullptr;
}

}  // namespace

// MINITORCH_CUDA_SOFTMAX=merge: softmax forward on rows of up to 1024 through the online
// merge of warp_rows_cached_kernel, not softmax_rows_kernel (to compare the two in one run).
// Read at every call, as the other switches.
bool softmax_merge_forced() { return env_is("MINITORCH_CUDA_SOFTMAX", "merge"); }

// softmax_rows_kernel with the fewest registers per lane that hold a row of C <= 1024.
template <class T, bool kLog>
void launch_softmax_rows(const T* x, T* y, int64_t rows, int C)
{
    const unsigned grid = capped_grid((rows + kCachedThreads / kWarp - 1) / (kCachedThreads / kWarp));
    const int per_lane = (C + kWarp - 1) / kWarp;
#define MT_SOFTMAX_ROWS(K) MT_LAUNCH(grid, kCachedThreads, 0, 0, softmax_rows_kernel<T, K, kLog>)(x, y, rows, C)
    if (per_lane <= 1) MT_SOFTMAX_ROWS(1);
    else if (per_lane <= 2) MT_SOFTMAX_ROWS(2);
    else if (per_lane <= 4) MT_SOFTMAX_ROWS(4);
    else if (per_lane <= 8) MT_SOFTMAX_ROWS(8);
    else if (per_lane <= 16) MT_SOFTMAX_ROWS(16);
    else MT_SOFTMAX_ROWS(32);
#undef MT_SOFTMAX_ROWS
    MT_CUDA_CHECK_LAUNCH(kLog ? "log_softmax" : "softmax");
}

// softmax_block_rows_kernel with the fewest registers per thread that hold a row of
// 1024 < C <= kBlockRowMaxC.
template <class T, bool kLog>
void launch_softmax_block_rows(const T* x, T* y, int64_t rows, int C)
{
    const unsigned grid = capped_grid(rows);
    const int per_thread = (C + kRowBlockThreads - 1) / kRowBlockThreads;
#define MT_SOFTMAX_BLOCK_ROWS(K) \
    MT_LAUNCH(grid, kRowBlockThreads, 0, 0, softmax_block_rows_kernel<T, K, kLog>)(x, y, rows, C)
    if (per_thread <= 4) MT_SOFTMAX_BLOCK_ROWS(4);
    else if (per_thread <= 8) MT_SOFTMAX_BLOCK_ROWS(8);
    else if (per_thread <= 16) MT_SOFTMAX_BLOCK_ROWS(16);
    else MT_SOFTMAX_BLOCK_ROWS(32);
#undef MT_SOFTMAX_BLOCK_ROWS
    MT_CUDA_CHECK_LAUNCH(kLog ? "log_softmax" : "softmax");
}

void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log)
{
    const SoftmaxRows g = softmax_rows(in->shape, dim);
    dispatch_floating16(in->dtype, "softmax", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const int64_t rows = g.outer * g.inner;
        // float64 keeps the online merge: with twice the registers a value, ptxas spreads
        // softmax_rows_kernel's loads of a log_softmax row out one by one (tools/sass.py).
        if constexpr (!std::is_same_v<T, double>) {
            if (g.inner == 1 && g.C >= 1 && g.C <= kBlockRowMaxC && rows > 0 && !softmax_merge_forced()) {
                const T* x = in->data_as<T>();
                T* y = out->data_as<T>();
                const int C = int(g.C);
                if (C <= kWarpRowMaxC) log ? launch_softmax_rows<T, true>(x, y, rows, C)
                                           : launch_softmax_rows<T, false>(x, y, rows, C);
                else log ? launch_softmax_block_rows<T, true>(x, y, rows, C)
                         : launch_softmax_block_rows<T, false>(x, y, rows, C);
                return;
            }
        }
        launch_rows(SoftmaxOp<T>{in->data_as<T>(), out->data_as<T>(), log}, g, log ? "log_softmax" : "softmax");
    });
}

void softmax_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out, int64_t dim, bool log)
{
    dispatch_floating16(out->dtype, "softmax_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        launch_rows(SoftmaxBackwardOp<T>{grad_out->data_as<T>(), out->data_as<T>(), grad_in->data_as<T>(), log},
                    softmax_rows(out->shape, dim), log ? "log_softmax_backward" : "softmax_backward");
    });
}

void class_loss(const Tensor& out, const Tensor& lse, const Tensor& count, const Tensor& input, const Tensor& target,
                const Tensor& weight, const ClassLoss& spec)
{
    const int64_t N = target->numel(), C = spec.check.size;
    const bool total = spec.reduction != ClassLoss::None;
    dispatch_floating16(input->dtype, spec.check.op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using A = Compute<T>;
        const T* x = input->data_as<T>();
        const int64_t* t = target->data_as<int64_t>();
        // The per-row losses: the result (none, stored as T), or what the second launch sums
        // (kept in A, float32 for the 16-bit types, so the total is rounded once).
        const DType a_dtype = std::is_same_v<A, double> ? DType::Float64 : DType::Float32;
        const Tensor per_row = total ? empty({N}, a_dtype, input->device()) : out;
        auto run = [&](auto out_tag) {
            using Out = typename decltype(out_tag)::type;
            if (N == 0) return;
            const IndexFaults faults = index_faults(spec.check.op);
            if (spec.from_logits) {
                const ClassLossOp<T, Out, true> op{x, t, per_row->data_as<Out>(), lse->data_as<double>(),
                                                   data_or_null<T>(weight), spec.smoothing, spec.check, faults};
                launch_rows(op, SoftmaxRows{N, C, 1}, spec.check.op);
            } else {  // nothing to reduce: one thread per row
                const ClassLossOp<T, Out, false> op{x, t, per_row->data_as<Out>(), nullptr, data_or_null<T>(weight),
                                                    0.0, spec.check, faults};
                MT_LAUNCH(blocks_for(N), kThreads, 0, 0, thread_rows_kernel<ClassLossOp<T, Out, false>>)(op, N, C,
                                                                                                       int64_t(1));
                MT_CUDA_CHECK_LAUNCH(spec.check.op);
            }
        };
        if (total) run(Tag<A>{});
        else run(Tag<T>{});
        if (total) {  // one block sums all rows (an empty batch too: 0, or NaN for the mean)
            const LossTotalOp<T> op{per_row->data_as<A>(), t, data_or_null<T>(weight), spec.check,
                                    spec.reduction == ClassLoss::Mean, out->data_as<T>(), data_or_null<T>(count)};
            MT_LAUNCH(1, kRowBlockThreads, 0, 0, block_rows_kernel<LossTotalOp<T>>)(op, int64_t(1), N);
            MT_CUDA_CHECK_LAUNCH(spec.check.op);
        }
    });
}

void class_loss_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& input, const Tensor& lse,
                         const Tensor& count, const Tensor& target, const Tensor& weight, const ClassLoss& spec)
{
    const int64_t N = target->numel(), C = spec.check.size;
    dispatch_floating16(grad_input->dtype, spec.check.op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const int64_t g_stride = grad_out->dim() == 1 ? grad_out->strides[0] : 0;
        const ClassLossBackwardOp<T> op{grad_input->data_as<T>(), grad_out->data_as<T>(), g_stride,
                                        data_or_null<T>(input), data_or_null<double>(lse), data_or_null<T>(count),
                                        target->data_as<int64_t>(), data_or_null<T>(weight), spec};
        launch_rows(op, SoftmaxRows{N, C, 1}, spec.check.op);
    });
}

// The table's softmax entries: float16 / bfloat16 tensors of one dtype are read in place;
// anything else goes through Widen.
void softmax16(const Tensor& out, const Tensor& in, int64_t dim, bool log)
{
    if (is_16bit(in->dtype) && out->dtype == in->dtype) return softmax(out, in, dim, log);
    MT_WIDEN(softmax, const Tensor&, const Tensor&, int64_t, bool)(out, in, dim, log);
}

void softmax_backward16(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out, int64_t dim, bool log)
{
    if (is_16bit(out->dtype) && grad_in->dtype == out->dtype && grad_out->dtype == out->dtype)
        return softmax_backward(grad_in, grad_out, out, dim, log);
    MT_WIDEN(softmax_backward, const Tensor&, const Tensor&, const Tensor&, int64_t, bool)(grad_in, grad_out, out, dim,
                                                                                          log);
}

}  // namespace minitorch::cuda
