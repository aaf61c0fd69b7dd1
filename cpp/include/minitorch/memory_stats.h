// memory_stats.h — what the two caching allocators (cpu/allocator.cpp, cuda/allocator.cu)
// count, under the names of PyTorch's torch.cuda.memory_stats().
//
// Words, as PyTorch uses them:
//   * a "segment" is memory the allocator got from the system (malloc / cudaMalloc) and
//     still holds, whether a tensor uses it or it waits in the cache: "reserved" bytes;
//   * an "allocation" is a block handed to a tensor's storage: "allocated" (= "active")
//     bytes, counted at the block's size (the request rounded up, see each allocator);
//   * "requested" bytes are the storages' own sizes, before that rounding.
// Each statistic has a current value, its peak since reset_peaks(), and the totals ever
// added ("allocated") and removed ("freed"), for all blocks and for PyTorch's two pools
// (blocks of at most 1 MiB: "small_pool", larger ones: "large_pool").
//
// The allocator also keeps the address and size of every live block (so Python can ask
// how many bytes a tensor's storage really holds), and, while tracing, the list of every
// allocation and free: utils.memory replays it to find which blocks were alive at the peak.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace minitorch {

struct MemStat {
    int64_t current = 0, peak = 0, allocated = 0, freed = 0;
    void increase(int64_t n)
    {
        current += n;
        allocated += n;
        peak = std::max(peak, current);
    }
    void decrease(int64_t n)
    {
        current -= n;
        freed += n;
    }
};

// One statistic for all blocks, the small pool and the large pool.
struct PoolStat {
    MemStat all, small, large;
    static constexpr size_t kSmallBlock = size_t(1) << 20;  // PyTorch's small pool: up to 1 MiB
    void increase(size_t block, int64_t n)
    {
        all.increase(n);
        (block <= kSmallBlock ? small : large).increase(n);
    }
    void decrease(size_t block, int64_t n)
    {
        all.decrease(n);
        (block <= kSmallBlock ? small : large).decrease(n);
    }
    void reset_peak() { all.peak = all.current, small.peak = small.current, large.peak = large.current; }
    void reset_accumulated()
    {
        for (MemStat* s : {&all, &small, &large}) s->allocated = s->freed = 0;
    }
};

struct MemoryEvent {
    bool alloc;        // true: a block was handed to a storage; false: it was given back
    uintptr_t address;
    size_t size;       // the block's size
};

// Every field is read and written with `mu` held (the allocator's own lock).
struct MemoryAccounting {
    std::mutex mu;
    PoolStat allocation, segment, allocated_bytes, reserved_bytes, requested_bytes;
    int64_t num_alloc_retries = 0, num_ooms = 0, num_device_alloc = 0, num_device_free = 0;
    // set_per_process_memory_fraction: reserved bytes may not exceed `limit` (0: no limit).
    double fraction = 1.0;
    size_t limit = 0;
    std::unordered_map<uintptr_t, size_t> live;  // address -> size of every block in use
    bool tracing = false;
    std::vector<MemoryEvent> trace;

    void on_alloc(const void* p, size_t block, size_t requested)
    {
        allocation.increase(block, 1);
        allocated_bytes.increase(block, int64_t(block));
        requested_bytes.increase(block, int64_t(requested));
        live[uintptr_t(p)] = block;
        if (tracing) trace.push_back({true, uintptr_t(p), block});
    }
    void on_free(const void* p, size_t block, size_t requested)
    {
        allocation.decrease(block, 1);
        allocated_bytes.decrease(block, int64_t(block));
        requested_bytes.decrease(block, int64_t(requested));
        live.erase(uintptr_t(p));
        if (tracing) trace.push_back({false, uintptr_t(p), block});
    }
    void on_segment_alloc(size_t block)
    {
        segment.increase(block, 1);
        reserved_bytes.increase(block, int64_t(block));
        ++num_device_alloc;
    }
    void on_segment_free(size_t block)
    {
        segment.decrease(block, 1);
        reserved_bytes.decrease(block, int64_t(block));
        ++num_device_free;
    }
    bool over_limit(size_t more) const { return limit && size_t(reserved_bytes.all.current) + more > limit; }
    size_t allocated() const { return size_t(allocated_bytes.all.current); }
    size_t reserved() const { return size_t(reserved_bytes.all.current); }

    void reset_peaks()
    {
        for (PoolStat* s : {&allocation, &segment, &allocated_bytes, &reserved_bytes, &requested_bytes}) s->reset_peak();
    }
    void reset_accumulated()
    {
        for (PoolStat* s : {&allocation, &segment, &allocated_bytes, &reserved_bytes, &requested_bytes})
            s->reset_accumulated();
        num_alloc_retries = num_ooms = num_device_alloc = num_device_free = 0;
    }

    // memory_stats(): (key, value) pairs under PyTorch's names. "active" equals "allocated"
    // here (no block waits for another stream), and no block is ever split, so the
    // "inactive_split" and "oversize" statistics stay 0.
    std::vector<std::pair<std::string, int64_t>> stats() const
    {
        std::vector<std::pair<std::string, int64_t>> out;
        auto put = [&](const std::string& name, const PoolStat& s) {
            const std::pair<const char*, const MemStat*> pools[] = {{"all", &s.all}, {"large_pool", &s.large},
                                                                    {"small_pool", &s.small}};
            for (auto [pool, m] : pools) {
                const std::string k = name + "." + pool + ".";
                out.push_back({k + "allocated", m->allocated});
                out.push_back({k + "current", m->current});
                out.push_back({k + "freed", m->freed});
                out.push_back({k + "peak", m->peak});
            }
        };
        const PoolStat zero;
        put("active", allocation);
        put("active_bytes", allocated_bytes);
        put("allocated_bytes", allocated_bytes);
        put("allocation", allocation);
        put("inactive_split", zero);
        put("inactive_split_bytes", zero);
        out.push_back({"max_split_size", -1});
        out.push_back({"num_alloc_retries", num_alloc_retries});
        out.push_back({"num_device_alloc", num_device_alloc});
        out.push_back({"num_device_free", num_device_free});
        out.push_back({"num_ooms", num_ooms});
        out.push_back({"num_sync_all_streams", 0});
        for (const char* k : {"oversize_allocations", "oversize_segments"})
            for (const char* f : {"allocated", "current", "freed", "peak"}) out.push_back({std::string(k) + "." + f, 0});
        put("requested_bytes", requested_bytes);
        put("reserved_bytes", reserved_bytes);
        put("segment", segment);
        return out;
    }
};

// PyTorch's way of writing a size in its out-of-memory messages: "512 bytes", "1.50 KiB",
// "20.00 MiB", "3.25 GiB".
inline std::string format_size(uint64_t n)
{
    std::ostringstream os;
    os.precision(2);
    os << std::fixed;
    if (n <= 1024) os << n << " bytes";
    else if (n <= (uint64_t(1) << 20)) os << double(n) / 1024.0 << " KiB";
    else if (n <= (uint64_t(1) << 30)) os << double(n) / 1048576.0 << " MiB";
    else os << double(n) / 1073741824.0 << " GiB";
    return os.str();
}

}  // namespace minitorch
