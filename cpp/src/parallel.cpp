// parallel.cpp — the thread budget, shared by our OpenMP loops and OpenBLAS.
#include "minitorch/parallel.h"

#include <thread>

#include "minitorch/error.h"


namespace minitorch {

namespace {
int default_threads()
{
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? int(hw) : 1;
}
int g_threads = -1;  // -1: not set yet, take the default on first use
}  // namespace

int get_num_threads()
{
    if (g_threads < 0) set_num_threads(default_threads());
    return g_threads;
}

void set_num_threads(int n)
{
    MT_CHECK(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
    g_threads = n;  // BLAS calls pick 1 or n per call (cpu/blas.h)
}

}  // namespace minitorch
