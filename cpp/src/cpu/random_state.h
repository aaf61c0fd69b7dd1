// random_state.h — the global CPU generator (seeded by manual_seed).
#pragma once
#include <random>

namespace minitorch::cpu {
std::mt19937_64& generator();
}
