// table.cpp — the CPU's KernelTable, filled by name from the functions in this namespace.
#include "kernels_cpu.h"

namespace minitorch::cpu {

// batch_norm reads float16 / bfloat16 itself (and float32 parameters beside them); so does group_norm.
MT_DEFINE_KERNEL_TABLE(filled.batch_norm = MT_COUNTED_KERNEL(batch_norm, batch_norm);
                       filled.batch_norm_backward = MT_COUNTED_KERNEL(batch_norm_backward, batch_norm_backward);
                       filled.group_norm = MT_COUNTED_KERNEL(group_norm, group_norm);
                       filled.group_norm_backward = MT_COUNTED_KERNEL(group_norm_backward, group_norm_backward);)

}  // namespace minitorch::cpu
