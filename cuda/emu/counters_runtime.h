// counters_runtime.h — the emulator's memory and branch counters (compiled on its own).
//
// This file is not included anywhere: python/minitorch/cuda_kernels/emulated_backend.py
// compiles it as a translation unit of its own (g++ -x c++ -O2, no instrumentation) and
// links it into the *counting* build of a RawKernel library (see counters.h, which the
// other, instrumented translation unit includes). The instrumented code calls the
// mt_cnt_* functions below for every access to global or shared memory, every basic
// block it enters, every atomic and every barrier; this file groups the accesses of
// one warp into warp-level instructions and counts what a GPU would do with them.
//
// The grouping (the hard part, since the emulator runs the threads of a warp one after
// another, as fibers): a warp-level instruction is one *instance* of one machine
// instruction of the kernel: (warp, program counter of the access, n), where n counts how
// many times this thread has executed that instruction before. The n-th time lanes of a
// warp execute the same load, they execute it together — exact for straight-line code
// and for loops that every lane runs as often; after a divergent branch it is what SIMT
// hardware does when the paths reconverge (lanes that run a loop longer issue the later
// instances alone). The same key with a basic block's address finds divergent branches:
// the n-th execution of a block, after which the lanes of a warp go on to different
// blocks, is one divergent branch.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#define MT_CNT_EXPORT extern "C" __attribute__((visibility("hidden")))

namespace {

constexpr unsigned kMaxThreads = 1024;
constexpr uint64_t kSector = 32;  // bytes: the unit DRAM and L2 move
constexpr unsigned kBanks = 32, kBankWidth = 4;

enum Kind : uint8_t { GlobalLoad, GlobalStore, SharedLoad, SharedStore, Atomic };

// Must match the order of emulated_backend.COUNTER_FIELDS.
struct Totals {
    uint64_t global_load_requests, global_store_requests, global_load_sectors, global_store_sectors,
        global_load_bytes, global_store_bytes, shared_load_requests, shared_store_requests, shared_bank_conflicts,
        divergent_branches, barriers, atomics, atomic_conflicts, blocks, warps;
};

struct Key {
    uintptr_t pc;
    uint32_t n;
    uint16_t warp;
    uint8_t kind;
    bool operator==(const Key& o) const { return pc == o.pc && n == o.n && warp == o.warp && kind == o.kind; }
};
struct KeyHash {
    size_t operator()(const Key& k) const
    {
        uint64_t h = k.pc * 0x9E3779B97F4A7C15ull;
        h ^= (uint64_t(k.n) << 24 | uint64_t(k.warp) << 8 | k.kind) * 0xC2B2AE3D27D4EB4Full;
        return size_t(h ^ (h >> 29));
    }
};

// One warp-level memory instruction: the distinct sectors (global), 4-byte words
// (shared) or addresses (atomics) its lanes touched.
struct Group {
    std::vector<uint64_t> items;
    uint64_t bytes = 0;
    uint32_t lanes = 0;
    void add(uint64_t item)
    {
        if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
    }
};

struct Branch {
    uintptr_t next;
    bool divergent;
};

struct Thread {
    std::unordered_map<uintptr_t, uint32_t> seen;  // instruction or block address -> times executed
    uintptr_t block = 0;                           // the basic block it is in, and its instance
    uint32_t block_n = 0;
    bool in_block = false;
    uint32_t next_instance(uintptr_t pc) { return seen[pc]++; }
};

struct State {
    bool active = false;
    std::vector<std::pair<uintptr_t, uintptr_t>> global;  // [begin, end) of each tensor argument
    uintptr_t static_lo = 0, static_hi = 0;             // static __shared__ (the library's data)
    uintptr_t exclude_lo = 0, exclude_hi = 0;           // ... but not the emulator's own state
    uintptr_t dynamic_lo = 0, dynamic_hi = 0;           // extern __shared__, this block
    unsigned threads = 0;
    Thread thread[kMaxThreads];
    std::unordered_map<Key, Group, KeyHash> groups;
    std::unordered_map<Key, Branch, KeyHash> branches;
    Totals totals{};
};

State& state()
{
    static State s;
    return s;
}

void finish_block(State& s)
{
    Totals& t = s.totals;
    for (auto& [key, g] : s.groups) {
        switch (key.kind) {
        case GlobalLoad:
            ++t.global_load_requests;
            t.global_load_sectors += g.items.size();
            t.global_load_bytes += g.bytes;
            break;
        case GlobalStore:
            ++t.global_store_requests;
            t.global_store_sectors += g.items.size();
            t.global_store_bytes += g.bytes;
            break;
        case SharedLoad:
        case SharedStore: {
            (key.kind == SharedLoad ? t.shared_load_requests : t.shared_store_requests) += 1;
            // n-way conflict: a bank must deliver n different words, one per wavefront.
            // Lanes reading the same word share it (broadcast). Accesses wider than 4 bytes
            // need several wavefronts anyway; only the ones beyond that are conflicts.
            unsigned per_bank[kBanks] = {};
            unsigned worst = 0;
            for (uint64_t word : g.items) worst = std::max(worst, ++per_bank[word % kBanks]);
            const uint64_t ideal = (g.items.size() + kBanks - 1) / kBanks;
            t.shared_bank_conflicts += worst - std::min<uint64_t>(worst, ideal);
            break;
        }
        case Atomic:
            t.atomic_conflicts += g.lanes - g.items.size();
            break;
        }
    }
    for (auto& [key, b] : s.branches) t.divergent_branches += b.divergent;
    t.warps += (s.threads + 31) / 32;
    ++t.blocks;
    s.groups.clear();
    s.branches.clear();
}

}  // namespace

