// allocator.cu — a caching allocator for GPU memory.
//
// cudaMalloc/cudaFree are slow (they synchronise the device), and training allocates the
// same sizes every step. So freed blocks go to a free list keyed by their (rounded) size
// and the next request of that size reuses one. empty_cache() returns them to CUDA.
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common.cuh"

namespace minitorch::cuda {

namespace {

struct Cache {
    std::mutex mu;
    std::unordered_map<size_t, std::vector<void*>> free_blocks;  // rounded size -> blocks
    size_t allocated = 0;  // bytes in live tensors
    size_t peak = 0;
    size_t cached = 0;     // bytes in free_blocks
};

Cache& cache()
{
    static Cache* c = new Cache();  // never destroyed: tensors may outlive static destruction
    return *c;
}

size_t round_size(size_t n) { return n < 512 ? 512 : (n + 511) / 512 * 512; }

std::string mib(size_t n) { return detail::str(double(n) / (1024.0 * 1024.0), " MiB"); }

void release_cached_locked(Cache& c)
{
    for (auto& [size, blocks] : c.free_blocks)
        for (void* p : blocks) cudaFree(p);
    c.free_blocks.clear();
    c.cached = 0;
}

}  // namespace

void empty_cache()
{
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    release_cached_locked(c);
}

size_t memory_allocated() { return cache().allocated; }
size_t max_memory_allocated() { return cache().peak; }
size_t memory_cached() { return cache().cached; }

std::shared_ptr<Storage> allocate(size_t nbytes, Device device)
{
    auto s = std::make_shared<Storage>();
    s->device = device;
    if (nbytes == 0) return s;
    Cache& c = cache();
    const size_t size = round_size(nbytes);
    void* p = nullptr;
    {
        std::lock_guard<std::mutex> lock(c.mu);
        auto it = c.free_blocks.find(size);
        if (it != c.free_blocks.end() && !it->second.empty()) {
            p = it->second.back();
            it->second.pop_back();
            c.cached -= size;
        } else {
            size_t free_b = 0, total_b = 0;
            MT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
            cudaError_t err = size <= total_b ? cudaMalloc(&p, size) : cudaErrorMemoryAllocation;
            if (err != cudaSuccess) {  // give the cache back to CUDA and try once more
                cudaGetLastError();
                release_cached_locked(c);
                err = size <= total_b ? cudaMalloc(&p, size) : cudaErrorMemoryAllocation;
            }
            if (err != cudaSuccess) {
                cudaGetLastError();  // out of memory is not sticky: the process stays usable
                throw CudaOutOfMemoryError(detail::str("CUDA out of memory: tried to allocate ", mib(nbytes), " (GPU ",
                                                       device.index, " has ", mib(total_b), " in total, ", mib(free_b),
                                                       " free; minitorch holds ", mib(c.allocated),
                                                       " in tensors)"));
            }
        }
        c.allocated += size;
        c.peak = std::max(c.peak, c.allocated);
    }
    s->data = p;
    s->nbytes = nbytes;
    s->deleter = [size](void* q) {
        Cache& cc = cache();
        std::lock_guard<std::mutex> lock(cc.mu);
        cc.free_blocks[size].push_back(q);
        cc.allocated -= size;
        cc.cached += size;
    };
    return s;
}

}  // namespace minitorch::cuda
