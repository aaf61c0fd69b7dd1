// counter_rng.h — the random numbers of devices other than the CPU.
//
// A GPU fill runs thousands of threads at once, so they cannot share one sequential
// generator (the CPU's Mersenne Twister). Instead element i of a fill gets the bits
// hash(seed, offset + i): no state to share, the same values for any thread schedule.
// Each fill then moves the global offset past what it used, so fills differ.
#pragma once
#include <math.h>

#include <cstdint>

#include "minitorch/elementwise_math.h"  // MT_HOST_DEVICE

namespace minitorch {

struct CounterStream {
    uint64_t seed = 0;
    uint64_t offset = 0;
};

// SplitMix64's finaliser: a bijection on 64 bits whose outputs look independent
// even for consecutive inputs.
MT_HOST_DEVICE inline uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// 64 random bits for (seed, counter): the counter-th output of SplitMix64 started at a
// key made from the seed (states are golden-ratio steps apart, as SplitMix64 expects).
// `lane` picks an independent second draw.
MT_HOST_DEVICE inline uint64_t counter_bits(uint64_t seed, uint64_t counter, uint64_t lane = 0)
{
    return mix64(mix64(seed ^ (lane * 0xD1B54A32D192ED03ull)) + counter * 0x9E3779B97F4A7C15ull);
}

// Uniform in [0, 1) from the top 53 bits (exactly representable in a double).
MT_HOST_DEVICE inline double bits_to_unit(uint64_t bits) { return double(bits >> 11) * (1.0 / 9007199254740992.0); }

}  // namespace minitorch
