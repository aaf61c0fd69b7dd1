// dtype.h — the four element types and PyTorch's promotion order between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <utility>

#include "minitorch/error.h"

namespace minitorch {

// Declared in promotion order: bool < int64 < float32 < float64, so the promoted
// type of two dtypes is simply the larger one.
enum class DType : uint8_t { Bool = 0, Int64 = 1, Float32 = 2, Float64 = 3 };

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
    }
    return "?";
}

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }

// 0 = bool, 1 = integer, 2 = floating: PyTorch compares categories when a scalar or a
// 0-dim tensor meets a dimensioned tensor.
inline int category(DType t) { return t == DType::Bool ? 0 : (t == DType::Int64 ? 1 : 2); }

inline DType promote(DType a, DType b) { return a > b ? a : b; }

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
    }
    throw TypeError("unknown dtype");
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
