// copy.cu — CUDA kernels for fill / strided copy / arange / linspace (cpu/copy.cpp mirrors
// it), and make_strided, the byte-offset plan every strided kernel uses.
// Thread mapping: one thread per output element, grid-stride loop; each thread turns its
// flat index into byte offsets with Strided<N>::offsets.
#include "minitorch/strided_loop.h"
#include "common.cuh"

namespace minitorch::cuda {

template <int N>
Strided<N> make_strided(const std::array<const TensorImpl*, N>& ts)
{
    StridedPlan<N> plan(ts);  // the same dim coalescing as the CPU loops
    Strided<N> s{};
    s.ndim = plan.ndim;
    s.numel = plan.numel;
    for (int d = 0; d < plan.ndim; ++d) {
        s.shape[d] = plan.shape[d];
        for (int k = 0; k < N; ++k) s.stride[k][d] = plan.strides[k][d];
    }
    for (int k = 0; k < N; ++k) s.base[k] = plan.base[k];
    s.small = plan.numel < (int64_t(1) << 31);
    if (s.small)
        for (int d = 0; d < plan.ndim; ++d) s.size[d] = FastDivisor(uint32_t(plan.shape[d]));
    return s;
}
template Strided<1> make_strided<1>(const std::array<const TensorImpl*, 1>&);
template Strided<2> make_strided<2>(const std::array<const TensorImpl*, 2>&);
template Strided<3> make_strided<3>(const std::array<const TensorImpl*, 3>&);
template Strided<4> make_strided<4>(const std::array<const TensorImpl*, 4>&);

namespace {

template <class D, class S>
__global__ void copy_kernel(Strided<2> s)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[2];
        s.offsets(i, off);
        *reinterpret_cast<D*>(s.base[0] + off[0]) = convert<D>(*reinterpret_cast<const S*>(s.base[1] + off[1]));
    }
}

template <class T>
__global__ void fill_kernel(Strided<1> s, T value)
{
    MT_GRID_STRIDE(i, s.numel) {
        int64_t off[1];
        s.offsets(i, off);
        *reinterpret_cast<T*>(s.base[0] + off[0]) = value;
    }
}

// arange and linspace: out[i] = value(i) for a contiguous 1-D out; the value rule is a
// small functor, so both share one kernel and one launcher.
struct ArangeValue {
    double start, step;
    __host__ __device__ double operator()(int64_t i) const { return start + double(i) * step; }
};
struct LinspaceValue {
    double start, end;
    int64_t n;
    __host__ __device__ double operator()(int64_t i) const { return linspace_value(start, end, n, i); }
};

template <class T, class F>
__global__ void sequence_kernel(T* out, int64_t n, F value)
{
    MT_GRID_STRIDE(i, n)
        out[i] = static_cast<T>(value(i));
}

template <class F>
void launch_sequence(const Tensor& dst, F value)
{
    const int64_t n = dst->numel();
    dispatch(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(n), kThreads, 0, 0, sequence_kernel<T, F>)(dst->data_as<T>(), n, value);
    });
    MT_CUDA_CHECK_LAUNCH("sequence_kernel");
}

}  // namespace

void copy(const Tensor& dst, const Tensor& src)
{
    // Between host and device: plain bytes (to_device makes both contiguous, same dtype).
    if (dst->device().is_cpu() != src->device().is_cpu()) {
        MT_CHECK_RUNTIME(dst->is_contiguous() && src->is_contiguous() && dst->dtype == src->dtype,
                         "copy: host<->device copies need contiguous tensors of one dtype");
        const size_t bytes = size_t(dst->numel()) * itemsize(dst->dtype);
        MT_CUDA_CHECK(cudaMemcpy(dst->data(), src->data(), bytes,
                                 dst->device().is_cpu() ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice));
        if (dst->device().is_cpu()) {
            count_host_wait();
            report_index_errors();  // the host has waited for the GPU anyway
        }
        return;
    }
    Strided<2> s = make_strided<2>({dst.get(), src.get()});
    // Any storage type to any other: 16-bit values convert through float (half.h).
    dispatch_storage(dst->dtype, [&](auto dt) {
        using D = typename decltype(dt)::type;
        dispatch_storage(src->dtype, [&](auto st) {
            using S = typename decltype(st)::type;
            MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, copy_kernel<D, S>)(s);
        });
    });
    MT_CUDA_CHECK_LAUNCH("copy_kernel");
}

void fill(const Tensor& dst, Scalar value)
{
    Strided<1> s = make_strided<1>({dst.get()});
    dispatch_storage(dst->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        MT_LAUNCH(blocks_for(s.numel), kThreads, 0, 0, fill_kernel<T>)(s, value.to<T>());
    });
    MT_CUDA_CHECK_LAUNCH("fill_kernel");
}

void arange(const Tensor& dst, double start, double step)
{
    launch_sequence(dst, ArangeValue{start, step});
}

void linspace(const Tensor& dst, double start, double end)
{
    launch_sequence(dst, LinspaceValue{start, end, dst->numel()});
}

}  // namespace minitorch::cuda
