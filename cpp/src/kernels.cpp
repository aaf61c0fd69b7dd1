// kernels.cpp — which KernelTable serves which device.
#include "minitorch/kernels.h"

#include "minitorch/error.h"

namespace minitorch {

namespace {
const KernelTable* g_tables[2] = {nullptr, nullptr};
}

void register_kernels(DeviceType type, const KernelTable* table) { g_tables[int(type)] = table; }

const KernelTable& kernels(Device device)
{
    if (device.is_cpu()) return cpu::kernel_table();
    const KernelTable* t = g_tables[int(device.type)];
    MT_CHECK_RUNTIME(t, "no kernels for device '", device, "': CUDA is not available (see minitorch.cuda.is_available())");
    return *t;
}

std::string index_error_message(const IndexCheck& check, int64_t value, int64_t position)
{
    if (check.is_target)
        return detail::str(check.op, ": target ", value, " is out of bounds for ", check.size, " classes (at index ",
                           position, ")");
    return detail::str(check.op, ": index ", value, " is out of bounds for dimension with size ", check.size);
}

}  // namespace minitorch
