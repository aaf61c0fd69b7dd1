// table.cpp — the CPU's KernelTable, filled by name from the functions in this namespace.
#include "kernels_cpu.h"

namespace minitorch::cpu {

MT_DEFINE_KERNEL_TABLE()

}  // namespace minitorch::cpu
