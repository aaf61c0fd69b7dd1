// shape_math.h — where one output element of remap (flip, roll, tril/triu, repeat, constant
// padding) comes from, written once for the CPU kernel (cpu/shape.cpp) and the CUDA kernel
// (cuda/shape.cu).
#pragma once
#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE
#include "minitorch/kernels.h"

namespace minitorch {

// The input element (in elements from in's data()) that output element i (row-major over
// `shape`, m.ndim dims) reads, or -1 where it is m.fill instead (0 above/below tril's/triu's
// diagonal, the padding of constant_pad_nd). See Remap (kernels.h).
MT_HOST_DEVICE inline int64_t remap_source(const Remap& m, const int64_t* shape, int64_t i)
{
    int64_t at = 0, col = 0;
    for (int d = m.ndim - 1; d >= 0; --d) {
        const int64_t o = i % shape[d];
        i /= shape[d];
        if (m.triangle && d == m.ndim - 1) col = o;
        if (m.triangle && d == m.ndim - 2) {
            const int64_t above = col - o - m.diagonal;  // > 0: above the diagonal, < 0: below
            if (m.triangle > 0 ? above > 0 : above < 0) return -1;
        }
        int64_t c = o + m.shift[d];
        if (m.pad) {
            c = o - m.pad_left[d];
            if (c < 0 || c >= m.in_size[d]) return -1;  // in the padding
        } else if (c >= m.in_size[d]) {
            c %= m.in_size[d];  // roll wraps; repeat's copies start over
        }
        if (m.flip[d]) c = m.in_size[d] - 1 - c;
        at += c * m.in_stride[d];
    }
    return at;
}

// Calls f(Tag<B>{}) with B an unsigned integer of `size` bytes (1, 2, 4 or 8): the
// remap kernels move elements as raw bytes, so one instance per size serves every dtype.
template <class F>
void dispatch_bytes(size_t size, F&& f)
{
    switch (size) {
        case 1: return f(Tag<uint8_t>{});
        case 2: return f(Tag<uint16_t>{});
        case 4: return f(Tag<uint32_t>{});
        default: return f(Tag<uint64_t>{});
    }
}

}  // namespace minitorch
