// cuda_stub.cpp — minitorch._C's CUDA functions.
//
// A build holds up to two CUDA backends (cuda/backend.h): the GPU's, where nvcc built it,
// and the emulator's, in every build. Calls go to the active one: the emulator once it is
// switched on (minitorch.cuda.emulate(), or MINITORCH_EMULATE_CUDA=1 when minitorch is
// imported), the GPU's otherwise. With neither, the functions answer as a machine without
// CUDA does: no devices, nothing allocated, and an error naming what is missing.
#include <atomic>

#include "bindings.h"
#include "../../cuda/backend.h"

namespace minitorch::python {

namespace {

std::atomic<bool> g_emulating{false};

const CudaBackend* gpu_backend()
{
#ifdef MINITORCH_WITH_CUDA
    return &minitorch::cuda::backend();
#else
    return nullptr;
#endif
}

const CudaBackend* emulator_backend()
{
#ifdef MINITORCH_WITH_EMULATOR
    return &minitorch::cuda_emu::backend();
#else
    return nullptr;
#endif
}

const CudaBackend* active() { return g_emulating ? emulator_backend() : gpu_backend(); }

// Where backends.cuda.matmul.kernel is kept: the active backend, else the emulator's (a
// build without nvcc), so the switch reads and sets the same on every machine.
const CudaBackend* matmul_backend() { return active() ? active() : emulator_backend(); }

const char* kHowToEmulate = "to run CUDA kernels on the CPU instead, switch on the emulator: "
                            "minitorch.cuda.emulate(), or MINITORCH_EMULATE_CUDA=1 before Python starts";

// Why "cuda" cannot be used here: the text of every "CUDA is not available" error.
std::string why_unavailable()
{
    std::string why = "CUDA is not available: ";
    if (gpu_backend())
        why += "no NVIDIA GPU with a working driver was found (minitorch.cuda.device_count() is 0)";
    else
        why += "this minitorch was built without the GPU backend (nvcc was not found when it was installed)";
    if (emulator_backend()) return why + "; " + kHowToEmulate;
    return why + ", and without the CUDA emulator (MINITORCH_EMULATOR=OFF)";
}

// The active backend, for functions that need one; `op` names the caller in the error.
const CudaBackend& require(const char* op)
{
    const CudaBackend* b = active();
    if (!b || !b->init()) throw std::runtime_error(std::string(op) + ": " + why_unavailable());
    return *b;
}

// Switches the emulator on or off, before "cuda" is first used: a process has one
// implementation of "cuda" (tensors there live in GPU memory or in host memory).
void set_emulating(bool on)
{
    if (on == g_emulating) return;
    if (on) {
        const CudaBackend* emu = emulator_backend();
        if (!emu)
            throw std::runtime_error("emulate: this minitorch was built without the CUDA emulator (MINITORCH_EMULATOR=OFF)");
        const CudaBackend* gpu = gpu_backend();
        if (gpu && gpu->initialized())
            throw std::runtime_error("emulate: this process already runs 'cuda' on the GPU; to use the emulator instead, "
                                     "set MINITORCH_EMULATE_CUDA=1 before Python starts");
        g_emulating = true;
        emu->init();  // claims "cuda" now, before anything can start the GPU backend
        return;
    }
    if (emulator_backend()->initialized())
        throw std::runtime_error("emulate(False): the emulator already serves 'cuda' in this process (its tensors live "
                                 "in host memory); it stays on until the process ends");
    g_emulating = false;
}

}  // namespace

const CudaBackend* active_cuda_backend() { return active(); }

void bind_cuda(py::module_& m)
{
    set_unavailable_reason(DeviceType::CUDA, &why_unavailable);
    m.def("_is_pinned", [](const Tensor& t) { return t->storage->pinned; });
    // _cuda_compiled: the GPU backend is built in (nvcc); _emulator_compiled: the emulator is.
    m.attr("_cuda_compiled") = gpu_backend() != nullptr;
    m.attr("_emulator_compiled") = emulator_backend() != nullptr;
    m.def("_cuda_set_emulated", &set_emulating);
    m.def("_cuda_unavailable_reason", [] { return active() && active()->init() ? std::string() : why_unavailable(); });
    m.def("_cuda_device_count", [] { return active() ? active()->device_count() : 0; });
    m.def("_cuda_is_emulated", [] { return bool(g_emulating); });
    m.def("_cuda_init", [] { return active() && active()->init(); });
    m.def("_cuda_synchronize", [] { if (active() && active()->init()) active()->synchronize(); });
    m.def("_cuda_empty_cache", [] { if (active() && active()->init()) active()->empty_cache(); });
    m.def("_cuda_memory_allocated", [] { return active() ? active()->memory_allocated() : size_t(0); });
    m.def("_cuda_max_memory_allocated", [] { return active() ? active()->max_memory_allocated() : size_t(0); });
    m.def("_cuda_memory_cached", [] { return active() ? active()->memory_cached() : size_t(0); });
    m.def("_cuda_emulator_diagnostics", [] {
        const CudaBackend* emu = emulator_backend();
        return emu ? emu->emulator_diagnostics() : 0L;
    });
    m.def("_cuda_host_waits", [] { return active() ? active()->host_waits() : 0L; });
    // (seed, offset) of the "cuda" generator; None where there is no CUDA backend.
    m.def("_cuda_rng_state", []() -> py::object {
        if (!(active() && active()->init())) return py::none();
        auto s = active()->rng_state();
        return py::make_tuple(s[0], s[1]);
    });
    m.def("_cuda_set_rng_state", [](uint64_t seed, uint64_t offset) {
        if (active() && active()->init()) active()->set_rng_state(seed, offset);
    });
    m.def("_cuda_set_emulator_schedule", [](const std::string& spec) {
        const CudaBackend* emu = emulator_backend();
        if (!emu) throw std::runtime_error("emulator_schedule: this minitorch was built without the CUDA emulator");
        if (!emu->set_emulator_schedule(spec))
            throw ValueError("emulator_schedule: expected 'forward', 'reverse', 'random:SEED' (SEED a "
                             "non-negative integer), 'warps' or 'warps-reverse', got '" + spec + "'");
    });
    m.def("_cuda_get_emulator_schedule", [] {
        const CudaBackend* emu = emulator_backend();
        return emu ? emu->emulator_schedule() : std::string();
    });
    // Streams, events, pinned memory (python/minitorch/cuda_streams.py wraps them).
    m.def("_cuda_stream_create", [](int priority) { return require("Stream").stream_create(priority); });
    m.def("_cuda_stream_destroy", [](uintptr_t s) { require("Stream").stream_destroy(s); });
    m.def("_cuda_stream_synchronize", [](uintptr_t s) {
        const CudaBackend& b = require("Stream.synchronize");
        py::gil_scoped_release release;
        b.stream_synchronize(s);
    });
    m.def("_cuda_stream_query", [](uintptr_t s) { return require("Stream.query").stream_query(s); });
    m.def("_cuda_stream_wait_event", [](uintptr_t s, uintptr_t e) { require("Stream.wait_event").stream_wait_event(s, e); });
    m.def("_cuda_event_create", [](bool timing, bool blocking) { return require("Event").event_create(timing, blocking); });
    m.def("_cuda_event_destroy", [](uintptr_t e) { require("Event").event_destroy(e); });
    m.def("_cuda_event_record", [](uintptr_t e, uintptr_t s) { require("Event.record").event_record(e, s); });
    m.def("_cuda_event_synchronize", [](uintptr_t e) {
        const CudaBackend& b = require("Event.synchronize");
        py::gil_scoped_release release;
        b.event_synchronize(e);
    });
    m.def("_cuda_event_query", [](uintptr_t e) { return require("Event.query").event_query(e); });
    m.def("_cuda_event_elapsed_ms", [](uintptr_t a, uintptr_t b) { return require("Event.elapsed_time").event_elapsed_ms(a, b); });
    m.def("_pin_memory", [](const Tensor& t) {
        const CudaBackend* b = active();
        if (!b || !b->init())
            throw std::runtime_error("pin_memory: there is no GPU to pin memory for (" + why_unavailable() + ")");
        return b->pin_memory(t);
    });
    m.def("_cuda_copy_async", [](const Tensor& t, py::handle device) {
        return require("to(non_blocking=True)").copy_to_device_async(t, device_arg(device));
    });
    // RawKernel on a GPU: compile -> (ok, log, cubin bytes, lowered names, version),
    // load -> library, get_kernel -> (kernel, param sizes, max threads, static shared), launch.
    m.def("_nvrtc_compile", [](const std::string& src, const std::string& file, const std::vector<std::string>& names,
                               const std::vector<std::string>& options, const std::string& nvrtc_path) {
        const CudaBackend* b = gpu_backend();
        if (!b) throw std::runtime_error("RawKernel: NVRTC needs the GPU backend, which this minitorch was built without");
        NvrtcResult r;
        {
            py::gil_scoped_release release;
            r = b->nvrtc_compile(src, file, names, options, nvrtc_path);
        }
        return py::make_tuple(r.ok, r.log, py::bytes(r.cubin), r.lowered_names, r.nvrtc_version);
    });
    m.def("_cuda_compute_capability", [] { return gpu_backend() && !g_emulating ? gpu_backend()->compute_capability() : 0; });
    m.def("_raw_load", [](const py::bytes& cubin) { return require("RawKernel").raw_load(std::string(cubin)); });
    m.def("_raw_unload", [](uintptr_t lib) { require("RawKernel").raw_unload(lib); });
    m.def("_raw_get_kernel", [](uintptr_t lib, const std::string& name) {
        const RawKernelInfo i = require("RawKernel").raw_get_kernel(lib, name);
        return py::make_tuple(i.kernel, i.param_sizes, i.max_threads_per_block, i.static_shared_bytes);
    });
    m.def("_raw_launch", [](uintptr_t kernel, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                            size_t shared, const std::vector<py::bytes>& args) {
        std::vector<std::string> bytes(args.begin(), args.end());
        require("RawKernel").raw_launch(kernel, grid.data(), block.data(), shared, bytes);
    });
    m.def("_set_cuda_matmul", [](const std::string& name) {
        CudaMatmulImpl impl;
        if (name == "naive") impl = CudaMatmulImpl::Naive;
        else if (name == "tiled") impl = CudaMatmulImpl::Tiled;
        else if (name == "cublas") impl = CudaMatmulImpl::Cublas;
        else throw ValueError("backends.cuda.matmul: expected 'naive', 'tiled' or 'cublas', got '" + name + "'");
        if (!matmul_backend()) throw std::runtime_error("backends.cuda.matmul: " + why_unavailable());
        matmul_backend()->set_matmul_impl(impl);
    });
    m.def("_get_cuda_matmul", [] {
        const CudaBackend* b = matmul_backend();
        if (!b) return "none";
        auto i = b->matmul_impl();
        return i == CudaMatmulImpl::Naive ? "naive" : i == CudaMatmulImpl::Tiled ? "tiled" : "cublas";
    });
    // cuDNN (minitorch.backends.cudnn): loading it needs no GPU, only its library.
    m.def("_cudnn_set_library_path", [](const std::string& path) { if (gpu_backend()) gpu_backend()->cudnn_set_library_path(path); });
    m.def("_cudnn_version", [] { return active() ? active()->cudnn_version() : 0L; });
    m.def("_cudnn_unavailable_reason", [] {
        return active() ? active()->cudnn_unavailable_reason() : std::string("minitorch was built without the GPU backend");
    });
    // Why nn.LSTM / GRU / RNN do not run on cuDNN's RNN API ("" while they can).
    m.def("_cudnn_rnn_unavailable_reason", [] {
        return active() ? active()->cudnn_rnn_unavailable_reason()
                        : std::string("minitorch was built without the GPU backend");
    });
    m.def("_cudnn_output_shape", [](std::array<int64_t, 4> x_shape, std::array<int64_t, 4> w_shape,
                                    std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                                    std::array<int64_t, 2> dil) {
        const CudaBackend* b = active();
        if (!b) throw std::runtime_error("backends.cudnn: minitorch was built without the GPU backend");
        Window2d w;
        w.N = x_shape[0], w.C = x_shape[1], w.H = x_shape[2], w.W = x_shape[3];
        w.KH = w_shape[2], w.KW = w_shape[3];
        w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1];
        w.dil_h = dil[0], w.dil_w = dil[1];
        // the output's size does not enter the descriptors this reads; 1 keeps them valid
        w.OH = w.OW = 1;
        return b->cudnn_forward_output_shape(w, w_shape[0]);
    });
    // The engine configurations cuDNN's heuristics rank for one pass (0 forward, 1 backward data,
    // 2 backward filter) of a contiguous conv2d on the device `device_json` describes (no GPU
    // needed: cuDNN >= 9.8 builds plans from a description). Each: (engine's global index, the
    // plan's workspace bytes or -1 when it makes none, NumericalNotes as bits, allowed by the switches).
    m.def("_cudnn_graph_plans", [](std::array<int64_t, 4> x_shape, std::array<int64_t, 4> w_shape,
                                   std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                                   std::array<int64_t, 2> dil, int64_t groups, DType dtype, int pass,
                                   const std::string& device_json) {
        const CudaBackend* b = active();
        if (!b) throw std::runtime_error("backends.cudnn: minitorch was built without the GPU backend");
        MT_CHECK(groups >= 1 && x_shape[1] == w_shape[1] * groups && w_shape[0] % groups == 0,
                 "_cudnn_graph_plans: x ", x_shape[1], " channels, w ", w_shape[0], "x", w_shape[1], ", groups ",
                 groups, " do not fit together");
        Window2d w;
        w.N = x_shape[0], w.C = x_shape[1], w.H = x_shape[2], w.W = x_shape[3];
        w.KH = w_shape[2], w.KW = w_shape[3];
        w.stride_h = stride[0], w.stride_w = stride[1], w.pad_h = pad[0], w.pad_w = pad[1];
        w.dil_h = dil[0], w.dil_w = dil[1], w.groups = groups;
        w.OH = window_out_size(w.H, w.KH, w.stride_h, w.pad_h, w.dil_h);
        w.OW = window_out_size(w.W, w.KW, w.stride_w, w.pad_w, w.dil_w);
        MT_CHECK(w.OH > 0 && w.OW > 0, "_cudnn_graph_plans: the window does not fit the input");
        return b->cudnn_graph_plans(w, w_shape[0], dtype, pass, device_json);
    });
}

}  // namespace minitorch::python
