// dtype.h — the four element types and PyTorch's promotion order between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <utility>

#include "minitorch/error.h"
#include "minitorch/half.h"

namespace minitorch {

// bool < int64 < float32 < float64 are declared in promotion order; the 16-bit floats
// (half.h) come after them in the enum, so promote() ranks them explicitly.
enum class DType : uint8_t { Bool = 0, Int64 = 1, Float32 = 2, Float64 = 3, Float16 = 4, BFloat16 = 5 };
constexpr int kDTypes = 6;

// The default floating dtype (PyTorch's get_default_dtype): what Python floats, float
// factories without a dtype and int -> float ops (exp of an int tensor) make. float32
// unless minitorch.set_default_dtype(minitorch.float64) changed it (cpp/src/tensor.cpp).
DType default_float();
void set_default_float(DType t);

inline size_t itemsize(DType t)
{
    switch (t) {
        case DType::Bool: return 1;
        case DType::Int64: return 8;
        case DType::Float32: return 4;
        case DType::Float64: return 8;
        case DType::Float16: return 2;
        case DType::BFloat16: return 2;
    }
    return 0;
}

inline const char* dtype_name(DType t)
{
    switch (t) {
        case DType::Bool: return "bool";
        case DType::Int64: return "int64";
        case DType::Float32: return "float32";
        case DType::Float64: return "float64";
        case DType::Float16: return "float16";
        case DType::BFloat16: return "bfloat16";
    }
    return "?";
}

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

inline bool is_16bit(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64 || is_16bit(t); }

// 0 = bool, 1 = integer, 2 = floating: PyTorch compares categories when a scalar or a
// 0-dim tensor meets a dimensioned tensor.
inline int category(DType t) { return t == DType::Bool ? 0 : (t == DType::Int64 ? 1 : 2); }

// PyTorch's promotion lattice: bool < int64 < {float16, bfloat16} < float32 < float64,
// and float16 with bfloat16 gives float32 (neither holds the other's values).
inline int promotion_rank(DType t)
{
    switch (t) {
        case DType::Bool: return 0;
        case DType::Int64: return 1;
        case DType::Float16: case DType::BFloat16: return 2;
        case DType::Float32: return 3;
        case DType::Float64: return 4;
    }
    return 0;
}
inline DType promote(DType a, DType b)
{
    if (a == b) return a;
    const int ra = promotion_rank(a), rb = promotion_rank(b);
    if (ra == rb) return DType::Float32;  // float16 with bfloat16
    return ra > rb ? a : b;
}

template <class T> struct Tag { using type = T; };

// Calls f(Tag<T>{}) with the C++ type T stored for dtype t.
template <class F>
decltype(auto) dispatch(DType t, F&& f)
{
    switch (t) {
        case DType::Bool: return f(Tag<bool>{});
        case DType::Int64: return f(Tag<int64_t>{});
        case DType::Float32: return f(Tag<float>{});
        case DType::Float64: return f(Tag<double>{});
        case DType::Float16: case DType::BFloat16: break;
    }
    throw TypeError(detail::str("internal error: a ", t, " tensor reached a kernel that computes in its own type"));
}

// Every storage type, the 16-bit ones included (as Half / BFloat16 of half.h): for the
// kernels that only move or convert values (copy, fill) and for reading one element.
// Compute kernels use dispatch(): they never see a 16-bit tensor (see Upcast16 in kernels.h).
template <class F>
decltype(auto) dispatch_storage(DType t, F&& f)
{
    if (t == DType::Float16) return f(Tag<Half>{});
    if (t == DType::BFloat16) return f(Tag<BFloat16>{});
    return dispatch(t, std::forward<F>(f));
}

// Floating dtypes only (for kernels such as exp or BLAS).
template <class F>
decltype(auto) dispatch_floating(DType t, const char* op, F&& f)
{
    if (t == DType::Float32) return f(Tag<float>{});
    if (t == DType::Float64) return f(Tag<double>{});
    throw TypeError(detail::str(op, ": expected a floating dtype, got ", t));
}

}  // namespace minitorch
