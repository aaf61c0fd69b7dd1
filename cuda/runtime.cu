// runtime.cu — is there a GPU, and plugging the CUDA backend into minitorch.
//
// On a machine with the toolkit but no driver (our CI), cudaGetDeviceCount answers
// cudaErrorInsufficientDriver or cudaErrorNoDevice: that means "no GPU", not a crash.
// The emulated build (kernels run on the CPU) always has one device.
#include <cstdio>

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

// The emulator describes a fictional device, "minitorch emulated GPU": an Ampere-class
// (compute capability 8.6) mid-range card of 28 SMs at 1.777 GHz with a 192-bit GDDR6 bus
// at 7.5 GHz (about 12.7 TFLOP/s FP32 and 360 GB/s; cuda_device.py derives these). Its
// memory is the host's RAM, as cudaMemGetInfo reports in the emulator. The numbers give
// the notebooks a plausible roofline; the emulator itself runs far slower.
CudaDeviceProperties device_properties()
{
    CudaDeviceProperties p;
#if MT_CUDA_EMULATED
    size_t free_b = 0;
    cudaMemGetInfo(&free_b, &p.total_memory);
    p.name = "minitorch emulated GPU";
    p.uuid = "00000000-0000-0000-0000-000000000000";
    p.major = 8, p.minor = 6;
    p.multi_processor_count = 28;
    p.clock_rate = 1777000;         // kHz
    p.memory_clock_rate = 7501000;  // kHz
    p.memory_bus_width = 192;       // bits
    p.l2_cache_size = size_t(3) << 20;
    p.warp_size = 32;
    p.max_threads_per_multi_processor = 1536;
    p.max_threads_per_block = 1024;
    p.regs_per_multiprocessor = 65536;
    p.shared_memory_per_block = 48 << 10;
    p.shared_memory_per_block_optin = 99 << 10;
    p.shared_memory_per_multiprocessor = 100 << 10;
#else
    int device = 0;
    MT_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    MT_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    p.name = prop.name;
    p.total_memory = prop.totalGlobalMem;
    char uuid[40];
    const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    std::snprintf(uuid, sizeof uuid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    p.uuid = uuid;
    p.is_integrated = prop.integrated;
    p.is_multi_gpu_board = prop.isMultiGpuBoard;
    p.pci_bus_id = prop.pciBusID, p.pci_device_id = prop.pciDeviceID, p.pci_domain_id = prop.pciDomainID;
    p.shared_memory_per_block = prop.sharedMemPerBlock;
    p.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
    p.shared_memory_per_multiprocessor = prop.sharedMemPerMultiprocessor;
    p.l2_cache_size = size_t(prop.l2CacheSize);
    // The clocks are attributes only (CUDA 13 dropped them from cudaDeviceProp).
    auto attr = [device](cudaDeviceAttr a) {
        int v = 0;
        MT_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
        return v;
    };
    p.major = attr(cudaDevAttrComputeCapabilityMajor);
    p.minor = attr(cudaDevAttrComputeCapabilityMinor);
    p.multi_processor_count = attr(cudaDevAttrMultiProcessorCount);
    p.clock_rate = attr(cudaDevAttrClockRate);
    p.memory_clock_rate = attr(cudaDevAttrMemoryClockRate);
    p.memory_bus_width = attr(cudaDevAttrGlobalMemoryBusWidth);
    p.warp_size = attr(cudaDevAttrWarpSize);
    p.max_threads_per_multi_processor = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    p.max_threads_per_block = attr(cudaDevAttrMaxThreadsPerBlock);
    p.regs_per_multiprocessor = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
#endif
    return p;
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

// matmul, matmul_bias: float16 / bfloat16 GEMMs run natively on cuBLAS (tensor cores), not upcast.
// sort (lines of up to 4096), attention, batch and group norm, the LSTM and GRU cells, the
// elementwise kernels, dropout, the class losses, the optimizer steps, im2col / col2im, pooling,
// upsampling and the indexing kernels that move elements read float16 / bfloat16 themselves (no
// staging copies through Widen).
MT_DEFINE_KERNEL_TABLE(filled.matmul = MT_COUNTED_KERNEL(matmul, matmul_native16);
                       filled.matmul_bias = MT_COUNTED_KERNEL(matmul_bias, matmul_bias_native);
                       filled.map = MT_COUNTED_KERNEL(map, map16);
                       filled.zip = MT_COUNTED_KERNEL(zip, zip16);
                       filled.where = MT_COUNTED_KERNEL(where, where16);
                       filled.ternary = MT_COUNTED_KERNEL(ternary, ternary16);
                       filled.reduce = MT_COUNTED_KERNEL(reduce, reduce16);
                       filled.reduce_stats = MT_COUNTED_KERNEL(reduce_stats, reduce_stats16);
                       filled.sort = MT_COUNTED_KERNEL(sort, sort16);
                       filled.softmax = MT_COUNTED_KERNEL(softmax, softmax16);
                       filled.softmax_backward = MT_COUNTED_KERNEL(softmax_backward, softmax_backward16);
                       filled.layer_norm = MT_COUNTED_KERNEL(layer_norm, layer_norm16);
                       filled.layer_norm_backward = MT_COUNTED_KERNEL(layer_norm_backward, layer_norm_backward16);
                       filled.batch_norm = MT_COUNTED_KERNEL(batch_norm, batch_norm);
                       filled.batch_norm_backward = MT_COUNTED_KERNEL(batch_norm_backward, batch_norm_backward);
                       filled.lstm_cell = MT_COUNTED_KERNEL(lstm_cell, lstm_cell);
                       filled.lstm_cell_backward = MT_COUNTED_KERNEL(lstm_cell_backward, lstm_cell_backward);
                       filled.gru_cell = MT_COUNTED_KERNEL(gru_cell, gru_cell);
                       filled.gru_cell_backward = MT_COUNTED_KERNEL(gru_cell_backward, gru_cell_backward);
                       filled.group_norm = MT_COUNTED_KERNEL(group_norm, group_norm);
                       filled.group_norm_backward = MT_COUNTED_KERNEL(group_norm_backward, group_norm_backward);
                       filled.attention = MT_COUNTED_KERNEL(attention, attention);
                       filled.attention_backward = MT_COUNTED_KERNEL(attention_backward, attention_backward);
                       filled.dropout = MT_COUNTED_KERNEL(dropout, dropout);
                       filled.dropout_backward = MT_COUNTED_KERNEL(dropout_backward, dropout_backward);
                       filled.class_loss = MT_COUNTED_KERNEL(class_loss, class_loss);
                       filled.class_loss_backward = MT_COUNTED_KERNEL(class_loss_backward, class_loss_backward);
                       filled.sgd_step = MT_COUNTED_KERNEL(sgd_step, sgd_step);
                       filled.adam_step = MT_COUNTED_KERNEL(adam_step, adam_step);
                       filled.sgd_multi_step = MT_COUNTED_KERNEL(sgd_multi_step, sgd_multi_step);
                       filled.adam_multi_step = MT_COUNTED_KERNEL(adam_multi_step, adam_multi_step);
                       filled.rmsprop_multi_step = MT_COUNTED_KERNEL(rmsprop_multi_step, rmsprop_multi_step);
                       filled.clip_grad_multi = MT_COUNTED_KERNEL(clip_grad_multi, clip_grad_multi);
                       filled.amp_unscale = MT_COUNTED_KERNEL(amp_unscale, amp_unscale);
                       filled.im2col = MT_COUNTED_KERNEL(im2col, im2col);
                       filled.col2im = MT_COUNTED_KERNEL(col2im, col2im);
                       filled.max_pool2d = MT_COUNTED_KERNEL(max_pool2d, max_pool2d);
                       filled.max_pool2d_backward = MT_COUNTED_KERNEL(max_pool2d_backward, max_pool2d_backward);
                       filled.avg_pool2d = MT_COUNTED_KERNEL(avg_pool2d, avg_pool2d);
                       filled.avg_pool2d_backward = MT_COUNTED_KERNEL(avg_pool2d_backward, avg_pool2d_backward);
                       filled.upsample2d = MT_COUNTED_KERNEL(upsample2d, upsample2d);
                       filled.upsample2d_backward = MT_COUNTED_KERNEL(upsample2d_backward, upsample2d_backward);
                       filled.gather_rows = MT_COUNTED_KERNEL(gather_rows, gather_rows);
                       filled.put_rows = MT_COUNTED_KERNEL(put_rows, put_rows);
                       filled.gather = MT_COUNTED_KERNEL(gather, gather);
                       filled.scatter = MT_COUNTED_KERNEL(scatter, scatter16);
                       filled.index_put = MT_COUNTED_KERNEL(index_put, index_put16);)

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
        register_rnn_library(DeviceType::CUDA, cudnn_rnn_library());
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
        b.cudnn_rnn_unavailable_reason = &cudnn_rnn_unavailable_reason;
        b.cudnn_forward_output_shape = &cudnn_forward_output_shape;
        b.cudnn_graph_plans = &cudnn_graph_plans;
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
        b.memory_accounting = &memory_accounting;
        b.mem_get_info = &mem_get_info;
        b.device_properties = &device_properties;
        return b;
    }();
    return table;
}

}  // namespace minitorch::cuda
