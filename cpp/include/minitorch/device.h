// device.h — where a tensor's storage lives.
#pragma once
#include <ostream>
#include <string>

namespace minitorch {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
// Per-device-type arrays (kernel tables, allocators) are sized by this: keep it one
// past the last DeviceType when adding one.
inline constexpr int kDeviceTypes = int(DeviceType::CUDA) + 1;

inline const char* device_type_name(DeviceType t)
{
    switch (t) {
        case DeviceType::CPU: return "cpu";
        case DeviceType::CUDA: return "cuda";
    }
    return "?";
}
// The name as prose writes it ("CUDA is not available").
inline const char* device_type_title(DeviceType t)
{
    switch (t) {
        case DeviceType::CPU: return "CPU";
        case DeviceType::CUDA: return "CUDA";
    }
    return "?";
}

struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;

    bool is_cpu() const { return type == DeviceType::CPU; }
    bool operator==(const Device& o) const { return type == o.type && index == o.index; }
    bool operator!=(const Device& o) const { return !(*this == o); }
    std::string str() const { return is_cpu() ? "cpu" : device_type_name(type) + (":" + std::to_string(index)); }
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace minitorch
