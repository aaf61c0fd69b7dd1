// parallel.cpp — the thread budget, shared by our OpenMP loops and OpenBLAS.
#include "minitorch/parallel.h"

#include <thread>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

#include "minitorch/error.h"


namespace minitorch {

namespace {
int default_threads()
{
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? int(hw) : 1;
}
int g_threads = -1;  // -1: not set yet, take the default on first use

// fork() copies only the calling thread. GNU OpenMP's thread pool does not survive that:
// a child whose parent had run a parallel region waits forever at the next one for
// threads that do not exist (a DataLoader worker collating a big batch would hang). So a
// forked child runs every parallel_for on its own thread, as PyTorch's workers do.
bool g_forked_child = false;
void mark_forked_child() { g_forked_child = true; }
#if defined(__unix__) || defined(__APPLE__)
[[maybe_unused]] const bool g_fork_handler = (pthread_atfork(nullptr, nullptr, mark_forked_child), true);
#endif
}  // namespace

int get_num_threads()
{
    if (g_forked_child) return 1;
    if (g_threads < 0) set_num_threads(default_threads());
    return g_threads;
}

void set_num_threads(int n)
{
    MT_CHECK(n >= 1, "set_num_threads: expected a positive number of threads, got ", n);
    g_threads = n;  // BLAS calls pick 1 or n per call (cpu/blas.h)
}

}  // namespace minitorch
