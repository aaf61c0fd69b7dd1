// backend.h — one CUDA backend's host functions (api.h) gathered in a table, so that one
// build of minitorch can hold two backends and the bindings can call either:
//
//   * the GPU's: cuda/*.cu compiled by nvcc, in namespace minitorch::cuda (when nvcc was
//     found at build time);
//   * the emulator's: the SAME sources compiled by the host C++ compiler against cuda/emu,
//     where kernels run on the CPU. CMake compiles them with -Dcuda=cuda_emu, so all of
//     their names land in namespace minitorch::cuda_emu and never meet the GPU's. Every
//     build has it; it is off until switched on (minitorch.cuda.emulate()).
//
// The bindings (cpp/python/cuda_stub.cpp) pick the active table. Plain C++: no CUDA headers.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "minitorch/kernels.h"  // Window2d
#include "minitorch/memory_stats.h"
#include "minitorch/tensor.h"

namespace minitorch {

// Which GPU matmul runs (naive / tiled / cuBLAS), for the lectures' comparison.
enum class CudaMatmulImpl { Naive, Tiled, Cublas };

// A run-time compiled kernel on a real GPU (minitorch.cuda.RawKernel; cuda/raw_kernel.cu).
struct NvrtcResult {
    bool ok = false;                         // false: a compile error, described in `log`
    std::string log;                         // NVRTC's messages, warnings included
    std::string cubin;                       // the machine code for this GPU
    std::vector<std::string> lowered_names;  // each requested name as the cubin spells it
    int nvrtc_version = 0;                   // 1000 * major + 10 * minor
};
struct RawKernelInfo {
    uintptr_t kernel = 0;             // a cudaKernel_t
    std::vector<size_t> param_sizes;  // bytes of each parameter
    int max_threads_per_block = 0;    // this kernel's limit (its register use can lower it)
    size_t static_shared_bytes = 0;
};

// minitorch.cuda.get_device_properties: what cudaGetDeviceProperties / cudaDeviceGetAttribute
// report (clocks in kHz, bus width in bits, sizes in bytes); the emulator describes a
// fictional device (runtime.cu).
struct CudaDeviceProperties {
    std::string name, uuid;
    size_t total_memory = 0, l2_cache_size = 0, shared_memory_per_block = 0, shared_memory_per_block_optin = 0,
           shared_memory_per_multiprocessor = 0;
    int major = 0, minor = 0, multi_processor_count = 0, clock_rate = 0, memory_clock_rate = 0, memory_bus_width = 0,
        warp_size = 0, max_threads_per_multi_processor = 0, max_threads_per_block = 0, regs_per_multiprocessor = 0,
        is_integrated = 0, is_multi_gpu_board = 0, pci_bus_id = 0, pci_device_id = 0, pci_domain_id = 0;
};

// Each field is the api.h function of the same name (see there for what it does).
struct CudaBackend {
    int (*device_count)();
    bool (*is_emulated)();
    bool (*init)();
    bool (*initialized)();
    void (*synchronize)();
    void (*empty_cache)();
    size_t (*memory_allocated)();
    size_t (*max_memory_allocated)();
    size_t (*memory_cached)();
    long (*emulator_diagnostics)();
    bool (*set_emulator_schedule)(const std::string&);
    std::string (*emulator_schedule)();
    long (*host_waits)();
    std::array<uint64_t, 2> (*rng_state)();
    void (*set_rng_state)(uint64_t, uint64_t);
    void (*cudnn_set_library_path)(const std::string&);
    long (*cudnn_version)();
    std::string (*cudnn_unavailable_reason)();
    std::string (*cudnn_rnn_unavailable_reason)();
    std::array<int64_t, 4> (*cudnn_forward_output_shape)(const Window2d&, int64_t);
    std::vector<std::array<int64_t, 4>> (*cudnn_graph_plans)(const Window2d&, int64_t, DType, int, const std::string&);
    void (*set_matmul_impl)(CudaMatmulImpl);
    CudaMatmulImpl (*matmul_impl)();
    uintptr_t (*stream_create)(int);
    void (*stream_destroy)(uintptr_t);
    void (*stream_synchronize)(uintptr_t);
    bool (*stream_query)(uintptr_t);
    void (*stream_wait_event)(uintptr_t, uintptr_t);
    uintptr_t (*event_create)(bool, bool);
    void (*event_destroy)(uintptr_t);
    void (*event_record)(uintptr_t, uintptr_t);
    void (*event_synchronize)(uintptr_t);
    bool (*event_query)(uintptr_t);
    float (*event_elapsed_ms)(uintptr_t, uintptr_t);
    Tensor (*pin_memory)(const Tensor&);
    Tensor (*copy_to_device_async)(const Tensor&, Device);
    void (*release_finished_copies)();
    NvrtcResult (*nvrtc_compile)(const std::string&, const std::string&, const std::vector<std::string>&,
                                 const std::vector<std::string>&, const std::string&);
    uintptr_t (*raw_load)(const std::string&);
    int (*compute_capability)();
    void (*raw_unload)(uintptr_t);
    RawKernelInfo (*raw_get_kernel)(uintptr_t, const std::string&);
    void (*raw_launch)(uintptr_t, const unsigned*, const unsigned*, size_t, const std::vector<std::string>&);
    // memory and device API (minitorch.cuda.memory_stats, get_device_properties, ...)
    MemoryAccounting& (*memory_accounting)();
    std::array<size_t, 2> (*mem_get_info)();
    CudaDeviceProperties (*device_properties)();
};

namespace cuda_emu {
const CudaBackend& backend();  // every build (cuda/runtime.cu, compiled for the emulator)
}
namespace cuda {
const CudaBackend& backend();  // only where nvcc built the GPU backend (MINITORCH_WITH_CUDA)
}

}  // namespace minitorch
