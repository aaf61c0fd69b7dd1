"""Exercise 6 — a sliding average in shared memory (a student's submission).

The exercise:

* ``SOURCE`` is CUDA C defining
  ``extern "C" __global__ void sliding_average(const float* x, float* out, int n)``:
  ``out[i] = (x[i-2] + x[i-1] + x[i]) / 3`` for ``0 <= i < n``, where the x before the
  start (``x[-1]``, ``x[-2]``) count as 0.
* It is launched with ``BLOCK = 64`` threads per block and ``(n + 63) // 64`` blocks,
  one thread per output, for any ``n >= 1``.
* Each block copies the elements of x it needs into shared memory first (its 64
  elements and the two before them), so that each element is read from global memory
  about once instead of three times, and the average is taken from shared memory.
* ``make_kernel()`` compiles ``SOURCE`` and returns the ``minitorch.cuda.RawKernel``.
"""
from __future__ import annotations

import minitorch

BLOCK = 64

SOURCE = r"""
#define BLOCK 64          // threads per block: launch with blockDim.x == BLOCK
#define WINDOW 3          // out[i] averages x[i - 2], x[i - 1], x[i]
#define HALO (WINDOW - 1) // elements before the block's first one that its outputs need

// One thread per output: i = blockIdx.x * BLOCK + threadIdx.x.
// tile[HALO + t] holds x[i]; tile[0 .. HALO-1] hold the HALO elements just before the
// block (0 before x[0]), which thread 0 fetches. Threads past n store 0 and write nothing.
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
    // Thread t reads tile[t .. t + HALO], which other threads wrote: wait until all have.
    __syncthreads();
    if (i < n) {
        float sum = 0.0f;
        for (int k = 0; k < WINDOW; ++k) sum += tile[t + k];
        out[i] = sum / WINDOW;
    }
}
"""


def make_kernel() -> minitorch.cuda.RawKernel:
    return minitorch.cuda.RawKernel(SOURCE, "sliding_average")
