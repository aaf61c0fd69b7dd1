// indexing.cpp — CPU kernels that index by tensors: whole rows (index_select and its
// backward; a DataLoader batch is one gather_rows), elements along one dim (gather,
// scatter: also index_add / index_copy / index_fill, whose index is expanded), NumPy's
// advanced indexing (index_put), cat, and nonzero. Geometry: minitorch/index_math.h.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/index_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

// index[i], checked (IndexError at the first bad one) and wrapped where allowed.
inline int64_t checked(int64_t v, const IndexCheck& check, int64_t position)
{
    int64_t out;
    if (!resolve_index(v, check, out)) throw IndexError(index_error_message(check, v, position));
    return out;
}

// The rows' indices checked before anything is written (the copies below may run on
// worker threads, which cannot throw), so a bad index leaves out untouched.
void check_rows(const int64_t* idx, int64_t n, const IndexCheck& check)
{
    for (int64_t i = 0; i < n; ++i) checked(idx[i], check, i);
}

}  // namespace

void gather_rows(const Tensor& out, const Tensor& in, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel(), row = n ? out->numel() / n : 0;
    const size_t bytes = size_t(row) * itemsize(in->dtype);
    const int64_t* idx = index->data_as<int64_t>();
    const char* src = in->data();
    char* dst = out->data();
    check_rows(idx, n, check);
    // Rows are independent: split them across threads when there is enough to copy.
    parallel_for(n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * bytes, src + checked(idx[i], check, i) * bytes, bytes);
    });
}

void scatter_add_rows(const Tensor& out, const Tensor& in, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel(), row = n ? in->numel() / n : 0;
    const int64_t* idx = index->data_as<int64_t>();
    check_rows(idx, n, check);
    // Serial: two rows of `in` may add into the same row of `out`.
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* src = in->data_as<T>();
        T* dst = out->data_as<T>();
        for (int64_t i = 0; i < n; ++i) {
            const int64_t k = checked(idx[i], check, i);
            if (k == check.ignore) continue;  // embedding's padding_idx
            T* o = dst + k * row;
            const T* s = src + i * row;
            for (int64_t j = 0; j < row; ++j) o[j] = static_cast<T>(o[j] + s[j]);
        }
    });
}

void put_rows(const Tensor& out, const Tensor& in, const Tensor& index)
{
    const int64_t n = index->numel(), row = n ? in->numel() / n : 0;
    const size_t bytes = size_t(row) * itemsize(in->dtype);
    const int64_t* idx = index->data_as<int64_t>();
    const char* src = in->data();
    char* dst = out->data();
    // Serial, in order: where two rows name one index, the last one stays.
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + idx[i] * bytes, src + i * bytes, bytes);
}

namespace {

// Calls f(i, self, other, index) with the offsets of elements [b, e) of index, row-major
// (DimIndexing): computed once per run along the last dim, then stepped by that dim's
// strides, so there is no division per element.
template <class F>
void walk(const DimIndexing& g, int64_t b, int64_t e, F&& f)
{
    const int last = g.ndim - 1;
    const int64_t run = g.shape[last];
    for (int64_t i = b; i < e;) {
        int64_t s, o, x;
        g.offsets(i, s, o, x);
        const int64_t stop = std::min(e, (i / run + 1) * run);
        for (; i < stop; ++i, s += g.self_stride[last], o += g.other_stride[last], x += g.index_stride[last])
            f(i, s, o, x);
    }
}

}  // namespace

