// storage.h — a flat block of bytes on one device, shared by every view of it.
#pragma once
#include <cstddef>
#include <atomic>
#include <functional>
#include <memory>

#include "minitorch/device.h"

namespace minitorch {

struct Storage {
    void* data = nullptr;
    size_t nbytes = 0;
    Device device;
    std::function<void(void*)> deleter;  // frees `data`; empty for zero-byte storage
    // Bumped by every in-place write through any view (copy_, fill_, +=, ...), so autograd
    // can tell that a tensor it saved for backward was changed afterwards.
    uint64_t version = 0;
    // How many views (Tensor.view, slicing, transpose...) of this memory are alive. An
    // in-place op inside a graph rewrites one tensor's history; a view of the same memory
    // would keep a stale one, so autograd refuses that case (autograd::check_rebase).
    std::atomic<int> views{0};
    // Page-locked host memory (Tensor.pin_memory): the GPU's copy engine reads it directly,
    // so a copy to the GPU from it can run while the host goes on.
    bool pinned = false;

    Storage() = default;
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    ~Storage() { if (deleter) deleter(data); }

    // New uninitialised memory. Raises OutOfMemoryError (Python MemoryError) when the
    // request cannot be met — before anything is touched.
    static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
    // Memory owned by someone else (a NumPy array): `release` runs when the last view dies.
    static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device,
                                         std::function<void(void*)> release);
};

// Registered by the CUDA backend; without it, allocating on "cuda" raises.
using DeviceAllocator = std::shared_ptr<Storage> (*)(size_t nbytes, Device device);
void register_allocator(DeviceType type, DeviceAllocator alloc);

}  // namespace minitorch