// Starts counting (active=1) for the next launch, with the tensor arguments' byte ranges
// (global memory) and the library's static data (static __shared__ arrays) minus the
// emulator's own state; active=0 stops.
MT_CNT_EXPORT void mt_cnt_configure(int active, const uint64_t* ranges, unsigned n_ranges, uintptr_t static_lo,
                                    uintptr_t static_hi, uintptr_t exclude_lo, uintptr_t exclude_hi)
{
    State& s = state();
    s.active = active != 0;
    s.global.clear();
    for (unsigned i = 0; i < n_ranges; ++i)
        if (ranges[2 * i + 1])
            s.global.emplace_back(uintptr_t(ranges[2 * i]), uintptr_t(ranges[2 * i] + ranges[2 * i + 1]));
    s.static_lo = static_lo;
    s.static_hi = static_hi;
    s.exclude_lo = exclude_lo;
    s.exclude_hi = exclude_hi;
    s.totals = Totals{};
    s.groups.clear();
    s.branches.clear();
}

MT_CNT_EXPORT void mt_cnt_totals(uint64_t* out, unsigned n)
{
    const Totals& t = state().totals;
    std::memcpy(out, &t, std::min<size_t>(n * sizeof(uint64_t), sizeof t));
}

MT_CNT_EXPORT int mt_cnt_active() { return state().active; }

MT_CNT_EXPORT void mt_cnt_block_begin(unsigned threads, uintptr_t dynamic_lo, uintptr_t dynamic_hi)
{
    State& s = state();
    if (!s.active) return;
    s.threads = threads;
    s.dynamic_lo = dynamic_lo;
    s.dynamic_hi = dynamic_hi;
}

MT_CNT_EXPORT void mt_cnt_block_end()
{
    State& s = state();
    if (s.active) finish_block(s);
}

MT_CNT_EXPORT void mt_cnt_barrier()
{
    State& s = state();
    if (s.active) ++s.totals.barriers;
}

MT_CNT_EXPORT void mt_cnt_thread_start(unsigned t)
{
    State& s = state();
    if (!s.active || t >= kMaxThreads) return;
    s.thread[t].seen.clear();
    s.thread[t].in_block = false;
}

// One thread's access of `size` bytes at `addr`, by the instruction at `pc`.
MT_CNT_EXPORT void mt_cnt_access(unsigned t, uintptr_t pc, uintptr_t addr, unsigned size, int store)
{
    State& s = state();
    if (!s.active || t >= kMaxThreads || size == 0) return;
    Kind kind;
    if ((addr >= s.dynamic_lo && addr < s.dynamic_hi) ||
        (addr >= s.static_lo && addr < s.static_hi && !(addr >= s.exclude_lo && addr < s.exclude_hi)))
        kind = store ? SharedStore : SharedLoad;
    else if (std::any_of(s.global.begin(), s.global.end(),
                         [addr](const auto& r) { return addr >= r.first && addr < r.second; }))
        kind = store ? GlobalStore : GlobalLoad;
    else
        return;  // the thread's stack (its local variables), or the emulator's own memory
    Group& g = s.groups[Key{pc, s.thread[t].next_instance(pc), uint16_t(t / 32), kind}];
    g.bytes += size;
    ++g.lanes;
    if (kind == GlobalLoad || kind == GlobalStore) {
        for (uint64_t sector = addr / kSector; sector <= (addr + size - 1) / kSector; ++sector) g.add(sector);
    } else {
        for (uint64_t word = addr / kBankWidth; word <= (addr + size - 1) / kBankWidth; ++word) g.add(word);
    }
}

