// table.cpp — the CPU's KernelTable, filled by name from the functions in this namespace.
#include "kernels_cpu.h"

namespace minitorch::cpu {

const KernelTable& kernel_table()
{
    static const KernelTable table = [] {
        KernelTable table;
        MT_FILL_KERNEL_TABLE(table);
        return table;
    }();
    return table;
}

}  // namespace minitorch::cpu
