// kernels.h — the device interface: the few kernel families every op is built from.
//
// A device (CPU, CUDA) fills one KernelTable. The ops in cpp/src/ops check their inputs,
// allocate outputs, prepare views (broadcast with expand, cast with copy), then call
// these. Kernels trust their callers: shapes and dtypes are already checked.
#pragma once
#include <cstdint>
#include <string>

#include "minitorch/scalar.h"
#include "minitorch/tensor.h"

namespace minitorch {

enum class UnaryOp { Neg, Exp, Log, Sqrt, Abs, Sigmoid, Relu, Tanh, LogicalNot, Sign };
enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge };
enum class ReduceOp { Sum, Max, Min, ArgMax, ArgMin };
enum class RandomOp { Uniform, Normal, Integer };

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

// Geometry of a 2-D sliding window (convolution or pooling) over (N, C, H, W) input:
// output pixel (oh, ow) reads input rows oh*stride_h - pad_h + kh*dil_h (likewise w).
struct Window2d {
    int64_t N = 0, C = 0, H = 0, W = 0;  // input
    int64_t KH = 1, KW = 1;              // window
    int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
    int64_t OH = 0, OW = 0;              // output
};

// What an index check guards, for its error message. Valid values are [0, size), or
// [-size, size) with Python-style negatives when wrap_negative; for class targets,
// `ignore` (ignore_index) is allowed too.
struct IndexCheck {
    const char* op;  // a string literal: "index_select", "cross_entropy", ...
    int64_t size;
    bool wrap_negative = false;
    bool is_target = false;  // "target 7 is out of bounds for 5 classes (at index 3)"
    int64_t ignore = INT64_MIN;
};
// The IndexError message for `value` at `position` (shared by every device).
std::string index_error_message(const IndexCheck& check, int64_t value, int64_t position);

struct KernelTable {
    // dst[i] = cast(src[i]); same shape, any strides and dtypes (src may be expanded).
    void (*copy)(const Tensor& dst, const Tensor& src);
    // dst[i] = value; any strides.
    void (*fill)(const Tensor& dst, Scalar value);
    // dst[i] = start + i * step; dst contiguous 1-D.
    void (*arange)(const Tensor& dst, double start, double step);
    // dst (n,) contiguous, n >= 2: n evenly spaced values from start to end. The first
    // half counts up from start, the second half down from end (as PyTorch), so both
    // ends are exact whatever the rounding (a GPU's fused multiply-add included).
    void (*linspace)(const Tensor& dst, double start, double end);
    // out[i] = op(in[i]); same shape and dtype, any strides.
    void (*map)(UnaryOp op, const Tensor& out, const Tensor& in);
    // out[i] = op(a[i], b[i]); a and b already expanded to out's shape, same dtype;
    // out has that dtype too, or bool for comparisons.
    void (*zip)(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
    // out[i] = cond[i] ? a[i] : b[i]; all expanded to out's shape, a/b/out one dtype.
    void (*where)(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
    // in: contiguous (outer, inner). Reduces each row into values[row] (and, for the
    // arg ops and max/min, the position in the row into indices[row], int64).
    // values/indices: contiguous (outer,); indices may be null for Sum.
    void (*reduce)(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in);
    // out (batch..., M, N) contiguous = a (batch..., M, K) @ b (batch..., K, N);
    // a and b expanded to the same batch shape, any strides, one dtype; out is not
    // empty and K > 0 (the op handles those).
    void (*matmul)(const Tensor& out, const Tensor& a, const Tensor& b);
    // Gather / scatter-add of rows: in and out are contiguous (rows, row_size) views.
    //   gather_rows:      out[i, :] = in[index[i], :]
    //   scatter_add_rows: out[index[i], :] += in[i, :]
    // index: contiguous int64 (n,), already checked to be in range.
    void (*gather_rows)(const Tensor& out, const Tensor& in, const Tensor& index);
    void (*scatter_add_rows)(const Tensor& out, const Tensor& in, const Tensor& index);
    // out[i] = index[i], negatives wrapped (+size) where allowed; both contiguous int64
    // (n,). A value out of range is an IndexError: the CPU raises it at once. A GPU
    // records the first one in device memory, writes 0 in its place (so later kernels
    // stay inside their tensors) and raises it at the next synchronization (.item(),
    // .cpu(), cuda.synchronize()): reading it back at once would stall every step.
    void (*check_index)(const Tensor& out, const Tensor& index, const IndexCheck& check);
    // im2col: cols (C*KH*KW, N*OH*OW) contiguous: row (c, kh, kw) holds, for every output
    // pixel, the input value that tap sees (zero where the window hangs over the padding).
    // col2im: the reverse, adding cols back into grad_input (N, C, H, W), which the
    // caller zeroed. input/grad_input contiguous.
    void (*im2col)(const Tensor& cols, const Tensor& input, const Window2d& w);
    void (*col2im)(const Tensor& grad_input, const Tensor& cols, const Window2d& w);
    // Pooling over each (n, c) plane. max: out and indices (N, C, OH, OW), indices
    // are flat positions ih*W + iw in the plane (as PyTorch); padding never wins.
    // avg: divides by the window's size within the padded input (padding counts as
    // zeros). All contiguous.
    void (*max_pool2d)(const Tensor& out, const Tensor& indices, const Tensor& input, const Window2d& w);
    void (*max_pool2d_backward)(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices,
                                const Window2d& w);
    void (*avg_pool2d)(const Tensor& out, const Tensor& input, const Window2d& w);
    void (*avg_pool2d_backward)(const Tensor& grad_input, const Tensor& grad_out, const Window2d& w);
    // Random fill from the global generator: Uniform [lo, hi), Normal(mean=lo, std=hi),
    // Integer [lo, hi). dst contiguous.
    void (*random)(RandomOp op, const Tensor& dst, double lo, double hi);
};

const KernelTable& kernels(Device device);
void register_kernels(DeviceType type, const KernelTable* table);

namespace cpu {
const KernelTable& kernel_table();

// Which CPU matmul runs (for the lectures' comparison; BLAS is the default).
enum class MatmulAlgo { Naive, Blocked, Blas };
void set_matmul_algo(MatmulAlgo algo);
MatmulAlgo matmul_algo();
}

}  // namespace minitorch
