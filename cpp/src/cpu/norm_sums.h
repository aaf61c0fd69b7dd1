// norm_sums.h — the sums the CPU's batch and group norm kernels take over a run of n
// contiguous values (cpu/batch_norm.cpp, cpu/group_norm.cpp). Each loop runs in kNormLanes
// independent lanes of the compute type C (SIMD registers: float for a float16 / bfloat16 T,
// converted as read), which are added up in double at the end of the run.
#pragma once
#include <cstdint>

namespace minitorch::cpu {

constexpr int kNormLanes = 8;

// Adds sum(x - K) and sum((x - K)^2) over the n values of x to s and q.
template <class T, class C>
inline void shifted_sums(const T* __restrict x, int64_t n, C K, double& s, double& q)
{
    C ls[kNormLanes] = {}, lq[kNormLanes] = {};
    int64_t j = 0;
    for (; j + kNormLanes <= n; j += kNormLanes)
        for (int k = 0; k < kNormLanes; ++k) {
            const C d = C(x[j + k]) - K;
            ls[k] += d;
            lq[k] += d * d;
        }
    for (; j < n; ++j) {
        const C d = C(x[j]) - K;
        s += double(d), q += double(d) * double(d);
    }
    for (int k = 0; k < kNormLanes; ++k) s += double(ls[k]), q += double(lq[k]);
}

// Adds sum(g) and sum(g * (x - mean)) over the n values of g and x to sg and sgd.
template <class T, class C>
inline void grad_sums(const T* __restrict g, const T* __restrict x, int64_t n, C mean, double& sg, double& sgd)
{
    C lg[kNormLanes] = {}, ld[kNormLanes] = {};
    int64_t j = 0;
    for (; j + kNormLanes <= n; j += kNormLanes)
        for (int k = 0; k < kNormLanes; ++k) {
            lg[k] += C(g[j + k]);
            ld[k] += C(g[j + k]) * (C(x[j + k]) - mean);
        }
    for (; j < n; ++j) sg += double(C(g[j])), sgd += double(C(g[j])) * (double(C(x[j])) - double(mean));
    for (int k = 0; k < kNormLanes; ++k) sg += double(lg[k]), sgd += double(ld[k]);
}

}  // namespace minitorch::cpu