MT_CNT_EXPORT void mt_cnt_atomic(unsigned t, uintptr_t pc, uintptr_t addr)
{
    State& s = state();
    if (!s.active || t >= kMaxThreads) return;
    ++s.totals.atomics;
    Group& g = s.groups[Key{pc, s.thread[t].next_instance(pc), uint16_t(t / 32), Atomic}];
    ++g.lanes;
    g.add(addr);
}

// Thread t enters the basic block at `pc`. The block it leaves, in the instance it ran,
// is a divergent branch if another lane of its warp left that same instance elsewhere.
MT_CNT_EXPORT void mt_cnt_block_entered(unsigned t, uintptr_t pc)
{
    State& s = state();
    if (!s.active || t >= kMaxThreads) return;
    Thread& th = s.thread[t];
    const uint32_t n = th.next_instance(pc);
    if (th.in_block) {
        auto [it, inserted] = s.branches.try_emplace(Key{th.block, th.block_n, uint16_t(t / 32), 0}, Branch{pc, false});
        if (!inserted && it->second.next != pc) it->second.divergent = true;
    }
    th.block = pc;
    th.block_n = n;
    th.in_block = true;
}

// ---- the ThreadSanitizer atomic entry points ----
// The instrumented code calls these for every atomic operation (the emulator's atomicAdd
// and friends, its own std::atomic counters). They do the operation for real and count
// nothing: atomicAdd and friends count themselves (MT_EMU_COUNT_ATOMIC in cuda_emu.h).
// They live here because this translation unit is not instrumented.
#define MT_CNT_ATOMIC_RMW(bits, T, op)                                              \
    MT_CNT_EXPORT T __tsan_atomic##bits##_##op(volatile T* a, T v, int)               \
    {                                                                               \
        return __atomic_##op(a, v, __ATOMIC_SEQ_CST);                               \
    }
#define MT_CNT_ATOMICS(bits, T)                                                     \
    MT_CNT_EXPORT T __tsan_atomic##bits##_load(const volatile T* a, int)              \
    {                                                                               \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                \
    }                                                                               \
    MT_CNT_EXPORT void __tsan_atomic##bits##_store(volatile T* a, T v, int)           \
    {                                                                               \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                   \
    }                                                                               \
    MT_CNT_EXPORT T __tsan_atomic##bits##_exchange(volatile T* a, T v, int)           \
    {                                                                               \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                         \
    }                                                                               \
    MT_CNT_ATOMIC_RMW(bits, T, fetch_add)                                           \
    MT_CNT_ATOMIC_RMW(bits, T, fetch_sub)                                           \
    MT_CNT_ATOMIC_RMW(bits, T, fetch_and)                                           \
    MT_CNT_ATOMIC_RMW(bits, T, fetch_or)                                            \
    MT_CNT_ATOMIC_RMW(bits, T, fetch_xor)                                           \
    MT_CNT_ATOMIC_RMW(bits, T, fetch_nand)                                          \
    MT_CNT_EXPORT int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) \
    {                                                                               \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    }                                                                               \
    MT_CNT_EXPORT int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) \
    {                                                                               \
        return __atomic_compare_exchange_n(a, c, v, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    }                                                                               \
    MT_CNT_EXPORT T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) \
    {                                                                               \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        return c;                                                                   \
    }
MT_CNT_ATOMICS(8, unsigned char)
MT_CNT_ATOMICS(16, unsigned short)
MT_CNT_ATOMICS(32, unsigned int)
MT_CNT_ATOMICS(64, unsigned long long)
#undef MT_CNT_ATOMICS
#undef MT_CNT_ATOMIC_RMW
MT_CNT_EXPORT void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
MT_CNT_EXPORT void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
