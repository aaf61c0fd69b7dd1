// convert.h — turning Python arguments into C++ values, with PyTorch-style errors.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "minitorch/ops.h"

namespace py = pybind11;

namespace minitorch::python {

// dtype=: a minitorch dtype, a Python type (float -> float64, int -> int64, bool),
// a NumPy dtype or its name. None -> `fallback`.
DType dtype_arg(py::handle h, DType fallback = default_float());
std::optional<DType> optional_dtype_arg(py::handle h);
// device=: a minitorch device, "cpu", "cuda", "cuda:1", or None (cpu).
Device device_arg(py::handle h);
// A size given as ints, or as one tuple / list / Size of ints.
Shape shape_arg(const py::args& args, const char* op);
Shape shape_seq(py::handle seq, const char* op);
// dim=: None -> empty (all dims), an int, or a tuple / list of ints.
std::vector<int64_t> dims_arg(py::handle h, const char* op);
int64_t int_arg(py::handle h, const char* op, const char* what);
// A Python number as a Scalar (bool, int or float; NumPy scalars too).
std::optional<Scalar> scalar_arg(py::handle h);
// The other operand of a binary op: a Tensor, or a Python number as a wrapped 0-dim
// tensor on `device`. Empty for anything else (the operator returns NotImplemented).
std::optional<Tensor> operand(py::handle h, Device device);
// The same, beside tensor `like`: a number is stored directly in like's dtype when that
// cannot change the promoted result (saves a cast on every `x * 2.0`).
std::optional<Tensor> operand_like(py::handle h, const Tensor& like);
// The tensor h holds, or null for anything else (a number's input shape is () in the profiler).
Tensor tensor_or_null(py::handle h);
// Like operand, but raises a TypeError naming the op.
Tensor operand_or_throw(py::handle h, Device device, const char* op, const char* what);
// The `other` of add / sub (and add_ / sub_) times their keyword `alpha` (None: other itself).
Tensor times_alpha(const Tensor& other, py::handle alpha, const char* op);
// The Python type name of an object, for error messages ("list", "str", ...).
inline std::string type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }
// A NumPy dtype for a minitorch dtype and back.
py::dtype numpy_dtype(DType t);

}  // namespace minitorch::python
