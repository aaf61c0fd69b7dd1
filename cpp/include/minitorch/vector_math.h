// vector_math.h — exp, log, tanh, sigmoid... on several values per instruction (cpu/vector_math.cpp).
#pragma once
#include <cstdint>

#include "minitorch/op_list.h"

namespace minitorch::cpu {

// True when op has a SIMD version for T (float or double) on this CPU in this process.
template <class T>
bool has_vector_map(UnaryOp op);

// out[i] = op(in[i]) for n contiguous elements; only after has_vector_map<T>(op).
template <class T>
void vector_map(UnaryOp op, T* out, const T* in, int64_t n);

// What the SIMD math runs on: "AVX2", "SSE", "NEON" or "DEFAULT" (the scalar loops), as
// PyTorch's torch.backends.cpu.get_cpu_capability() names it.
const char* cpu_capability();

// True where cpu_capability() is "AVX2": the *_avx2.cpp copies of the loops may run.
bool cpu_has_avx2();

}  // namespace minitorch::cpu
