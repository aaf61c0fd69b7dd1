// parallel.h — one thread budget for the whole library.
//
// Kernels split work with parallel_for only when a range is large enough to pay for
// waking threads (grain); small tensors stay on the calling thread. Nested calls run
// serially, so BLAS inside a parallel region never oversubscribes the cores.
#pragma once
#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace minitorch {

// In a child made by fork() (a DataLoader worker), get_num_threads() is 1 whatever was
// set: OpenMP's threads are not copied by fork (parallel.cpp).
int get_num_threads();
void set_num_threads(int n);

// Elementwise work below this many elements per thread stays serial. Large on purpose:
// waking a second thread costs tens of microseconds, and on a busy 2-core machine a
// parallel region can stall for milliseconds waiting for a descheduled thread, so
// only work that takes ~100 us or more per thread is split.
constexpr int64_t kGrainSize = 131072;

// Calls f(begin, end) on disjoint chunks covering [0, n).
template <class F>
void parallel_for(int64_t n, int64_t grain, const F& f)
{
    if (n <= 0) return;
    int threads = get_num_threads();
#ifdef _OPENMP
    if (omp_in_parallel()) threads = 1;
#endif
    int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
    int64_t chunks = std::min<int64_t>(threads, max_chunks);
    if (chunks <= 1) {
        f(int64_t(0), n);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static, 1)
    for (int64_t c = 0; c < chunks; ++c) {
        int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
        f(begin, end);
    }
#else
    f(int64_t(0), n);
#endif
}

}  // namespace minitorch
