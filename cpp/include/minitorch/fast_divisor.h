// fast_divisor.h — integer division by a number fixed for a whole launch, without a
// divide instruction (a GPU has none: a 64-bit `/` or `%` is a long software sequence).
// Strided<N> (cuda/common.cuh) divides each flat index by every dim's size this way, and
// the index walks shared by the CPU and CUDA kernels (index_math.h) too.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define MT_DIVIDE_INLINE __host__ __device__ __forceinline__
#else
#define MT_DIVIDE_INLINE inline
#endif

namespace minitorch {

// Division by a number fixed for a whole launch, for n < 2^31, as a multiply-high and a
// shift (Granlund and Montgomery's method): with s the smallest power such that 2^s >= d,
// and m = floor(2^32 (2^s - d) / d) + 1 (it fits in 32 bits), n / d = (umulhi(n, m) + n) >> s.
// n + umulhi(n, m) <= 2n stays below 2^32. d = 1 gives m = 1, s = 0: n itself.
struct FastDivisor {
    uint32_t d = 1, m = 1, s = 0;

    FastDivisor() = default;
    explicit FastDivisor(uint32_t divisor) : d(divisor < 1 ? 1 : divisor)
    {
        while ((uint64_t(1) << s) < d) ++s;
        m = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << s) - d)) / d + 1);
    }
    MT_DIVIDE_INLINE uint32_t div(uint32_t n) const
    {
        const uint32_t hi = uint32_t((uint64_t(n) * m) >> 32);  // umulhi(n, m)
        return (hi + n) >> s;
    }
};

// i / d for 0 <= i < limit: a FastDivisor when limit fits in 31 bits (its n < 2^31), else
// the 64-bit division. `limit` is known for a whole launch, so every thread takes the same
// branch.
struct DivideBy {
    int64_t d = 1;
    bool fast = true;
    FastDivisor by;

    DivideBy() = default;
    DivideBy(int64_t divisor, int64_t limit)
        : d(divisor < 1 ? 1 : divisor), fast(limit < (int64_t(1) << 31)), by(uint32_t(fast ? d : 1))
    {
    }
    MT_DIVIDE_INLINE int64_t operator()(int64_t i) const
    {
        return fast ? int64_t(by.div(uint32_t(i))) : i / d;
    }
};

// A flat index over planes of rows x width (NCHW's H x W: pooling, upsampling) split into
// plane p, row r and column c with two multiply-high divisions instead of four 64-bit ones.
// n: how many indices the launch walks. Made on the host.
struct PlaneIndex {
    DivideBy by_width, by_plane;
    int64_t width = 1, rows = 1;

    PlaneIndex() = default;
    PlaneIndex(int64_t width_, int64_t rows_, int64_t n)
        : by_width(width_, n), by_plane(width_ * rows_, n), width(width_), rows(rows_)
    {
    }
    MT_DIVIDE_INLINE void of(int64_t i, int64_t& p, int64_t& r, int64_t& c) const
    {
        const int64_t q = by_width(i);  // whole rows before i
        p = by_plane(i);
        c = i - q * width;
        r = q - p * rows;
    }
};

}  // namespace minitorch
