// gather.cpp — CPU kernels for the "gather / scatter-add" family, on whole rows
// (index_select and its backward, index_add / index_copy; a DataLoader batch is one
// gather_rows).
#include <cstring>

#include "kernels_cpu.h"
#include "minitorch/elementwise_math.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

void gather_rows(const Tensor& out, const Tensor& in, const Tensor& index)
{
    const int64_t n = index->numel(), row = n ? out->numel() / n : 0;
    const size_t bytes = size_t(row) * itemsize(in->dtype);
    const int64_t* idx = index->data_as<int64_t>();
    const char* src = in->data();
    char* dst = out->data();
    // Rows are independent: split them across threads when there is enough to copy.
    parallel_for(n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * bytes, src + idx[i] * bytes, bytes);
    });
}

void check_index(const Tensor& out, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel();
    const int64_t* in = index->data_as<int64_t>();
    int64_t* o = out->data_as<int64_t>();
    for (int64_t i = 0; i < n; ++i)
        if (!resolve_index(in[i], check, o[i])) throw IndexError(index_error_message(check, in[i], i));
}

void scatter_add_rows(const Tensor& out, const Tensor& in, const Tensor& index)
{
    const int64_t n = index->numel(), row = n ? in->numel() / n : 0;
    const int64_t* idx = index->data_as<int64_t>();
    // Serial: two rows of `in` may add into the same row of `out`.
    dispatch(out->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* src = in->data_as<T>();
        T* dst = out->data_as<T>();
        for (int64_t i = 0; i < n; ++i) {
            T* o = dst + idx[i] * row;
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

}  // namespace minitorch::cpu
