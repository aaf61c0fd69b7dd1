// sort.cpp — CPU kernel for sorting each line along the middle dim of a contiguous
// (outer, R, inner) tensor (sort, argsort, topk), with the positions it came from.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels_cpu.h"
#include "minitorch/parallel.h"

namespace minitorch::cpu {

namespace {

template <class T>
bool is_nan(T v)
{
    if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
    else return false;
}

// a comes before b in ascending order: NaN is above every number, NaNs are equal.
template <class T>
bool less_nan_last(T a, T b)
{
    return is_nan(b) ? !is_nan(a) : a < b;
}

}  // namespace

void sort(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending)
{
    // The op passes all three as 3-D (outer, len, inner) views.
    const int64_t outer = in->shape[0], len = in->shape[1], inner = in->shape[2], k = values->shape[1];
    dispatch(in->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* src = in->data_as<T>();
        T* val = values->data_as<T>();
        int64_t* pos = indices->data_as<int64_t>();
        const int64_t lines = outer * inner;
        parallel_for(lines, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(len * 8, 1)),
                     [&](int64_t b, int64_t e) {
            std::vector<int64_t> order(len);
            for (int64_t line = b; line < e; ++line) {
                const int64_t o = line / inner, i = line % inner;
                const T* s = src + o * len * inner + i;  // element r is s[r * inner]
                std::iota(order.begin(), order.end(), 0);
                // Equal values keep their original order (PyTorch's stable=True): ties are
                // broken by place, so the order is total and a partial sort (topk's first k,
                // O(len log k)) gives the same first k as the full sort.
                auto before = [&](int64_t x, int64_t y) {
                    const T a = s[x * inner], b = s[y * inner];
                    if (descending ? less_nan_last(b, a) : less_nan_last(a, b)) return true;
                    if (descending ? less_nan_last(a, b) : less_nan_last(b, a)) return false;
                    return x < y;
                };
                if (k < len) std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
                else std::sort(order.begin(), order.end(), before);
                const int64_t base = o * k * inner + i;
                for (int64_t r = 0; r < k; ++r) {
                    val[base + r * inner] = s[order[r] * inner];
                    pos[base + r * inner] = order[r];
                }
            }
        });
    });
}

}  // namespace minitorch::cpu
