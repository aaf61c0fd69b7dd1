// kernels_cpu.h — the CPU implementations behind cpu::kernel_table().
#pragma once
#include "minitorch/kernels.h"

namespace minitorch::cpu {

MT_DECLARE_KERNELS()  // copy, fill, map, zip, ... as listed in kernels.h

}  // namespace minitorch::cpu
