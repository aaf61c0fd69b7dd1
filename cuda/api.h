// api.h — the CUDA backend's host functions that the rest of minitorch may call
// (plain C++: no CUDA headers, so the bindings include it in every build).
#pragma once
#include <cstddef>
#include <string>

namespace minitorch::cuda {

int device_count();   // 0 without a usable driver or GPU; 1 in the emulated build
bool is_emulated();   // kernels run on the CPU through cuda/emu
bool init();          // registers kernels + allocator once; false when no device
void synchronize();
void empty_cache();
size_t memory_allocated();      // bytes held by live CUDA tensors
size_t max_memory_allocated();  // the peak of that
size_t memory_cached();         // bytes kept by the caching allocator for reuse
long emulator_diagnostics();    // misuse reports of the emulator so far (always 0 on a GPU)
// The emulator's thread order ("forward", "reverse", "random:SEED"); set returns false
// for any other text, and on a GPU build, where there is no emulator ("" there).
bool set_emulator_schedule(const std::string& spec);
std::string emulator_schedule();
long host_waits();              // times the host waited for the GPU (copies to the CPU, synchronize)

// Which GPU matmul runs (naive / tiled / cuBLAS), for the lectures' comparison.
enum class MatmulImpl { Naive, Tiled, Cublas };
void set_matmul_impl(MatmulImpl impl);
MatmulImpl matmul_impl();

}  // namespace minitorch::cuda
