// host_allocator.h — where CPU storage comes from: a caching allocator (cpu/allocator.cpp).
#pragma once
#include <cstddef>

#include "minitorch/memory_stats.h"

namespace minitorch::cpu {

// 64-byte aligned memory for at least `nbytes` (> 0); `*block` receives the size of the
// block actually reserved, to pass back to host_free. Null when the system is out of memory
// (after giving the cache back and trying again); raises OutOfMemoryError past the limit
// of set_per_process_memory_fraction. host_free takes the block's size and the request.
void* host_alloc(size_t nbytes, size_t* block);
void host_free(void* p, size_t block, size_t nbytes);
MemoryAccounting& memory_accounting();  // the counters of memory_stats.h (lock its mu)

void empty_cache();                // return every cached block to the system
size_t memory_allocated();         // bytes in blocks held by live storage
size_t max_memory_allocated();     // the peak of that
size_t memory_cached();            // bytes in freed blocks kept for reuse
void reset_peak_memory_stats();
bool caching_enabled();            // false under AddressSanitizer or MINITORCH_CPU_CACHING=0
size_t physical_memory_bytes();    // this machine's RAM (SIZE_MAX when unknown); asked once

}  // namespace minitorch::cpu
