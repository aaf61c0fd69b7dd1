// storage.cpp — allocating and wrapping memory.
#include "minitorch/storage.h"

#include <cstdlib>

#include "minitorch/error.h"
#include "minitorch/host_allocator.h"
#include "minitorch/kernels.h"

namespace minitorch {

namespace {
DeviceAllocator g_allocators[kDeviceTypes] = {};

std::string human_bytes(size_t n)
{
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = double(n);
    int u = 0;
    while (v >= 1024.0 && u < 6) { v /= 1024.0; ++u; }
    std::ostringstream os;
    os.precision(u ? 2 : 0);
    os << std::fixed << v << ' ' << units[u];
    return os.str();
}
}  // namespace

void register_allocator(DeviceType type, DeviceAllocator alloc) { g_allocators[int(type)] = alloc; }

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device)
{
    if (!device.is_cpu()) {
        auto alloc = g_allocators[int(device.type)];
        MT_CHECK_RUNTIME(alloc, "cannot allocate on device '", device, "': ", unavailable_reason(device.type));
        MT_CHECK_RUNTIME(device.index == 0, "cannot allocate on device '", device, "': minitorch uses one ",
                         device_type_name(device.type), " device, ", device_type_name(device.type), ":0");
        return alloc(nbytes, device);
    }
    auto s = std::make_shared<Storage>();
    s->device = device;
    if (nbytes == 0) return s;
    // Above the machine's memory a request cannot succeed, and on Linux a lazily-overcommitted
    // one would later be killed instead of failing cleanly.
    const size_t limit = cpu::physical_memory_bytes();
    if (nbytes > limit)
        throw OutOfMemoryError(detail::str("cannot allocate ", human_bytes(nbytes), " on the CPU: this machine has ",
                                           human_bytes(limit), " of memory"));
    size_t block = 0;
    void* p = cpu::host_alloc(nbytes, &block);  // cached blocks first (cpu/allocator.cpp)
    if (!p) throw OutOfMemoryError(detail::str("cannot allocate ", human_bytes(nbytes), " on the CPU"));
    s->data = p;
    s->nbytes = nbytes;
    s->deleter = [block, nbytes](void* q) { cpu::host_free(q, block, nbytes); };
    return s;
}

std::shared_ptr<Storage> Storage::wrap(void* data, size_t nbytes, Device device, std::function<void(void*)> release)
{
    auto s = std::make_shared<Storage>();
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->deleter = std::move(release);
    return s;
}

}  // namespace minitorch
