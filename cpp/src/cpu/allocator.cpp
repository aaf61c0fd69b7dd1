// allocator.cpp — a caching allocator for CPU storage.
//
// glibc serves requests above its mmap threshold (128 KiB to start with) with fresh pages
// from the operating system and unmaps them again on free. A training step allocates the
// same large buffers every step (a batch of inputs, a weight gradient), so every step paid
// for mapping, zero-filling and faulting in those pages anew. Here freed blocks of 64 KiB
// and more are kept on a free list per size class and handed to the next request of that
// class; smaller blocks go straight to malloc, whose own bins already reuse them.
// empty_cache() gives the kept blocks back. (cuda/allocator.cu is the GPU's version.)
//
// Accounting (memory_stats.h): every block is counted at its size class, as "allocated"
// while a storage holds it and "reserved" while the allocator holds it (in use or cached).
// set_per_process_memory_fraction(f) caps reserved bytes at f x the machine's memory; a
// request past it first gives the cache back, then raises OutOfMemoryError.
#include "minitorch/host_allocator.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "minitorch/error.h"
#include "minitorch/memory_stats.h"

namespace minitorch::cpu {

namespace {

constexpr size_t kAlign = 64;             // suits AVX-512 loads
constexpr size_t kMinCached = 64 << 10;   // below this, malloc's bins do the job

// Four classes per power of two (1, 1.25, 1.5, 1.75 x 2^k): a block is at most 25% larger
// than the request, and nearby sizes (the last, smaller batch of an epoch) share a class.
size_t size_class(size_t n)
{
    if (n < kMinCached) return (n + kAlign - 1) / kAlign * kAlign;
    const int k = 63 - __builtin_clzll(n);  // 2^k <= n < 2^(k+1)
    const size_t step = size_t(1) << (k - 2);
    return (n + step - 1) / step * step;
}

bool caching_wanted()
{
#if defined(__SANITIZE_ADDRESS__)
    return false;  // AddressSanitizer must see every free to catch a use after it
#else
    const char* env = std::getenv("MINITORCH_CPU_CACHING");
    return !(env && env[0] == '0');
#endif
}

struct Cache {
    MemoryAccounting acc;  // its mutex guards the cache too
    std::unordered_map<size_t, std::vector<void*>> free_blocks;  // size class -> blocks
    size_t cached = 0;
    // Never keep more than this: an eighth of the machine's memory, at least 256 MiB.
    size_t limit = 0;
    bool enabled = caching_wanted();

    Cache()
    {
        const size_t ram = physical_memory_bytes();
        const size_t physical = ram != SIZE_MAX ? ram : (size_t(8) << 30);
        limit = std::max(physical / 8, size_t(256) << 20);
    }
};

Cache& cache()
{
    static Cache* c = new Cache();  // never destroyed: storage may be freed during exit
    return *c;
}

void release_cached_locked(Cache& c)
{
    for (auto& [size, blocks] : c.free_blocks)
        for (void* p : blocks) {
            std::free(p);
            c.acc.on_segment_free(size);
        }
    c.free_blocks.clear();
    c.cached = 0;
}

}  // namespace

size_t physical_memory_bytes()
{
    static const size_t bytes = [] {  // once: sysconf is a system call
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        return (pages > 0 && page > 0) ? size_t(pages) * size_t(page) : SIZE_MAX;
    }();
    return bytes;
}

void* host_alloc(size_t nbytes, size_t* block)
{
    Cache& c = cache();
    const size_t size = size_class(nbytes);
    *block = size;
    std::lock_guard<std::mutex> lock(c.acc.mu);
    void* p = nullptr;
    if (size >= kMinCached) {
        auto it = c.free_blocks.find(size);
        if (it != c.free_blocks.end() && !it->second.empty()) {
            p = it->second.back();
            it->second.pop_back();
            c.cached -= size;
        }
    }
    if (!p) {
        if (!c.acc.over_limit(size)) p = std::aligned_alloc(kAlign, size);
        if (!p && c.cached) {  // give the cache back and try once more
            release_cached_locked(c);
            ++c.acc.num_alloc_retries;
            if (!c.acc.over_limit(size)) p = std::aligned_alloc(kAlign, size);
        }
        if (!p && c.acc.over_limit(size)) {
            ++c.acc.num_ooms;
            const size_t total = physical_memory_bytes();
            throw OutOfMemoryError(detail::str(
                "CPU out of memory. Tried to allocate ", format_size(size), ". The CPU has a total capacity of ",
                format_size(total), ", of which ", format_size(c.acc.limit),
                " is allowed to this process (minitorch.cpu.set_per_process_memory_fraction(", c.acc.fraction,
                ")). Of the allocated memory ", format_size(c.acc.allocated()), " is allocated by minitorch, and ",
                format_size(c.acc.reserved() - c.acc.allocated()), " is reserved by minitorch but unallocated."));
        }
        if (!p) {
            ++c.acc.num_ooms;
            return nullptr;
        }
        c.acc.on_segment_alloc(size);
    }
    c.acc.on_alloc(p, size, nbytes);
    return p;
}

void host_free(void* p, size_t block, size_t nbytes)
{
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.acc.mu);
    c.acc.on_free(p, block, nbytes);
    if (c.enabled && block >= kMinCached && c.cached + block <= c.limit) {
        c.free_blocks[block].push_back(p);
        c.cached += block;
    } else {
        std::free(p);
        c.acc.on_segment_free(block);
    }
}

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
bool caching_enabled() { return cache().enabled; }

void reset_peak_memory_stats()
{
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.acc.mu);
    c.acc.reset_peaks();
}

}  // namespace minitorch::cpu
