// cuda_stub.cpp — minitorch._C's CUDA functions, with or without the CUDA backend.
#include "bindings.h"

#ifdef MINITORCH_WITH_CUDA
#include "../../cuda/api.h"
#endif

namespace minitorch::python {

void bind_cuda(py::module_& m)
{
    m.def("_is_pinned", [](const Tensor& t) { return t->storage->pinned; });
#ifdef MINITORCH_WITH_CUDA
    namespace c = minitorch::cuda;
    m.attr("_cuda_compiled") = true;
    m.def("_cuda_device_count", [] { return c::device_count(); });
    m.def("_cuda_is_emulated", [] { return c::is_emulated(); });
    m.def("_cuda_init", [] { return c::init(); });
    m.def("_cuda_synchronize", [] { if (c::init()) c::synchronize(); });
    m.def("_cuda_empty_cache", [] { if (c::init()) c::empty_cache(); });
    m.def("_cuda_memory_allocated", [] { return c::memory_allocated(); });
    m.def("_cuda_max_memory_allocated", [] { return c::max_memory_allocated(); });
    m.def("_cuda_memory_cached", [] { return c::memory_cached(); });
    m.def("_cuda_emulator_diagnostics", [] { return c::emulator_diagnostics(); });
    m.def("_cuda_host_waits", [] { return c::host_waits(); });
    m.def("_cuda_set_emulator_schedule", [](const std::string& spec) {
        if (!c::is_emulated())
            throw std::runtime_error("emulator_schedule: this minitorch runs kernels on a real GPU, which has no "
                                     "emulator schedule (it exists only in the emulated build)");
        if (!c::set_emulator_schedule(spec))
            throw ValueError("emulator_schedule: expected 'forward', 'reverse' or 'random:SEED' (SEED a "
                             "non-negative integer), got '" + spec + "'");
    });
    m.def("_cuda_get_emulator_schedule", [] { return c::emulator_schedule(); });
    // Streams, events, pinned memory (python/minitorch/cuda_streams.py wraps them).
    m.def("_cuda_stream_create", &c::stream_create);
    m.def("_cuda_stream_destroy", &c::stream_destroy);
    m.def("_cuda_stream_synchronize", [](uintptr_t s) {
        py::gil_scoped_release release;
        c::stream_synchronize(s);
    });
    m.def("_cuda_stream_query", &c::stream_query);
    m.def("_cuda_stream_wait_event", &c::stream_wait_event);
    m.def("_cuda_event_create", &c::event_create);
    m.def("_cuda_event_destroy", &c::event_destroy);
    m.def("_cuda_event_record", &c::event_record);
    m.def("_cuda_event_synchronize", [](uintptr_t e) {
        py::gil_scoped_release release;
        c::event_synchronize(e);
    });
    m.def("_cuda_event_query", &c::event_query);
    m.def("_cuda_event_elapsed_ms", &c::event_elapsed_ms);
    m.def("_pin_memory", &c::pin_memory);
    m.def("_cuda_copy_async", [](const Tensor& t, py::handle device) { return c::copy_to_device_async(t, device_arg(device)); });
    // RawKernel on a GPU: compile -> (ok, log, cubin bytes, lowered names, version),
    // load -> library, get_kernel -> (kernel, param sizes, max threads, static shared), launch.
    m.def("_nvrtc_compile", [](const std::string& src, const std::string& file, const std::vector<std::string>& names,
                               const std::vector<std::string>& options, const std::string& nvrtc_path) {
        c::NvrtcResult r;
        {
            py::gil_scoped_release release;
            r = c::nvrtc_compile(src, file, names, options, nvrtc_path);
        }
        return py::make_tuple(r.ok, r.log, py::bytes(r.cubin), r.lowered_names, r.nvrtc_version);
    });
    m.def("_cuda_compute_capability", &c::compute_capability);
    m.def("_raw_load", [](const py::bytes& cubin) { return c::raw_load(std::string(cubin)); });
    m.def("_raw_unload", &c::raw_unload);
    m.def("_raw_get_kernel", [](uintptr_t lib, const std::string& name) {
        const c::RawKernelInfo i = c::raw_get_kernel(lib, name);
        return py::make_tuple(i.kernel, i.param_sizes, i.max_threads_per_block, i.static_shared_bytes);
    });
    m.def("_raw_launch", [](uintptr_t kernel, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                            size_t shared, const std::vector<py::bytes>& args) {
        std::vector<std::string> bytes(args.begin(), args.end());
        c::raw_launch(kernel, grid.data(), block.data(), shared, bytes);
    });
    m.def("_set_cuda_matmul", [](const std::string& name) {
        if (name == "naive") c::set_matmul_impl(c::MatmulImpl::Naive);
        else if (name == "tiled") c::set_matmul_impl(c::MatmulImpl::Tiled);
        else if (name == "cublas") c::set_matmul_impl(c::MatmulImpl::Cublas);
        else throw ValueError("backends.cuda.matmul: expected 'naive', 'tiled' or 'cublas', got '" + name + "'");
    });
    m.def("_get_cuda_matmul", [] {
        auto i = c::matmul_impl();
        return i == c::MatmulImpl::Naive ? "naive" : i == c::MatmulImpl::Tiled ? "tiled" : "cublas";
    });
    // cuDNN (minitorch.backends.cudnn): loading it needs no GPU, only its library.
    m.def("_cudnn_set_library_path", &c::cudnn_set_library_path);
    m.def("_cudnn_version", [] { return c::cudnn_version(); });
    m.def("_cudnn_unavailable_reason", [] { return c::cudnn_unavailable_reason(); });
    m.def("_cudnn_output_shape", [](std::array<int64_t, 4> x_shape, std::array<int64_t, 4> w_shape,
                                    std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                                    std::array<int64_t, 2> dil) {
        Window2d w;
        w.N = x_shape[0], w.C = x_shape[1], w.H = x_shape[2], w.W = x_shape[3];
        w.KH = w_shape[2], w.KW = w_shape[3];
        w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1];
        w.dil_h = dil[0], w.dil_w = dil[1];
        // the output's size does not enter the descriptors this reads; 1 keeps them valid
        w.OH = w.OW = 1;
        return c::cudnn_forward_output_shape(w, w_shape[0]);
    });
#else
    m.attr("_cuda_compiled") = false;
    m.def("_cuda_device_count", [] { return 0; });
    m.def("_cuda_is_emulated", [] { return false; });
    m.def("_cuda_init", [] { return false; });
    m.def("_cuda_synchronize", [] {});
    m.def("_cuda_empty_cache", [] {});
    m.def("_cuda_memory_allocated", [] { return size_t(0); });
    m.def("_cuda_max_memory_allocated", [] { return size_t(0); });
    m.def("_cuda_memory_cached", [] { return size_t(0); });
    m.def("_cuda_emulator_diagnostics", [] { return 0L; });
    m.def("_cuda_host_waits", [] { return 0L; });
    m.def("_pin_memory", [](const Tensor&) -> Tensor {
        throw std::runtime_error("pin_memory: minitorch was built without CUDA, so there is no GPU to pin memory for");
    });
    m.def("_cuda_set_emulator_schedule", [](const std::string&) {
        throw std::runtime_error("emulator_schedule: minitorch was built without CUDA (and its emulator)");
    });
    m.def("_cuda_get_emulator_schedule", [] { return std::string(); });
    m.def("_set_cuda_matmul", [](const std::string&) {
        throw std::runtime_error("backends.cuda.matmul: minitorch was built without CUDA");
    });
    m.def("_get_cuda_matmul", [] { return "none"; });
    m.def("_cudnn_set_library_path", [](const std::string&) {});
    m.def("_cudnn_version", [] { return 0L; });
    m.def("_cudnn_unavailable_reason", [] { return std::string("minitorch was built without CUDA"); });
#endif
}

}  // namespace minitorch::python
