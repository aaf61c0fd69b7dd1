// kernel_work.h — what each kernel call computes and moves, for minitorch.profiler's FLOPs
// and bytes (profile(with_flops=True), the roofline). The formulas are in kernel_work.cpp,
// one function per kernel of kernels.h, named as the kernel and taking its arguments.
//
// Counted once, where every device passes: the KernelTable entries (kernels.h's Widen and
// Counted wrappers) and the convolution library's calls (ops/conv.cpp). So an op's FLOPs and
// bytes are the sum of the kernel calls it makes (linear: the GEMM and the bias add) and are
// the same on the CPU, in the emulator and on a GPU. Only while a profile runs.
#pragma once
#include "minitorch/kernels.h"
#include "minitorch/profiler.h"

namespace minitorch::work {

#define MT_DECLARE_WORK(name, params) profiler::Work name params;
MT_KERNELS(MT_DECLARE_WORK)
#undef MT_DECLARE_WORK

// The convolution library's three calls (ConvLibrary in kernels.h): each is one GEMM's work.
profiler::Work conv_forward(const Tensor& y, const Tensor& x, const Tensor& weight, const Window2d& w);
profiler::Work conv_backward_input(const Tensor& grad_x, const Tensor& grad_y, const Tensor& weight,
                                   const Window2d& w);
profiler::Work conv_backward_weight(const Tensor& grad_weight, const Tensor& grad_y, const Tensor& x,
                                    const Window2d& w);

// The bytes a tensor argument occupies: its distinct elements (a broadcast dim, stride 0,
// counts once) times the element size. 0 for a null tensor.
double tensor_bytes(const Tensor& t);

}  // namespace minitorch::work
