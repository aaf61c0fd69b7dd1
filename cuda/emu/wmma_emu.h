// wmma_emu.h — CUDA's warp matrix functions (nvcuda::wmma from <mma.h>, the C++ face of the
// tensor cores) for the emulator, in the one shape minitorch uses: 16x16x16, 16-bit inputs
// (half or bfloat16: any 2-byte type that converts to and from float), float accumulators.
//
//   fragment<matrix_a, 16, 16, 16, T, row_major | col_major>     a 16x16 tile of A
//   fragment<matrix_b, 16, 16, 16, T, row_major | col_major>     a 16x16 tile of B
//   fragment<accumulator, 16, 16, 16, float>                      a 16x16 tile of C
//   fill_fragment(f, value)        load_matrix_sync(f, p, ldm[, mem_row_major | mem_col_major])
//   mma_sync(d, a, b, c): d = a b + c                store_matrix_sync(p, f, ldm, layout)
//
// On a GPU a fragment is spread over the 32 lanes of a warp in a layout CUDA does not
// specify. Here every lane holds the whole tile (f.x is the tile row by row), which is
// the simplest layout that cannot be told apart by a correct kernel: kernels may touch
// f.x[i] only for elementwise work that does not care which element is where (scaling,
// converting), as CUDA allows. Each function is warp-collective: all 32 lanes call it
// (the __syncwarp() at its end reports, or deadlocks on, a lane that does not).
//
// What the hardware requires is checked, and a kernel that breaks it fails its launch
// (a report on stderr, then an exception: cudaErrorLaunchFailure), as a GPU faults:
//   * the pointer of load_matrix_sync / store_matrix_sync is 256-bit (32-byte) aligned;
//   * ldm (elements between rows, or columns, in memory) is a multiple of 8 for 16-bit
//     elements and of 4 for float ones (16 bytes).
// The products of 16-bit values are exact in float; they are summed in order of k in
// float, which a tensor core may do in another order: compare results with a tolerance.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda_emu.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
    static_assert(M == 16 && N == 16 && K == 16, "wmma (emulated): only the 16x16x16 shape is implemented");
    static_assert(std::is_same_v<Use, accumulator> ? std::is_same_v<T, float> : sizeof(T) == 2,
                  "wmma (emulated): 16-bit matrix_a / matrix_b fragments and float accumulators only");
    static_assert(std::is_same_v<Use, accumulator> == std::is_same_v<Layout, void>,
                  "wmma: matrix_a / matrix_b take a layout (row_major or col_major), an accumulator none");

public:
    using element_type = T;
    static constexpr int num_elements = 16 * 16;
    T x[num_elements];  // the tile row by row (element (r, c) is x[16 r + c]) in every lane
};

namespace detail {

// The checks a GPU makes; a failure ends the launch (see the top of this file).
inline void require(bool ok, const char* fn, const void* p, unsigned ldm, const char* what)
{
    if (ok) return;
    ::emu::detail::report("block (%u,%u,%u) thread (%u,%u,%u): wmma::%s(%p, ldm = %u): %s", blockIdx.x, blockIdx.y,
                          blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, fn, p, ldm, what);
    throw std::runtime_error(std::string("wmma::") + fn + ": " + what);
}

template <class T>
void check_memory(const char* fn, const T* p, unsigned ldm)
{
    require(reinterpret_cast<uintptr_t>(p) % 32 == 0, fn, p, ldm,
            "the pointer must be 256-bit (32-byte) aligned");
    require(ldm * sizeof(T) % 16 == 0, fn, p, ldm,
            sizeof(T) == 2 ? "ldm must be a multiple of 8 for 16-bit elements"
                           : "ldm must be a multiple of 4 for float elements");
}

// Where element (r, c) of a tile lives in memory laid out by rows or by columns.
inline unsigned offset(unsigned r, unsigned c, unsigned ldm, bool by_rows)
{
    return by_rows ? r * ldm + c : c * ldm + r;
}

}  // namespace detail

template <class Use, class T, class L, class V>
void fill_fragment(fragment<Use, 16, 16, 16, T, L>& f, const V& value)
{
    for (T& e : f.x) e = T(value);
    __syncwarp();
}

// A or B from memory; the fragment's layout says how the tile lies there.
template <class Use, class T, class L>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, L>& f, const T* p, unsigned ldm)
{
    static_assert(!std::is_same_v<Use, accumulator>, "wmma: an accumulator is loaded with a mem_*_major layout");
    detail::check_memory("load_matrix_sync", p, ldm);
    for (unsigned r = 0; r < 16; ++r)
        for (unsigned c = 0; c < 16; ++c) f.x[16 * r + c] = p[detail::offset(r, c, ldm, std::is_same_v<L, row_major>)];
    __syncwarp();  // after reading, so a lane that reads before another lane wrote still shows
}

// An accumulator from memory, laid out as `layout` says.
template <class T>
void load_matrix_sync(fragment<accumulator, 16, 16, 16, T>& f, const T* p, unsigned ldm, layout_t layout)
{
    detail::check_memory("load_matrix_sync", p, ldm);
    for (unsigned r = 0; r < 16; ++r)
        for (unsigned c = 0; c < 16; ++c) f.x[16 * r + c] = p[detail::offset(r, c, ldm, layout == mem_row_major)];
    __syncwarp();
}

template <class T>
void store_matrix_sync(T* p, const fragment<accumulator, 16, 16, 16, T>& f, unsigned ldm, layout_t layout)
{
    detail::check_memory("store_matrix_sync", p, ldm);
    for (unsigned r = 0; r < 16; ++r)
        for (unsigned c = 0; c < 16; ++c) p[detail::offset(r, c, ldm, layout == mem_row_major)] = f.x[16 * r + c];
    __syncwarp();
}

// d = a b + c, products and sums in float.
template <class T, class LA, class LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, T, LA>& a,
              const fragment<matrix_b, 16, 16, 16, T, LB>& b, const fragment<accumulator, 16, 16, 16, float>& c)
{
    float out[16 * 16];  // d may be c
    for (int r = 0; r < 16; ++r)
        for (int n = 0; n < 16; ++n) {
            float sum = c.x[16 * r + n];
            for (int k = 0; k < 16; ++k) sum += float(a.x[16 * r + k]) * float(b.x[16 * k + n]);
            out[16 * r + n] = sum;
        }
    for (int i = 0; i < 16 * 16; ++i) d.x[i] = out[i];
    __syncwarp();
}

}  // namespace nvcuda::wmma