void gather(const Tensor& out, const Tensor& in, const Tensor& index, int64_t dim, const IndexCheck& check)
{
    const DimIndexing g = dim_indexing(in, out, index, dim);
    const int64_t* idx = index->data_as<int64_t>();
    std::atomic<int64_t> bad{-1};  // position of a bad index, if any
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* src = in->data_as<T>();
        T* dst = out->data_as<T>();
        // Each element is read independently: split across threads. A worker cannot throw
        // (OpenMP), so it notes a bad index and the caller raises after the loop.
        parallel_for(g.numel, kGrainSize, [&](int64_t b, int64_t e) {
            walk(g, b, e, [&](int64_t i, int64_t s, int64_t o, int64_t x) {
                int64_t k;
                if (resolve_index(idx[x], check, k)) {
                    dst[o] = src[s + k * g.self_dim_stride];
                } else {
                    int64_t none = -1;
                    bad.compare_exchange_strong(none, i);
                }
            });
        });
    });
    if (bad >= 0) {
        int64_t s, o, x;
        g.offsets(bad, s, o, x);
        checked(idx[x], check, bad);
    }
}

void scatter(WriteOp op, const Tensor& out, const Tensor& src, const Tensor& index, int64_t dim,
             const IndexCheck& check)
{
    const DimIndexing g = dim_indexing(out, src, index, dim);
    const int64_t* idx = index->data_as<int64_t>();
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* from = src->data_as<T>();
        T* dst = out->data_as<T>();
        // Serial, in order: two elements may name one place (Put keeps the last; the
        // reductions combine in index order, so a sum's rounding is the same every run).
        walk(g, 0, g.numel, [&](int64_t i, int64_t s, int64_t o, int64_t x) {
            T& place = dst[s + checked(idx[x], check, i) * g.self_dim_stride];
            place = scatter_combine(op, place, from[o]);
        });
    });
}

void index_put(WriteOp op, bool read, const Tensor& self, const Tensor& values, const std::vector<Tensor>& indices,
               const char* op_name)
{
    const AdvancedIndexing g = advanced_indexing(self, values, indices);
    dispatch(self->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* base = self->data_as<T>();
        T* vals = values->data_as<T>();
        // Serial: index positions may repeat (Put keeps the last, Add adds all).
        for (int64_t b = 0; b < g.nb; ++b) {
            int64_t off = 0;
            for (int j = 0; j < g.k; ++j) off += checked(g.index(j, b), advanced_check(g, j, op_name), b) * g.stride[j];
            T* v = vals + b * g.value_stride;
            for (int64_t r = 0; r < g.rest_numel; ++r) {
                int64_t at, v_at;
                g.rest_offsets(r, at, v_at);
                T& place = base[off + at];
                if (read) v[v_at] = place;
                else place = op == WriteOp::Add ? static_cast<T>(place + v[v_at]) : v[v_at];
            }
        }
    });
}

// One pass: each input is copied into its slice of out by the strided copy kernel.
void cat(const Tensor& out, const std::vector<Tensor>& inputs, int64_t dim)
{
    int64_t offset = 0;
    for (const Tensor& t : inputs) {
        if (t->numel() == 0) continue;
        Shape shape = out->shape;
        shape[size_t(dim)] = t->shape[size_t(dim)];
        Tensor slice = make_view(out, shape, out->strides, out->offset + offset * out->strides[size_t(dim)]);
        copy(slice, t);
        offset += t->shape[size_t(dim)];
    }
}

void nonzero(const Tensor& out, const Tensor& count, const Tensor& in)
{
    const int64_t n = in->numel(), nd = in->dim();
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* x = in->data_as<T>();
        int64_t found = 0, limit = out ? out->shape[0] : 0;
        int64_t* pos = out ? out->data_as<int64_t>() : nullptr;
        for (int64_t i = 0; i < n; ++i) {
            if (!(x[i] != T(0))) continue;
            if (found < limit) {
                int64_t* row = pos + found * std::max<int64_t>(nd, 1);
                if (nd == 0) row[0] = 0;
                for (int64_t d = nd - 1, r = i; d >= 0; --d) {
                    row[d] = r % in->shape[size_t(d)];
                    r /= in->shape[size_t(d)];
                }
            }
            ++found;
        }
        if (count) count->data_as<int64_t>()[0] = found;
    });
}

}  // namespace minitorch::cpu
