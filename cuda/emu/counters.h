// counters.h — the instrumented half of the emulator's counters (raw_kernel.h includes
// it in the counting build of a RawKernel library, -DMT_EMU_COUNTERS=1).
//
// How accesses are seen. The counting build compiles the student's kernel (and the
// emulator with it) with the compiler's ThreadSanitizer and coverage instrumentation,
//     -O0 -fsanitize=thread -fsanitize-coverage=trace-pc
// but links no sanitizer runtime: this file *is* the runtime. The compiler then calls
//   __tsan_readN(addr) / __tsan_writeN(addr)  before every load and store of N bytes,
//   __sanitizer_cov_trace_pc()                 at the start of every basic block,
// and __builtin_return_address(0) in those functions is the address of the kernel's
// instruction. We pass them, with the CUDA thread that runs (the fiber), to
// counters_runtime.h, which keeps the accesses to global memory (the tensor arguments)
// and shared memory (static __shared__ arrays and the dynamic buffer) and ignores the
// rest (each thread's stack, the emulator's state). -O0 keeps every branch of the
// source a branch (an optimiser turns short ones into selects) and every access an access.
//
// Everything here must itself be uninstrumented (it would call itself): MT_CNT_PLAIN.
#pragma once

#include <cstdint>
#include <cstring>

#include <dlfcn.h>
#include <link.h>

#if defined(__clang__)
#define MT_CNT_PLAIN __attribute__((no_sanitize("thread", "coverage"), used))
#else
#define MT_CNT_PLAIN __attribute__((no_sanitize_thread, no_sanitize_coverage, used))
#endif
#define MT_CNT_HOOK extern "C" __attribute__((visibility("hidden"))) MT_CNT_PLAIN

extern "C" {
void mt_cnt_configure(int active, const uint64_t* ranges, unsigned n_ranges, uintptr_t static_lo,
                      uintptr_t static_hi, uintptr_t exclude_lo, uintptr_t exclude_hi);
void mt_cnt_totals(uint64_t* out, unsigned n);
int mt_cnt_active();
void mt_cnt_access(unsigned t, uintptr_t pc, uintptr_t addr, unsigned size, int store);
void mt_cnt_block_entered(unsigned t, uintptr_t pc);
}

namespace mt_cnt {

inline thread_local bool busy = false;  // in a hook (or outside counting): ignore what happens

MT_CNT_PLAIN inline void access(const void* pc, const volatile void* addr, unsigned long size, int store)
{
    const emu::detail::Fiber* f = emu::detail::current;
    if (!f || busy) return;
    busy = true;
    mt_cnt_access(f->warp * 32 + f->lane, uintptr_t(pc), uintptr_t(addr), unsigned(size), store);
    busy = false;
}

// The writable data of this library (where static __shared__ arrays are), found from
// the program headers of the object that holds this function.
struct Segment {
    uintptr_t lo = 0, hi = 0, base = 0;
};
MT_CNT_PLAIN inline int find_segment(dl_phdr_info* info, size_t, void* data)
{
    Segment& s = *static_cast<Segment*>(data);
    if (info->dlpi_addr != s.base) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& p = info->dlpi_phdr[i];
        if (p.p_type == PT_LOAD && (p.p_flags & PF_W)) {
            s.lo = info->dlpi_addr + p.p_vaddr;
            s.hi = s.lo + p.p_memsz;
        }
    }
    return 1;
}

}  // namespace mt_cnt

// ---- the ThreadSanitizer entry points the compiler calls ----
#define MT_CNT_RW(n)                                                                                               \
    MT_CNT_HOOK void __tsan_read##n(void* a) { mt_cnt::access(__builtin_return_address(0), a, n, 0); }           \
    MT_CNT_HOOK void __tsan_write##n(void* a) { mt_cnt::access(__builtin_return_address(0), a, n, 1); }          \
    MT_CNT_HOOK void __tsan_unaligned_read##n(void* a) { mt_cnt::access(__builtin_return_address(0), a, n, 0); } \
    MT_CNT_HOOK void __tsan_unaligned_write##n(void* a) { mt_cnt::access(__builtin_return_address(0), a, n, 1); } \
    MT_CNT_HOOK void __tsan_volatile_read##n(void* a) { mt_cnt::access(__builtin_return_address(0), a, n, 0); }  \
    MT_CNT_HOOK void __tsan_volatile_write##n(void* a) { mt_cnt::access(__builtin_return_address(0), a, n, 1); }
MT_CNT_RW(1)
MT_CNT_RW(2)
MT_CNT_RW(4)
MT_CNT_RW(8)
MT_CNT_RW(16)
#undef MT_CNT_RW
MT_CNT_HOOK void __tsan_read_range(void* a, unsigned long n) { mt_cnt::access(__builtin_return_address(0), a, n, 0); }
MT_CNT_HOOK void __tsan_write_range(void* a, unsigned long n) { mt_cnt::access(__builtin_return_address(0), a, n, 1); }
MT_CNT_HOOK void* __tsan_memcpy(void* d, const void* s, unsigned long n)
{
    mt_cnt::access(__builtin_return_address(0), s, n, 0);
    mt_cnt::access(__builtin_return_address(0), d, n, 1);
    return std::memcpy(d, s, n);
}
MT_CNT_HOOK void* __tsan_memmove(void* d, const void* s, unsigned long n)
{
    mt_cnt::access(__builtin_return_address(0), s, n, 0);
    mt_cnt::access(__builtin_return_address(0), d, n, 1);
    return std::memmove(d, s, n);
}
MT_CNT_HOOK void* __tsan_memset(void* d, int c, unsigned long n)
{
    mt_cnt::access(__builtin_return_address(0), d, n, 1);
    return std::memset(d, c, n);
}
MT_CNT_HOOK void __tsan_init() {}
MT_CNT_HOOK void __tsan_func_entry(void*) {}
MT_CNT_HOOK void __tsan_func_exit() {}
MT_CNT_HOOK void __tsan_vptr_update(void**, void*) {}
MT_CNT_HOOK void __tsan_vptr_read(void**) {}

// The __tsan_atomic* functions (atomic operations, done for real and not counted) are in
// counters_runtime.h: Clang instruments atomics even in a function marked not to be.

// ---- the coverage entry point: a basic block begins ----
MT_CNT_HOOK void __sanitizer_cov_trace_pc()
{
    const emu::detail::Fiber* f = emu::detail::current;
    if (!f || mt_cnt::busy) return;
    mt_cnt::busy = true;
    mt_cnt_block_entered(f->warp * 32 + f->lane, uintptr_t(__builtin_return_address(0)));
    mt_cnt::busy = false;
}

// ---- what Python calls (through raw_kernel.h's exports) ----
namespace mt_cnt {

// Counting on for the next launches, with `n` tensor arguments: ranges = begin, bytes, ...
MT_CNT_PLAIN inline void start(const uint64_t* ranges, unsigned n)
{
    Segment s;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&find_segment), &info)) {
        s.base = uintptr_t(info.dli_fbase);
        dl_iterate_phdr(find_segment, &s);
    }
    const auto* runner = &emu::detail::runner();  // the emulator's state is in that segment too
    mt_cnt_configure(1, ranges, n, s.lo, s.hi, uintptr_t(runner), uintptr_t(runner + 1));
}

}  // namespace mt_cnt
