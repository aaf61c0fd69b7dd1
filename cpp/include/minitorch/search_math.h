// search_math.h — the binary search of searchsorted / bucketize, written once for the CPU
// kernel (cpu/search.cpp) and the CUDA kernel (cuda/search.cu).
#pragma once
#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE

namespace minitorch {

// The insertion place of v in the ascending row[0, n): the first i where !(row[i] < v)
// (right: !(row[i] <= v)). Written with negated comparisons, as PyTorch's, so that a NaN
// value goes to n (a NaN in the row is not ordered: the search passes it, as PyTorch's).
template <class T>
MT_HOST_DEVICE inline int64_t search_sorted(const T* row, int64_t n, T v, bool right)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const bool before = right ? !(row[mid] > v) : !(row[mid] >= v);  // v goes after row[mid]
        if (before) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

}  // namespace minitorch
