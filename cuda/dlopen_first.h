// dlopen_first.h — open the first shared library of a list that loads.
//
// cuDNN (cudnn_conv.cu) and NVRTC (raw_kernel.cu) are optional: minitorch looks for them
// at their first use, in order (a pip wheel's path, then the names the dynamic loader
// searches on LD_LIBRARY_PATH), and says which it tried when none loads.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace minitorch::cuda {

struct Opened {
    void* lib = nullptr;  // the dlopen handle (null when no candidate loaded)
    std::string name;     // the candidate that loaded
    std::string tried;    // every candidate that did not, comma-separated
};

// Empty candidates are skipped (an unset wheel path).
inline Opened dlopen_first(const std::vector<std::string>& candidates)
{
    Opened o;
    for (const std::string& name : candidates) {
        if (name.empty()) continue;
        // RTLD_LOCAL: the library's symbols stay out of the global namespace (link hygiene).
        o.lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (o.lib) {
            o.name = name;
            return o;
        }
        o.tried += (o.tried.empty() ? "" : ", ") + name;
    }
    return o;
}

}  // namespace minitorch::cuda
