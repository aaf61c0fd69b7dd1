// bindings.h — the pieces of the _C module, one file each.
#pragma once
#include <cstring>

#include "convert.h"

namespace minitorch::python {

void bind_errors(py::module_& m);
void bind_types(py::module_& m);     // dtype, device
void bind_tensor(py::module_& m);    // the Tensor class and its methods
void bind_functions(py::module_& m); // creation, math, threads, seeds
void bind_numpy(py::module_& m);
void bind_cuda(py::module_& m);
void bind_autograd(py::module_& m);  // after bind_tensor

// The elementwise ops by their Python names (methods and minitorch.<name> functions).
struct NamedUnary { const char* name; UnaryOp op; };
struct NamedBinary { const char* name; BinaryOp op; };
inline constexpr NamedUnary kUnaryOps[] = {
    {"neg", UnaryOp::Neg},         {"exp", UnaryOp::Exp},   {"log", UnaryOp::Log},   {"sqrt", UnaryOp::Sqrt},
    {"abs", UnaryOp::Abs},         {"sigmoid", UnaryOp::Sigmoid}, {"relu", UnaryOp::Relu}, {"tanh", UnaryOp::Tanh},
    {"logical_not", UnaryOp::LogicalNot}, {"sign", UnaryOp::Sign}};
inline constexpr NamedBinary kBinaryOps[] = {
    {"add", BinaryOp::Add}, {"sub", BinaryOp::Sub}, {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div},
    {"pow", BinaryOp::Pow}, {"maximum", BinaryOp::Maximum}, {"minimum", BinaryOp::Minimum}, {"eq", BinaryOp::Eq},
    {"ne", BinaryOp::Ne},   {"lt", BinaryOp::Lt}, {"le", BinaryOp::Le}, {"gt", BinaryOp::Gt}, {"ge", BinaryOp::Ge}};

Tensor from_numpy(py::handle arr);
py::array to_numpy(const Tensor& t, bool force);
Tensor index(const Tensor& t, py::handle idx);
void index_put(const Tensor& t, py::handle idx, py::handle value);

}  // namespace minitorch::python
