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
MT_DEFINE_KERNEL_TABLE(filled.matmul = &matmul_native16;)

// Registers the kernels and the allocator when a device is usable; returns whether it is.
bool init()
{
    static const bool ok = [] {
        if (device_count() == 0) return false;
        register_kernels(DeviceType::CUDA, &kernel_table());
        register_conv_library(DeviceType::CUDA, cudnn_conv_library());
        register_allocator(DeviceType::CUDA, &allocate);
        return true;
    }();
    return ok;
}

}  // namespace minitorch::cuda
