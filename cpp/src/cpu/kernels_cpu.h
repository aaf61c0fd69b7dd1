// kernels_cpu.h — the CPU implementations behind cpu::kernel_table().
#pragma once
#include "minitorch/kernels.h"

namespace minitorch::cpu {

void copy(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, Scalar value);
void arange(const Tensor& dst, double start, double step);
void linspace(const Tensor& dst, double start, double end);
void map(UnaryOp op, const Tensor& out, const Tensor& in);
void zip(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void reduce(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in);
void matmul(const Tensor& out, const Tensor& a, const Tensor& b);
void gather_rows(const Tensor& out, const Tensor& in, const Tensor& index);
void scatter_add_rows(const Tensor& out, const Tensor& in, const Tensor& index);
void check_index(const Tensor& out, const Tensor& index, const IndexCheck& check);
void im2col(const Tensor& cols, const Tensor& input, const Window2d& w);
void col2im(const Tensor& grad_input, const Tensor& cols, const Window2d& w);
void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& input, const Window2d& w);
void max_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices, const Window2d& w);
void avg_pool2d(const Tensor& out, const Tensor& input, const Window2d& w);
void avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Window2d& w);
void random(RandomOp op, const Tensor& dst, double lo, double hi);

}  // namespace minitorch::cpu
