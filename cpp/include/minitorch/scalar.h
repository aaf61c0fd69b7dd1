// scalar.h — a Python number on its way into a kernel (bool, int or float).
#pragma once
#include <cstdint>
#include <type_traits>

#include "minitorch/dtype.h"

namespace minitorch {

struct Scalar {
    DType dtype = DType::Float64;  // Bool, Int64 or Float64: the kind of Python number
    double d = 0.0;
    int64_t i = 0;

    Scalar() = default;
    Scalar(double v) : dtype(DType::Float64), d(v) {}
    Scalar(int64_t v) : dtype(DType::Int64), d(static_cast<double>(v)), i(v) {}
    Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
    Scalar(bool v) : dtype(DType::Bool), d(v ? 1.0 : 0.0), i(v ? 1 : 0) {}

    // The value as C++ type T (integers exactly, without a trip through double).
    template <class T> T to() const
    {
        if constexpr (std::is_same_v<T, bool>) return dtype == DType::Float64 ? d != 0.0 : i != 0;
        else if constexpr (std::is_integral_v<T>)
            return dtype == DType::Float64 ? static_cast<T>(static_cast<int64_t>(d)) : static_cast<T>(i);  // wraps into narrow types
        else return dtype == DType::Float64 ? static_cast<T>(d) : static_cast<T>(i);
    }
};

}  // namespace minitorch
