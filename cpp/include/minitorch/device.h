// device.h — where a tensor's storage lives.
#pragma once
#include <ostream>
#include <string>

namespace minitorch {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };

struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;

    bool is_cpu() const { return type == DeviceType::CPU; }
    bool operator==(const Device& o) const { return type == o.type && index == o.index; }
    bool operator!=(const Device& o) const { return !(*this == o); }
    std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace minitorch
