"""CUDA C sources that several test files compile with minitorch.cuda.RawKernel."""

# A sliding average of each element and the two before it within its block (64 threads),
# through shared memory. BARRIER is replaced by __syncthreads() or by nothing: without the
# barrier, thread t reads what threads t-1 and t-2 wrote, which is right only if they ran
# first (the emulator's forward schedule) and wrong if they run after (reverse).
SLIDING_AVERAGE = r"""
extern "C" __global__ void average3(const float* x, float* out) {
    __shared__ float tile[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = x[i];
    BARRIER
    float sum = tile[t];
    if (t >= 1) sum += tile[t - 1];
    if (t >= 2) sum += tile[t - 2];
    out[i] = sum / 3.0f;
}
"""
