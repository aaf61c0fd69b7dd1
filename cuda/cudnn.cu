// cudnn.cu — loading cuDNN, its handle and its statuses (see cudnn.cuh), and
// minitorch.backends.cudnn's version() and the reason it is not available.
#include <dlfcn.h>

#include <memory>
#include <string>

#include "cudnn.cuh"
#include "dlopen_first.h"

namespace minitorch::cuda {

namespace {
std::string g_library_path;  // the wheel's libcudnn.so.9, set by Python ("" otherwise)
}

void cudnn_set_library_path(const std::string& path) { g_library_path = path; }

#if !MT_WITH_CUDNN

long cudnn_version() { return 0; }
std::string cudnn_unavailable_reason()
{
    return MT_CUDA_EMULATED ? "the emulated CUDA build has no cuDNN (convolutions run im2col + GEMMs)"
                            : "minitorch was built without cudnn.h (convolutions run im2col + GEMMs)";
}
std::string cudnn_rnn_unavailable_reason()
{
    return MT_CUDA_EMULATED ? "the emulated CUDA build has no cuDNN (recurrent layers run minitorch's kernels)"
                            : "minitorch was built without cudnn.h (recurrent layers run minitorch's kernels)";
}

#else

namespace cudnn {

namespace {
std::string g_unavailable;                    // why cuDNN cannot be used at all ("" while it can)
std::string g_part_unavailable[2];            // why one part cannot ("" while it can)
bool g_broken[2] = {false, false};            // per Part
}  // namespace

std::mutex& mutex()
{
    static std::mutex m;
    return m;
}

const Library* library()
{
    static std::unique_ptr<Library> loaded;
    static bool tried = false;
    if (tried) return loaded.get();
    tried = true;
    auto c = std::make_unique<Library>();
    Opened opened = dlopen_first({g_library_path, "libcudnn.so.9"});
    c->lib = opened.lib;
    c->loaded_from = opened.name;
    if (!c->lib) {
        g_unavailable = "cuDNN 9 was not found (tried " + opened.tried +
                        "); install it with `pip install nvidia-cudnn-cu13` or put the CUDA toolkit's lib "
                        "folder on LD_LIBRARY_PATH (convolutions run im2col + GEMMs meanwhile)";
        return nullptr;
    }
#define MT_CUDNN_BIND(f)                                                                          \
    c->f = reinterpret_cast<decltype(c->f)>(dlsym(c->lib, #f));                                   \
    if (!c->f) {                                                                                  \
        g_unavailable = c->loaded_from + " has no " #f " (a cuDNN older than 9?)";                \
        return nullptr;                                                                           \
    }
    MT_CUDNN_FUNCTIONS(MT_CUDNN_BIND)
#undef MT_CUDNN_BIND
    c->has_rnn = true;
#define MT_CUDNN_BIND_RNN(f)                                                                      \
    c->f = reinterpret_cast<decltype(c->f)>(dlsym(c->lib, #f));                                   \
    if (!c->f && c->has_rnn) {                                                                    \
        c->has_rnn = false;                                                                       \
        g_part_unavailable[int(Part::Rnn)] = c->loaded_from + " has no " #f;                      \
    }
    MT_CUDNN_RNN_FUNCTIONS(MT_CUDNN_BIND_RNN)
#undef MT_CUDNN_BIND_RNN
    c->has_graph = true;
#define MT_CUDNN_BIND_GRAPH(f)                                                                    \
    c->f = reinterpret_cast<decltype(c->f)>(dlsym(c->lib, #f));                                   \
    if (!c->f) c->has_graph = false;
    MT_CUDNN_GRAPH_FUNCTIONS(MT_CUDNN_BIND_GRAPH)
#undef MT_CUDNN_BIND_GRAPH
    loaded = std::move(c);
    return loaded.get();
}

cudnnHandle_t handle(const Library& c)
{
    static cudnnHandle_t h = nullptr;
    static bool tried = false;
    if (tried) return h;
    tried = true;
    cudnnHandle_t made = nullptr;
    const cudnnStatus_t st = c.cudnnCreate(&made);
    if (st != CUDNN_STATUS_SUCCESS) {
        g_unavailable = detail::str("cudnnCreate failed: ", c.cudnnGetErrorString(st));
        return nullptr;
    }
    const cudnnStatus_t set = c.cudnnSetStream(made, cudaStream_t(0));
    if (set != CUDNN_STATUS_SUCCESS) {
        g_unavailable = detail::str("cudnnSetStream failed: ", c.cudnnGetErrorString(set));
        c.cudnnDestroy(made);
        return nullptr;
    }
    h = made;
    return h;
}

bool broken(Part part) { return g_broken[int(part)]; }

std::string unavailable(Part part)
{
    return g_unavailable.empty() ? g_part_unavailable[int(part)] : g_unavailable;
}

void check(const Library& c, cudnnStatus_t status, const char* what, Part part)
{
    if (status == CUDNN_STATUS_SUCCESS) return;
    // A part of the library missing or broken (libcudnn_adv for the RNNs, say) is checked first:
    // its NOT_SUPPORTED form (3009) would otherwise read as "this call is not supported" at
    // every call, and the part would never be marked unavailable.
    if (status == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED || status == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH ||
        status == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE) {
        g_broken[int(part)] = true;
        g_part_unavailable[int(part)] =
            detail::str(c.loaded_from, ": ", what, " failed: ", c.cudnnGetErrorString(status),
                        " (a part of cuDNN did not load; reinstall nvidia-cudnn-cu13)");
        throw Unsupported{};
    }
    const int category = CUDNN_STATUS_CATEGORY(int(status));
    if (category == CUDNN_STATUS_NOT_SUPPORTED || category == CUDNN_STATUS_BAD_PARAM) throw Unsupported{};
    throw std::runtime_error(detail::str("cuDNN: ", what, " failed: ", c.cudnnGetErrorString(status), " (status ",
                                         int(status), ")"));
}

cudnnDataType_t data_type(DType t)
{
    switch (t) {
        case DType::Float32: return CUDNN_DATA_FLOAT;
        case DType::Float64: return CUDNN_DATA_DOUBLE;
        case DType::Float16: return CUDNN_DATA_HALF;
        case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
        default: throw Unsupported{};
    }
}

int to_int(int64_t v)
{
    if (v > INT32_MAX) throw Unsupported{};
    return int(v);
}

}  // namespace cudnn

long cudnn_version()
{
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    const cudnn::Library* c = cudnn::library();
    return c && !cudnn::broken(cudnn::Part::Conv) ? long(c->cudnnGetVersion()) : 0;
}

// What backends.cudnn.is_available() explains: the convolutions' part (the one every GPU
// user meets); a missing RNN part only sends the recurrent layers to minitorch's kernels.
std::string cudnn_unavailable_reason()
{
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    cudnn::library();
    return cudnn::unavailable(cudnn::Part::Conv);
}

std::string cudnn_rnn_unavailable_reason()
{
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    cudnn::library();
    return cudnn::unavailable(cudnn::Part::Rnn);
}

#endif  // MT_WITH_CUDNN

}  // namespace minitorch::cuda
