// memory_bindings.cpp — the allocators' counters (memory_stats.h) and the device's
// properties, for minitorch.cpu / minitorch.cuda (cuda_memory.py, cuda_device.py) and
// minitorch.utils.memory. Every function takes the device type, "cpu" or "cuda".
#include "bindings.h"
#include "minitorch/host_allocator.h"
#include "../../cuda/backend.h"

namespace minitorch::python {

namespace {

// The counters of device type `dev`; null for "cuda" where no CUDA backend serves it.
MemoryAccounting* accounting(const std::string& dev)
{
    if (dev == "cpu") return &cpu::memory_accounting();
    const CudaBackend* b = active_cuda_backend();
    return b && b->init() ? &b->memory_accounting() : nullptr;
}

MemoryAccounting& require(const std::string& dev, const char* op)
{
    MemoryAccounting* a = accounting(dev);
    if (!a) throw std::runtime_error(std::string(op) + ": " + unavailable_reason(DeviceType::CUDA));
    return *a;
}

size_t total_memory(const std::string& dev)
{
    if (dev == "cpu") return cpu::physical_memory_bytes();
    return active_cuda_backend()->mem_get_info()[1];
}

}  // namespace

void bind_memory(py::module_& m)
{
    m.def("_memory_stats", [](const std::string& dev) {
        py::dict d;
        MemoryAccounting* a = accounting(dev);
        if (!a) return d;
        std::lock_guard<std::mutex> lock(a->mu);
        for (auto& [k, v] : a->stats()) d[py::str(k)] = v;
        return d;
    });
    m.def("_memory_reset_peak", [](const std::string& dev) {
        if (MemoryAccounting* a = accounting(dev)) {
            std::lock_guard<std::mutex> lock(a->mu);
            a->reset_peaks();
        }
    });
    m.def("_memory_reset_accumulated", [](const std::string& dev) {
        if (MemoryAccounting* a = accounting(dev)) {
            std::lock_guard<std::mutex> lock(a->mu);
            a->reset_accumulated();
        }
    });
    // fraction x total memory caps the reserved bytes; 1.0 lifts the cap (as PyTorch,
    // where the default fraction is 1 and nothing is checked).
    m.def("_memory_set_fraction", [](const std::string& dev, double fraction) {
        MemoryAccounting& a = require(dev, "set_per_process_memory_fraction");
        const size_t total = total_memory(dev);
        std::lock_guard<std::mutex> lock(a.mu);
        a.fraction = fraction;
        a.limit = fraction >= 1.0 ? 0 : std::max<size_t>(1, size_t(fraction * double(total)));
    });
    m.def("_memory_get_fraction", [](const std::string& dev) {
        MemoryAccounting& a = require(dev, "get_per_process_memory_fraction");
        std::lock_guard<std::mutex> lock(a.mu);
        return a.fraction;
    });
    m.def("_memory_trace_start", [](const std::string& dev) {
        MemoryAccounting& a = require(dev, "memory trace");
        std::lock_guard<std::mutex> lock(a.mu);
        a.trace.clear();
        a.tracing = true;
    });
    // The events since _memory_trace_start: (is_alloc, address, block size), in order.
    m.def("_memory_trace_stop", [](const std::string& dev) {
        MemoryAccounting& a = require(dev, "memory trace");
        std::vector<MemoryEvent> events;
        {
            std::lock_guard<std::mutex> lock(a.mu);
            a.tracing = false;
            events.swap(a.trace);
        }
        py::list out;
        for (const MemoryEvent& e : events) out.append(py::make_tuple(e.alloc, e.address, e.size));
        return out;
    });
    m.def("_memory_trace_length", [](const std::string& dev) {
        MemoryAccounting& a = require(dev, "memory trace");
        std::lock_guard<std::mutex> lock(a.mu);
        return a.trace.size();
    });
    // The size of the allocator's block at `address` (a storage's first byte); 0 when the
    // memory is not the allocator's (from_numpy, DLPack) or not alive.
    m.def("_memory_block_size", [](const std::string& dev, uintptr_t address) -> size_t {
        MemoryAccounting* a = accounting(dev);
        if (!a || !address) return 0;
        std::lock_guard<std::mutex> lock(a->mu);
        auto it = a->live.find(address);
        return it == a->live.end() ? 0 : it->second;
    });
    m.def("_cuda_mem_get_info", [] {
        const CudaBackend* b = active_cuda_backend();
        if (!b || !b->init())
            throw std::runtime_error("mem_get_info: " + unavailable_reason(DeviceType::CUDA));
        auto r = b->mem_get_info();
        return py::make_tuple(r[0], r[1]);
    });
    m.def("_cuda_device_properties", [] {
        const CudaBackend* b = active_cuda_backend();
        if (!b || !b->init())
            throw std::runtime_error("get_device_properties: " + unavailable_reason(DeviceType::CUDA));
        const CudaDeviceProperties p = b->device_properties();
        py::dict d;
        d["name"] = p.name;
        d["uuid"] = p.uuid;
        d["major"] = p.major;
        d["minor"] = p.minor;
        d["total_memory"] = p.total_memory;
        d["multi_processor_count"] = p.multi_processor_count;
        d["clock_rate"] = p.clock_rate;
        d["memory_clock_rate"] = p.memory_clock_rate;
        d["memory_bus_width"] = p.memory_bus_width;
        d["L2_cache_size"] = p.l2_cache_size;
        d["warp_size"] = p.warp_size;
        d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
        d["max_threads_per_block"] = p.max_threads_per_block;
        d["regs_per_multiprocessor"] = p.regs_per_multiprocessor;
        d["shared_memory_per_block"] = p.shared_memory_per_block;
        d["shared_memory_per_block_optin"] = p.shared_memory_per_block_optin;
        d["shared_memory_per_multiprocessor"] = p.shared_memory_per_multiprocessor;
        d["is_integrated"] = p.is_integrated;
        d["is_multi_gpu_board"] = p.is_multi_gpu_board;
        d["pci_bus_id"] = p.pci_bus_id;
        d["pci_device_id"] = p.pci_device_id;
        d["pci_domain_id"] = p.pci_domain_id;
        return d;
    });
}

}  // namespace minitorch::python
