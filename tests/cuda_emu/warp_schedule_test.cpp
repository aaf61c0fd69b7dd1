// warp_schedule_test.cpp — kernels whose result depends on how the emulator schedules
// warps, for test_warp_schedule.py. Run under one MINITORCH_EMU_SCHEDULE; prints one
// "name correct|WRONG" line per kernel, and "parse ok|FAILED" for the schedule names.
//
// Build: g++ -std=c++20 -O1 -I cuda/emu -x c++ warp_schedule_test.cpp
#include <cstdio>
#include <string>

#include "cuda_compat.h"

namespace {

constexpr int kThreads = 64;  // two warps

// Warp 0 fills a shared buffer; warp 1 copies it out. `block_barrier` false leaves only
// a __syncwarp() between the write and the read: a race between the two warps (on a GPU
// warp 1 may read before warp 0 has written).
__global__ void handoff_kernel(int* out, bool block_barrier)
{
    __shared__ int buffer[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (warp == 0) buffer[lane] = 0;  // what a reader that runs too early sees
    __syncthreads();
    if (warp == 0) buffer[lane] = int(lane) + 1;
    __syncwarp();
    if (block_barrier) __syncthreads();
    if (warp == 1) out[lane] = buffer[lane];
}

// Each warp sums its lanes' values with shuffles; lane 0 writes the warp's sum to
// out[warp]. Then lanes 0-15 alone (mask 0xffff) sum theirs: out[2 + warp].
__global__ void shuffle_sum_kernel(int* out)
{
    int v = int(threadIdx.x);
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
    if (threadIdx.x % 32 < 16) {
        int h = int(threadIdx.x);
        for (int m = 8; m > 0; m /= 2) h += __shfl_xor_sync(0xffffu, h, m, 16);
        if (threadIdx.x % 32 == 0) out[2 + threadIdx.x / 32] = h;
    }
}

void print(const char* name, bool correct) { std::printf("%s %s\n", name, correct ? "correct" : "WRONG"); }

void handoff(const char* name, bool block_barrier)
{
    int* out = nullptr;
    cudaMalloc(&out, 32 * sizeof(int));
    MT_LAUNCH(1, kThreads, 0, nullptr, handoff_kernel)(out, block_barrier);
    int host[32];
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    bool correct = cudaGetLastError() == cudaSuccess;
    for (int i = 0; i < 32; ++i) correct = correct && host[i] == i + 1;
    print(name, correct);
    cudaFree(out);
}

void shuffle_sum()
{
    int* out = nullptr;
    cudaMalloc(&out, 4 * sizeof(int));
    MT_LAUNCH(1, kThreads, 0, nullptr, shuffle_sum_kernel)(out);
    int host[4];
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    print("shuffle_sum", cudaGetLastError() == cudaSuccess && host[0] == 31 * 32 / 2 &&
                             host[1] == (32 + 63) * 32 / 2 && host[2] == 15 * 16 / 2 && host[3] == (32 + 47) * 16 / 2);
    cudaFree(out);
}

// Run first, so the schedule from the environment is read before it is changed.
bool parse()
{
    const std::string from_env = emu::schedule_name();
    bool ok = emu::set_schedule("warps") && emu::schedule_name() == "warps" &&
              emu::set_schedule("warps-reverse") && emu::schedule_name() == "warps-reverse" &&
              !emu::set_schedule("warps-backwards") && emu::schedule_name() == "warps-reverse" &&
              !emu::set_schedule("warp") && emu::set_schedule("forward") && emu::schedule_name() == "forward";
    return emu::set_schedule(from_env.c_str()) && ok;
}

}  // namespace

int main()
{
    std::printf("parse %s\n", parse() ? "ok" : "FAILED");
    handoff("handoff_syncwarp_only", false);
    handoff("handoff_syncthreads", true);
    shuffle_sum();
    std::printf("reports %ld\n", emu::diagnostic_count());
    return 0;
}
