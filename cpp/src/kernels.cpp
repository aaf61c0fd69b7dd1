// kernels.cpp — which KernelTable serves which device.
#include "minitorch/kernels.h"

#include <atomic>

#include "minitorch/error.h"

namespace minitorch {

namespace {
std::atomic<const KernelTable*> g_tables[kDeviceTypes] = {};  // the CPU's is filled on first use
std::string (*g_reasons[kDeviceTypes])() = {};
}

bool register_kernels(DeviceType type, const KernelTable* table)
{
    const KernelTable* expected = nullptr;
    return g_tables[int(type)].compare_exchange_strong(expected, table) || expected == table;
}

void set_unavailable_reason(DeviceType type, std::string (*reason)()) { g_reasons[int(type)] = reason; }

std::string unavailable_reason(DeviceType type)
{
    if (g_reasons[int(type)]) return g_reasons[int(type)]();
    return std::string(device_type_title(type)) + " is not available (minitorch was built without it, or no such "
                                                  "device was found)";
}

const KernelTable& kernels(Device device)
{
    if (device.is_cpu()) return cpu::kernel_table();
    const KernelTable* t = g_tables[int(device.type)].load();
    MT_CHECK_RUNTIME(t, "no kernels for device '", device, "': ", unavailable_reason(device.type));
    return *t;
}

void manual_seed_all_devices(uint64_t seed)
{
    cpu::kernel_table().manual_seed(seed);
    for (int d = 0; d < kDeviceTypes; ++d) {
        const KernelTable* t = g_tables[d].load();
        if (t && DeviceType(d) != DeviceType::CPU) t->manual_seed(seed);
    }
}

namespace {
thread_local bool t_in_conv = false;
const ConvLibrary* g_conv_libraries[kDeviceTypes] = {};
const RnnLibrary* g_rnn_libraries[kDeviceTypes] = {};
}

void register_conv_library(DeviceType type, const ConvLibrary* library) { g_conv_libraries[int(type)] = library; }
const ConvLibrary* conv_library(Device device) { return g_conv_libraries[int(device.type)]; }
void register_rnn_library(DeviceType type, const RnnLibrary* library) { g_rnn_libraries[int(type)] = library; }
const RnnLibrary* rnn_library(Device device) { return g_rnn_libraries[int(device.type)]; }
CudnnSwitches& cudnn_switches()
{
    static CudnnSwitches switches;
    return switches;
}

Tf32Switches& tf32_switches()
{
    static Tf32Switches switches;
    return switches;
}
ConvGemmScope::ConvGemmScope() : prev_(t_in_conv) { t_in_conv = true; }
ConvGemmScope::~ConvGemmScope() { t_in_conv = prev_; }
bool tf32_allowed_now() { return t_in_conv ? tf32_switches().conv : tf32_switches().matmul; }

std::string index_error_message(const IndexCheck& check, int64_t value, int64_t position)
{
    if (check.is_target)
        return detail::str(check.op, ": target ", value, " is out of bounds for ", check.size, " classes (at index ",
                           position, ")");
    if (check.dim >= 0)
        return detail::str(check.op, ": index ", value, " is out of bounds for dimension ", check.dim, " with size ",
                           check.size);
    return detail::str(check.op, ": index ", value, " is out of bounds for dimension with size ", check.size);
}

}  // namespace minitorch
