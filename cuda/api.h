// api.h — the CUDA backend's host functions (plain C++: no CUDA headers). Declared in
// namespace minitorch::cuda; the emulator's copy of the backend has them in
// minitorch::cuda_emu (see backend.h), and the bindings reach both through
// backend(), which gathers these functions in a table.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend.h"
#include "minitorch/kernels.h"  // Window2d
#include "minitorch/tensor.h"

namespace minitorch::cuda {

int device_count();   // 0 without a usable driver or GPU; 1 in the emulator
bool is_emulated();   // kernels run on the CPU through cuda/emu
// Registers kernels + allocator for device "cuda" once; false when there is no device, or
// when the other backend (GPU or emulator) already owns "cuda" in this process.
bool init();
bool initialized();   // init() has run and succeeded
void synchronize();
void empty_cache();
size_t memory_allocated();      // bytes held by live CUDA tensors
size_t max_memory_allocated();  // the peak of that
size_t memory_cached();         // bytes kept by the caching allocator for reuse
MemoryAccounting& memory_accounting();  // allocator.cu's counters (memory_stats.h; lock its mu)
std::array<size_t, 2> mem_get_info();   // (free, total) bytes of device memory, as cudaMemGetInfo
CudaDeviceProperties device_properties();  // of device 0 (runtime.cu)
long emulator_diagnostics();    // misuse reports of the emulator so far (always 0 on a GPU)
// The emulator's thread order ("forward", "reverse", "random:SEED", "warps", "warps-reverse"); set returns false
// for any other text, and on a GPU build, where there is no emulator ("" there).
bool set_emulator_schedule(const std::string& spec);
std::string emulator_schedule();
long host_waits();              // times the host waited for the GPU (copies to the CPU, synchronize)
// The generator of device "cuda" (random.cu): its seed and how far fills have used its
// stream; setting both replays the same numbers (minitorch.cuda.get_rng_state / set_rng_state).
std::array<uint64_t, 2> rng_state();
void set_rng_state(uint64_t seed, uint64_t offset);

// cuDNN (cudnn.cu), loaded with dlopen at its first use. library_path: the
// nvidia-cudnn-cu13 wheel's libcudnn.so.9, tried first ("" for none).
void cudnn_set_library_path(const std::string& path);
long cudnn_version();                     // e.g. 91900 for 9.19.0; 0 when it cannot be loaded
std::string cudnn_unavailable_reason();   // "" while cuDNN can be used
std::string cudnn_rnn_unavailable_reason();  // the same for its RNN API (cudnn_rnn.cu)
// cuDNN's output shape (N, O, OH, OW) for a convolution of that geometry (no GPU needed).
std::array<int64_t, 4> cudnn_forward_output_shape(const Window2d& w, int64_t out_channels);
// cuDNN graph API plans for a device described in JSON (cudnn_conv.cu): (engine, workspace, notes, allowed)
std::vector<std::array<int64_t, 4>> cudnn_graph_plans(const Window2d& w, int64_t out_channels, DType dtype, int pass,
                                                      const std::string& device_json);

using MatmulImpl = CudaMatmulImpl;  // which GPU matmul runs (naive / tiled / cuBLAS)
void set_matmul_impl(MatmulImpl impl);
MatmulImpl matmul_impl();

// Streams and events (minitorch.cuda.Stream / Event; cuda/streams.cu). Handles are the
// cudaStream_t / cudaEvent_t values; stream 0 is the default stream minitorch runs on.
uintptr_t stream_create(int priority);
void stream_destroy(uintptr_t stream);
void stream_synchronize(uintptr_t stream);
bool stream_query(uintptr_t stream);  // true when all its work has finished
void stream_wait_event(uintptr_t stream, uintptr_t event);
uintptr_t event_create(bool enable_timing, bool blocking);
void event_destroy(uintptr_t event);
void event_record(uintptr_t event, uintptr_t stream);
void event_synchronize(uintptr_t event);
bool event_query(uintptr_t event);
float event_elapsed_ms(uintptr_t start, uintptr_t end);

// Page-locked host memory, and copies from it to the GPU that return at once.
Tensor pin_memory(const Tensor& t);
Tensor copy_to_device_async(const Tensor& src, Device device);
void release_finished_copies();  // frees the pinned sources of copies that have finished

// Run-time compiled kernels on a real GPU (minitorch.cuda.RawKernel; cuda/raw_kernel.cu).
NvrtcResult nvrtc_compile(const std::string& source, const std::string& filename, const std::vector<std::string>& names,
                          const std::vector<std::string>& options, const std::string& nvrtc_path);
uintptr_t raw_load(const std::string& cubin);  // a cudaLibrary_t
int compute_capability();                      // 10 * major + minor of the current GPU; 0 without one
void raw_unload(uintptr_t library);
RawKernelInfo raw_get_kernel(uintptr_t library, const std::string& lowered_name);
// Launches on minitorch's stream; args[i] holds the bytes of parameter i.
void raw_launch(uintptr_t kernel, const unsigned* grid, const unsigned* block, size_t shared_bytes,
                const std::vector<std::string>& args);

}  // namespace minitorch::cuda
