"""Exercise 6 — a submission with the mistake students really make.

BUG: no ``__syncthreads()`` between filling the shared tile and reading it. A thread
reads the elements its two left neighbours stored; nothing makes it wait for them.
Run in order (thread 0 first) it happens to work, which is how it got submitted. The
grader must fail it, and say why: ``test_grade_kernels.py`` checks that it does.
"""
from __future__ import annotations

import minitorch

BLOCK = 64

SOURCE = r"""
#define BLOCK 64
#define WINDOW 3
#define HALO (WINDOW - 1)

extern "C" __global__ void sliding_average(const float* x, float* out, int n) {
    __shared__ float tile[BLOCK + HALO];
    int t = threadIdx.x;
    int i = blockIdx.x * BLOCK + t;
    tile[HALO + t] = i < n ? x[i] : 0.0f;
    if (t == 0) {
        for (int k = 0; k < HALO; ++k) {
            int j = i - HALO + k;
            tile[k] = j >= 0 ? x[j] : 0.0f;
        }
    }
    if (i < n) {  // BUG: reads tile[t], tile[t + 1], which threads t - 2 and t - 1 may not have written yet
        float sum = 0.0f;
        for (int k = 0; k < WINDOW; ++k) sum += tile[t + k];
        out[i] = sum / WINDOW;
    }
}
"""


def make_kernel() -> minitorch.cuda.RawKernel:
    return minitorch.cuda.RawKernel(SOURCE, "sliding_average")
