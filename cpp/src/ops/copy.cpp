// copy.cpp — contiguous, clone, dtype/device casts and in-place copy/fill.
#include "minitorch/autograd.h"
#include "minitorch/ops.h"

namespace minitorch {

namespace {

// clone / contiguous / dtype and device casts: the gradient passes through, cast back
// to the input's dtype and device.
// derivative of clone / contiguous / to(dtype, device), input input: g cast back to the input dtype and device
struct CopyBackward : autograd::Node {
    std::string op;
    std::string name() const override { return op; }
    std::vector<Tensor> apply(std::vector<Tensor>& g) override
    {
        const auto& m = input_meta[0];
        return {to_device(to_dtype(g[0], m.dtype), m.device)};
    }
};

// Runs the copy `forward` and records a CopyBackward named `name` when t needs a gradient.
template <class F>
Tensor tracked(const Tensor& t, const char* name, F&& forward)
{
    return autograd::record_op<CopyBackward>({&t}, forward, [&](CopyBackward& n, const Tensor&) { n.op = name; });
}

// A fresh tensor of src's shape, `dtype` on `device`, filled from src by the copy kernel of
// `kernel_device`.
Tensor copied(const Tensor& src, DType dtype, Device device, Device kernel_device)
{
    Tensor out = empty(src->shape, dtype, device);
    if (out->numel()) kernels(kernel_device).copy(out, src);
    return out;
}

}  // namespace

Tensor clone(const Tensor& t)
{
    MT_PROFILE_OP("clone", t);
    return tracked(t, "CloneBackward0", [&] { return copied(t, t->dtype, t->device(), t->device()); });
}

Tensor contiguous(const Tensor& t) { return t->is_contiguous() ? t : clone(t); }

Tensor to_dtype(const Tensor& t, DType dtype)
{
    MT_PROFILE_OP("to", t);
    if (t->dtype == dtype) return t;
    auto cast = [&] { return copied(t, dtype, t->device(), t->device()); };
    // A cast to an integer or bool dtype is not differentiable: its result has no grad_fn.
    return is_floating(dtype) ? tracked(t, "ToCopyBackward0", cast) : cast();
}

// A copy between the CPU and a device runs on the device (its copy kernel knows how to
// move bytes to and from host memory); between two other devices it goes through the CPU.
Tensor to_device(const Tensor& t, Device device)
{
    MT_PROFILE_OP("to", t);
    if (t->device() == device) return t;
    if (!t->device().is_cpu() && !device.is_cpu()) return to_device(to_device(t, Device{}), device);
    return tracked(t, "ToCopyBackward0", [&] {
        Tensor src = contiguous(t);  // under record_op's no-grad guard: not part of the graph
        return copied(src, src->dtype, device, device.is_cpu() ? src->device() : device);
    });
}

void check_no_internal_overlap(const Tensor& t, const char* op)
{
    for (int64_t d = 0; d < t->dim(); ++d)
        MT_CHECK_RUNTIME(t->strides[d] != 0 || t->shape[d] <= 1, op, ": unsupported operation: more than one element "
                         "of the written-to tensor refers to a single memory location (an expanded tensor of shape ",
                         t->shape, " and strides ", t->strides, "); call .clone() before writing to it");
}

namespace {
// copy_ / fill_ inside a graph (dst is part of one, or src requires grad): dst's history
// becomes "src's values where dst was" — where(true, src, dst), whose gradient goes to
// src (summed back over its broadcast) and is zero for dst's old values.
void record_overwrite(const Tensor& dst, const Tensor& src, const char* op)
{
    autograd::check_rebase(dst, op);
    check_no_internal_overlap(dst, op);
    Tensor s = src->device() == dst->device() ? src : to_device(src, dst->device());
    Tensor everywhere = full(dst->shape, Scalar(true), DType::Bool, dst->device());
    autograd::rebase_history(dst, where(everywhere, to_dtype(s, dst->dtype), dst), op);
}
}  // namespace

void copy_(const Tensor& dst, const Tensor& src)
{
    MT_PROFILE_OP("copy_", dst, src);
    Shape b = broadcast_shapes(dst->shape, src->shape, "copy_");
    MT_CHECK(b == dst->shape, "copy_: source of shape ", src->shape, " cannot be broadcast to destination shape ",
             dst->shape);
    if (autograd::inplace_in_graph(dst, {&src})) {
        record_overwrite(dst, src, "copy_");
        return;
    }
    check_no_internal_overlap(dst, "copy_");
    if (dst->numel() == 0) return;
    Tensor s = src;
    // Like PyTorch, copy_ may move data between devices (x_cuda.copy_(x_cpu)).
    if (s->device() != dst->device()) {
        autograd::NoGradGuard guard;
        s = to_device(s, dst->device());
    }
    // Reading and writing overlapping memory in one pass could read already-written
    // values (t[1:] = t[:-1]); a temporary copy makes it safe.
    if (s->storage == dst->storage) s = clone(s);
    kernels(dst->device()).copy(dst, expand(s, dst->shape));
    autograd::bump_version(dst);
}

void fill_(const Tensor& dst, Scalar value)
{
    MT_PROFILE_OP("fill_", dst);
    if (autograd::inplace_in_graph(dst, {})) {
        record_overwrite(dst, scalar_tensor(value, dst->device(), dst->dtype), "fill_");
        return;
    }
    check_no_internal_overlap(dst, "fill_");
    if (dst->numel()) kernels(dst->device()).fill(dst, value);
    autograd::bump_version(dst);
}

}  // namespace minitorch
