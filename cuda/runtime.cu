// runtime.cu — is there a GPU, and plugging the CUDA backend into minitorch.
//
// On a machine with the toolkit but no driver (our CI), cudaGetDeviceCount answers
// cudaErrorInsufficientDriver or cudaErrorNoDevice: that means "no GPU", not a crash.
// The emulated build (kernels run on the CPU) always has one device.
#include "common.cuh"

namespace minitorch::cuda {

std::shared_ptr<Storage> allocate(size_t nbytes, Device device);

int device_count()
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        cudaGetLastError();  // clear the error so later calls start clean
        return 0;
    }
    return n;
}

bool is_emulated() { return MT_CUDA_EMULATED != 0; }

long emulator_diagnostics()
{
#if MT_CUDA_EMULATED
    return ::emu::diagnostic_count();
#else
    return 0;
#endif
}

bool set_emulator_schedule(const std::string& spec)
{
#if MT_CUDA_EMULATED
    return ::emu::set_schedule(spec.c_str());
#else
    (void)spec;
    return false;
#endif
}

std::string emulator_schedule()
{
#if MT_CUDA_EMULATED
    return ::emu::schedule_name();
#else
    return "";
#endif
}

namespace {
long g_host_waits = 0;
}

void count_host_wait() { ++g_host_waits; }
long host_waits() { return g_host_waits; }

void synchronize()
{
    count_host_wait();
    MT_CUDA_CHECK(cudaDeviceSynchronize());
    release_finished_copies();
    report_index_errors();
}

// matmul: float16 / bfloat16 GEMMs run natively on cuBLAS (tensor cores), not upcast.
MT_DEFINE_KERNEL_TABLE(filled.matmul = MT_COUNTED_KERNEL(matmul, matmul_native16);)

namespace {
bool g_initialized = false;
}

// Registers the kernels and the allocator when a device is usable and the other backend
// (GPU or emulator, see backend.h) has not claimed "cuda"; returns whether this one serves it.
bool init()
{
    static const bool ok = [] {
        if (device_count() == 0) return false;
        if (!register_kernels(DeviceType::CUDA, &kernel_table())) return false;
        register_conv_library(DeviceType::CUDA, cudnn_conv_library());
        register_allocator(DeviceType::CUDA, &allocate);
        g_initialized = true;
        return true;
    }();
    return ok;
}

bool initialized() { return g_initialized; }

// This backend's functions as one table (backend.h), for the bindings.
const CudaBackend& backend()
{
    static const CudaBackend table = [] {
        CudaBackend b{};
        b.device_count = &device_count;
        b.is_emulated = &is_emulated;
        b.init = &init;
        b.initialized = &initialized;
        b.synchronize = &synchronize;
        b.empty_cache = &empty_cache;
        b.memory_allocated = &memory_allocated;
        b.max_memory_allocated = &max_memory_allocated;
        b.memory_cached = &memory_cached;
        b.emulator_diagnostics = &emulator_diagnostics;
        b.set_emulator_schedule = &set_emulator_schedule;
        b.emulator_schedule = &emulator_schedule;
        b.host_waits = &host_waits;
        b.rng_state = &rng_state;
        b.set_rng_state = &set_rng_state;
        b.cudnn_set_library_path = &cudnn_set_library_path;
        b.cudnn_version = &cudnn_version;
        b.cudnn_unavailable_reason = &cudnn_unavailable_reason;
        b.cudnn_forward_output_shape = &cudnn_forward_output_shape;
        b.set_matmul_impl = &set_matmul_impl;
        b.matmul_impl = &matmul_impl;
        b.stream_create = &stream_create;
        b.stream_destroy = &stream_destroy;
        b.stream_synchronize = &stream_synchronize;
        b.stream_query = &stream_query;
        b.stream_wait_event = &stream_wait_event;
        b.event_create = &event_create;
        b.event_destroy = &event_destroy;
        b.event_record = &event_record;
        b.event_synchronize = &event_synchronize;
        b.event_query = &event_query;
        b.event_elapsed_ms = &event_elapsed_ms;
        b.pin_memory = &pin_memory;
        b.copy_to_device_async = &copy_to_device_async;
        b.release_finished_copies = &release_finished_copies;
        b.nvrtc_compile = &nvrtc_compile;
        b.raw_load = &raw_load;
        b.compute_capability = &compute_capability;
        b.raw_unload = &raw_unload;
        b.raw_get_kernel = &raw_get_kernel;
        b.raw_launch = &raw_launch;
        return b;
    }();
    return table;
}

}  // namespace minitorch::cuda
