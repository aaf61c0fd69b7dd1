// matrix_layout.h — can a GEMM read a (batched) matrix operand where it lies, or must
// it be copied first? Used by the CPU (BLAS) and CUDA (cuBLAS, tiled) matmul kernels,
// so a transposed view (W^T in Linear, G^T in its backward) is read in place.
#pragma once
#include <algorithm>
#include <cstdint>

#include "minitorch/tensor.h"

namespace minitorch {

// One (rows, cols) matrix with element strides (rs, cs), as BLAS sees it. Row-major
// BLAS reads it without a copy when its rows are contiguous (cs == 1: "no transpose",
// leading dimension ld = rs) or its columns are (rs == 1: "transpose", ld = cs). A
// dim of size 1 has any stride, so it never stands in the way.
struct BlasLayout {
    bool ok = false;
    bool transposed = false;
    int64_t ld = 0;
};

inline BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    if ((cs == 1 || cols == 1) && (rs >= std::max<int64_t>(1, cols) || rows == 1))
        return {true, false, rows == 1 ? std::max<int64_t>(1, cols) : rs};
    if ((rs == 1 || rows == 1) && (cs >= std::max<int64_t>(1, rows) || cols == 1))
        return {true, true, cols == 1 ? std::max<int64_t>(1, rows) : cs};
    return {};
}

// The batch dims of t (all but the last two) as one stride, when they are one arithmetic
// progression (contiguous batches, or a broadcast with stride 0 everywhere): batch p
// starts p * stride elements after batch 0. False when they are not (then copy first).
inline bool uniform_batch_stride(const TensorImpl& t, int64_t& stride)
{
    stride = 0;
    bool first = true;
    int64_t expect = 0;
    for (int64_t d = t.dim() - 3; d >= 0; --d) {  // innermost batch dim first
        if (t.shape[d] == 1) continue;
        if (first) {
            stride = t.strides[d];
            first = false;
        } else if (t.strides[d] != expect) {
            return false;
        }
        expect = t.strides[d] * t.shape[d];
    }
    return true;
}

}  // namespace minitorch
