// dtype.h — the element types and PyTorch's promotion order between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <utility>

#include "minitorch/error.h"
#include "minitorch/half.h"

namespace minitorch {

// The compute types bool, int64, float32, float64 come first; the storage-only types come
// after them: the 16-bit floats (half.h) and the narrow integers uint8, int8, int16, int32.
// Kernels compute on the first four only: a 16-bit float tensor reaches them staged as
// float32, a narrow integer tensor staged as int64 (Widen in kernels.h), and the result is
// stored back in the narrow type, so integer arithmetic wraps around as PyTorch's does.
// promote() ranks every type explicitly.
enum class DType : uint8_t {
    Bool = 0, Int64 = 1, Float32 = 2, Float64 = 3, Float16 = 4, BFloat16 = 5,
    UInt8 = 6, Int8 = 7, Int16 = 8, Int32 = 9
};
constexpr int kDTypes = 10;

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
        case DType::UInt8: return 1;
        case DType::Int8: return 1;
        case DType::Int16: return 2;
        case DType::Int32: return 4;
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
        case DType::UInt8: return "uint8";
        case DType::Int8: return "int8";
        case DType::Int16: return "int16";
        case DType::Int32: return "int32";
    }
    return "?";
}

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

inline bool is_16bit(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64 || is_16bit(t); }
// uint8, int8, int16, int32: stored in their own width, computed as int64.
inline bool is_narrow_int(DType t)
{
    return t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 || t == DType::Int32;
}
inline bool is_integral(DType t) { return t == DType::Int64 || is_narrow_int(t); }
// The types a compute kernel sees (dispatch()); the others are staged (kernels.h).
inline bool is_storage_only(DType t) { return is_16bit(t) || is_narrow_int(t); }

// 0 = bool, 1 = integer, 2 = floating: PyTorch compares categories when a scalar or a
// 0-dim tensor meets a dimensioned tensor.
inline int category(DType t) { return t == DType::Bool ? 0 : (is_integral(t) ? 1 : 2); }

// PyTorch's promotion lattice: bool < {uint8, int8} < int16 < int32 < int64 <
// {float16, bfloat16} < float32 < float64. Two types of one rank meet one rank up:
// uint8 with int8 gives int16, float16 with bfloat16 gives float32 (neither holds all
// the other's values).
inline int promotion_rank(DType t)
{
    switch (t) {
        case DType::Bool: return 0;
        case DType::UInt8: case DType::Int8: return 1;
        case DType::Int16: return 2;
        case DType::Int32: return 3;
        case DType::Int64: return 4;
        case DType::Float16: case DType::BFloat16: return 5;
        case DType::Float32: return 6;
        case DType::Float64: return 7;
    }
    return 0;
}
inline DType promote(DType a, DType b)
{
    if (a == b) return a;
    const int ra = promotion_rank(a), rb = promotion_rank(b);
    if (ra == rb) return is_floating(a) ? DType::Float32 : DType::Int16;
    return ra > rb ? a : b;
}
// The compute type a storage-only type is staged as (itself for the others).
inline DType wide_dtype(DType t)
{
    if (is_16bit(t)) return DType::Float32;
    if (is_narrow_int(t)) return DType::Int64;
    return t;
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
        default: break;
    }
    throw TypeError(detail::str("internal error: a ", t, " tensor reached a kernel that computes in its own type"));
}

// Every storage type, the 16-bit floats (as Half / BFloat16 of half.h) and the narrow
// integers included: for the kernels that only move or convert values (copy, fill) and for
// reading one element. Compute kernels use dispatch(): they never see a storage-only
// tensor (see Widen in kernels.h).
template <class F>
decltype(auto) dispatch_storage(DType t, F&& f)
{
    switch (t) {
        case DType::Float16: return f(Tag<Half>{});
        case DType::BFloat16: return f(Tag<BFloat16>{});
        case DType::UInt8: return f(Tag<uint8_t>{});
        case DType::Int8: return f(Tag<int8_t>{});
        case DType::Int16: return f(Tag<int16_t>{});
        case DType::Int32: return f(Tag<int32_t>{});
        default: return dispatch(t, std::forward<F>(f));
    }
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
