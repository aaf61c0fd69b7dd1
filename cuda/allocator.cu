// allocator.cu — a caching allocator for GPU memory.
//
// cudaMalloc/cudaFree are slow (they synchronise the device), and training allocates the
// same sizes every step. So freed blocks go to a free list keyed by their (rounded) size
// and the next request of that size reuses one. empty_cache() returns them to CUDA.
//
// Accounting (cpp/include/minitorch/memory_stats.h, PyTorch's memory_stats names): a
// request is rounded up to a multiple of 512 bytes (at least 512), as PyTorch's allocator
// does, and memory_allocated() counts those rounded blocks. set_per_process_memory_fraction
// caps the reserved bytes (blocks in use plus cached ones) at fraction x total memory: a
// request past it gives the cache back to CUDA, and then raises OutOfMemoryError.
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.cuh"
#include "minitorch/memory_stats.h"

namespace minitorch::cuda {

namespace {

struct Cache {
    MemoryAccounting acc;  // its mutex guards the free lists too
    std::unordered_map<size_t, std::vector<void*>> free_blocks;  // rounded size -> blocks
    size_t cached = 0;     // bytes in free_blocks
};

Cache& cache()
{
    static Cache* c = new Cache();  // never destroyed: tensors may outlive static destruction
    return *c;
}

size_t round_size(size_t n) { return n < 512 ? 512 : (n + 511) / 512 * 512; }

void release_cached_locked(Cache& c)
{
    for (auto& [size, blocks] : c.free_blocks)
        for (void* p : blocks) {
            cudaFree(p);
            c.acc.on_segment_free(size);
        }
    c.free_blocks.clear();
    c.cached = 0;
}

}  // namespace

void empty_cache()
{
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.acc.mu);
    release_cached_locked(c);
}

MemoryAccounting& memory_accounting() { return cache().acc; }
size_t memory_allocated() { return cache().acc.allocated(); }
size_t max_memory_allocated() { return size_t(cache().acc.allocated_bytes.all.peak); }
size_t memory_cached() { return cache().cached; }

std::array<size_t, 2> mem_get_info()
{
    size_t free_b = 0, total_b = 0;
    MT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return {free_b, total_b};
}

std::shared_ptr<Storage> allocate(size_t nbytes, Device device)
{
    auto s = std::make_shared<Storage>();
    s->device = device;
    if (nbytes == 0) return s;
    Cache& c = cache();
    MemoryAccounting& a = c.acc;
    const size_t size = round_size(nbytes);
    void* p = nullptr;
    {
        std::lock_guard<std::mutex> lock(a.mu);
        auto it = c.free_blocks.find(size);
        if (it != c.free_blocks.end() && !it->second.empty()) {
            p = it->second.back();
            it->second.pop_back();
            c.cached -= size;
        } else {
            size_t free_b = 0, total_b = 0;
            MT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
            auto try_malloc = [&] {
                return size <= total_b && !a.over_limit(size) ? cudaMalloc(&p, size) : cudaErrorMemoryAllocation;
            };
            cudaError_t err = try_malloc();
            if (err != cudaSuccess && c.cached) {  // give the cache back to CUDA and try once more
                cudaGetLastError();
                release_cached_locked(c);
                ++a.num_alloc_retries;
                err = try_malloc();
            }
            if (err != cudaSuccess) {
                cudaGetLastError();  // out of memory is not sticky: the process stays usable
                ++a.num_ooms;
                cudaMemGetInfo(&free_b, &total_b);
                throw CudaOutOfMemoryError(detail::str(
                    "CUDA out of memory. Tried to allocate ", format_size(size), ". GPU ", device.index,
                    " has a total capacity of ", format_size(total_b), " of which ", format_size(free_b), " is free. ",
                    a.limit ? format_size(a.limit) + " allowed (set_per_process_memory_fraction(" +
                                  detail::str(a.fraction) + ")); "
                            : std::string(),
                    "Of the allocated memory ", format_size(a.allocated()), " is allocated by minitorch, and ",
                    format_size(a.reserved() - a.allocated()), " is reserved by minitorch but unallocated."));
            }
            a.on_segment_alloc(size);
        }
        a.on_alloc(p, size, nbytes);
    }
    s->data = p;
    s->nbytes = nbytes;
    s->deleter = [size, nbytes](void* q) {
        Cache& cc = cache();
        std::lock_guard<std::mutex> lock(cc.acc.mu);
        cc.acc.on_free(q, size, nbytes);
        cc.free_blocks[size].push_back(q);
        cc.cached += size;
    };
    return s;
}

}  // namespace minitorch::cuda
