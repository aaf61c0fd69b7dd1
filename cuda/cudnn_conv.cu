// cudnn_conv.cu — conv2d and its two gradients on cuDNN (minitorch.backends.cudnn); the
// input gradient is also conv_transpose2d's forward. Groups go to cuDNN as a group count.
//
// conv.cpp asks the device's ConvLibrary (kernels.h) first; this file is CUDA's. Each call:
//   1. describes x (N, C, H, W), w (O, C/groups, KH, KW) and y (N, O, OH, OW), all contiguous NCHW,
//      and the convolution: padding, stride, dilation, cross-correlation (what deep-learning
//      frameworks call convolution), sums in float32 (float64 for double tensors);
//   2. picks an algorithm: cuDNN's heuristics, or (backends.cudnn.benchmark) the fastest of
//      them all, timed once per shape; with backends.cudnn.deterministic only algorithms
//      that give the same bits every run. The choice is kept per shape and setting;
//   3. borrows the algorithm's workspace from minitorch's caching allocator and runs it.
// float16 and bfloat16 tensors go in as they are (tensor cores, float32 sums); float32
// may use TF32 tensor cores when backends.cudnn.allow_tf32 says so (PyTorch's default).
//
// cuDNN is loaded with dlopen at its first use (libcudnn.so.9: the toolkit's, one on
// LD_LIBRARY_PATH, or the nvidia-cudnn-cu13 wheel's, whose path Python passes in), so
// minitorch builds, imports and convolves without it: conv.cpp then runs im2col + GEMMs.
// A case cuDNN does not support (CUDNN_STATUS_NOT_SUPPORTED / BAD_PARAM: bfloat16 on an old
// GPU, sizes past int32) also returns false and runs im2col; any other failure is an error.
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common.cuh"
#include "dlopen_first.h"

#if !MT_CUDA_EMULATED && __has_include(<cudnn.h>)
#define MT_WITH_CUDNN 1
#include <cudnn.h>
#else
#define MT_WITH_CUDNN 0
#endif

namespace minitorch::cuda {

std::shared_ptr<Storage> allocate(size_t nbytes, Device device);  // allocator.cu

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
std::array<int64_t, 4> cudnn_forward_output_shape(const Window2d&, int64_t)
{
    throw std::runtime_error("backends.cudnn: " + cudnn_unavailable_reason());
}
const ConvLibrary* cudnn_conv_library() { return nullptr; }

#else

namespace {

// The cuDNN functions minitorch calls, looked up in the library once (their types are
// taken from cudnn.h, so a signature cannot drift from the header's).
struct Cudnn {
    void* lib = nullptr;
    std::string loaded_from;
#define MT_CUDNN_FUNCTIONS(X)                                                                           \
    X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream)        \
    X(cudnnCreateTensorDescriptor) X(cudnnSetTensor4dDescriptor) X(cudnnDestroyTensorDescriptor)        \
    X(cudnnCreateFilterDescriptor) X(cudnnSetFilter4dDescriptor) X(cudnnDestroyFilterDescriptor)        \
    X(cudnnCreateConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor)                              \
    X(cudnnSetConvolutionMathType) X(cudnnSetConvolutionGroupCount) X(cudnnDestroyConvolutionDescriptor) \
    X(cudnnGetConvolution2dForwardOutputDim)                                                            \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnFindConvolutionForwardAlgorithm)                   \
    X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)                               \
    X(cudnnGetConvolutionBackwardDataAlgorithm_v7) X(cudnnFindConvolutionBackwardDataAlgorithm)         \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnConvolutionBackwardData)                     \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) X(cudnnFindConvolutionBackwardFilterAlgorithm)     \
    X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionBackwardFilter)
#define MT_CUDNN_MEMBER(f) decltype(&::f) f = nullptr;
    MT_CUDNN_FUNCTIONS(MT_CUDNN_MEMBER)
#undef MT_CUDNN_MEMBER
};

std::mutex g_mutex;                // guards loading, the handle and the algorithm cache
std::string g_unavailable;         // why cuDNN cannot be used ("" while it can)
bool g_broken = false;             // loaded, but a part of it failed at run time (see check)

// The library, loaded once (null, with g_unavailable saying why, when it cannot be).
const Cudnn* library()
{
    static std::unique_ptr<Cudnn> loaded;
    static bool tried = false;
    if (tried) return loaded.get();
    tried = true;
    auto c = std::make_unique<Cudnn>();
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
    loaded = std::move(c);
    return loaded.get();
}

// Thrown inside this file for a case cuDNN does not take: the caller returns false.
struct Unsupported {};

// Statuses that mean "not this case" (the NOT_SUPPORTED and BAD_PARAM categories: a shape,
// a layout, an unaligned view) fall back to im2col for this call. One of cuDNN's
// sub-libraries failing to load (a partial wheel, mixed versions) falls back for good,
// with unavailable_reason() saying why. Anything else is an error.
void check(const Cudnn& c, cudnnStatus_t status, const char* what)
{
    if (status == CUDNN_STATUS_SUCCESS) return;
    const int category = CUDNN_STATUS_CATEGORY(int(status));
    if (category == CUDNN_STATUS_NOT_SUPPORTED || category == CUDNN_STATUS_BAD_PARAM) throw Unsupported{};
    if (status == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED || status == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH) {
        g_broken = true;
        g_unavailable = detail::str(c.loaded_from, ": ", what, " failed: ", c.cudnnGetErrorString(status),
                                    " (a part of cuDNN did not load; reinstall nvidia-cudnn-cu13)");
        throw Unsupported{};
    }
    throw std::runtime_error(detail::str("cuDNN: ", what, " failed: ", c.cudnnGetErrorString(status), " (status ",
                                         int(status), ")"));
}

// One handle for the process, on the stream every minitorch kernel runs on (stream 0).
// Creating it needs a GPU; when that fails, cuDNN is marked unusable and im2col runs.
cudnnHandle_t handle(const Cudnn& c)
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
    if (v > INT32_MAX) throw Unsupported{};  // cuDNN's 4-D descriptors take int sizes
    return int(v);
}

// The three descriptors and the convolution's, destroyed together (RAII).
struct Descriptors {
    const Cudnn& c;
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;

    Descriptors(const Cudnn& lib, const Window2d& win, int64_t O, DType dtype) : c(lib)
    {
        try {
            describe(win, O, dtype);
        } catch (...) {  // a constructor that throws runs no destructor: free what was made
            destroy();
            throw;
        }
    }
    ~Descriptors() { destroy(); }
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;

private:
    void describe(const Window2d& win, int64_t O, DType dtype)
    {
        const cudnnDataType_t t = data_type(dtype);
        check(c, c.cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
        check(c, c.cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
        check(c, c.cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
        check(c, c.cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
        check(c, c.cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, t, to_int(win.N), to_int(win.C), to_int(win.H),
                                              to_int(win.W)),
              "cudnnSetTensor4dDescriptor(x)");
        // With groups the filter holds C/groups input channels per output channel.
        check(c, c.cudnnSetFilter4dDescriptor(w, t, CUDNN_TENSOR_NCHW, to_int(O), to_int(win.C / win.groups),
                                              to_int(win.KH), to_int(win.KW)),
              "cudnnSetFilter4dDescriptor");
        check(c, c.cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, t, to_int(win.N), to_int(O), to_int(win.OH),
                                              to_int(win.OW)),
              "cudnnSetTensor4dDescriptor(y)");
        // Sums in float32 for every 16- and 32-bit type, float64 for double.
        const cudnnDataType_t sums = dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        check(c, c.cudnnSetConvolution2dDescriptor(conv, to_int(win.pad_h), to_int(win.pad_w), to_int(win.stride_h),
                                                   to_int(win.stride_w), to_int(win.dil_h), to_int(win.dil_w),
                                                   CUDNN_CROSS_CORRELATION, sums),
              "cudnnSetConvolution2dDescriptor");
        check(c, c.cudnnSetConvolutionGroupCount(conv, to_int(win.groups)), "cudnnSetConvolutionGroupCount");
        // Tensor cores: always for 16-bit data; for float32 only while allow_tf32 (TF32 rounds
        // the inputs to 10 mantissa bits); never for float64.
        if (is_16bit(dtype)) math = CUDNN_TENSOR_OP_MATH;
        else if (dtype == DType::Float32 && !tf32_switches().conv) math = CUDNN_FMA_MATH;
        check(c, c.cudnnSetConvolutionMathType(conv, math), "cudnnSetConvolutionMathType");
    }
    void destroy()
    {
        if (conv) c.cudnnDestroyConvolutionDescriptor(conv);
        if (w) c.cudnnDestroyFilterDescriptor(w);
        if (y) c.cudnnDestroyTensorDescriptor(y);
        if (x) c.cudnnDestroyTensorDescriptor(x);
        conv = nullptr, w = nullptr, y = nullptr, x = nullptr;
    }
};

enum class Pass { Forward = 0, BackwardData = 1, BackwardFilter = 2 };

struct Choice {
    int algo = 0;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t workspace = 0;
};

// The algorithm cache's key: the pass, the geometry, the dtype and every switch that
// changes the choice.
using Key = std::array<int64_t, 20>;
Key key_of(Pass pass, const Window2d& w, int64_t O, DType dtype, cudnnMathType_t math)
{
    const CudnnSwitches& s = cudnn_switches();
    return {int64_t(pass), w.N, w.C, w.H, w.W, O, w.KH, w.KW, w.stride_h, w.stride_w, w.pad_h, w.pad_w,
            w.dil_h, w.dil_w, int64_t(dtype), int64_t(math), s.benchmark, s.deterministic, w.groups, 0};
}
// Per key, the usable algorithms, best first (empty: cuDNN does not take this case).
std::map<Key, std::vector<Choice>> g_choices;

// From cuDNN's ranked list (heuristics or timings), the algorithms that ran (or are
// expected to), are deterministic when that is asked for, and keep tensor cores off
// where the descriptor forbids them (perf.mathType may name another math than ours).
template <class Perf>
std::vector<Choice> usable(const Perf* perf, int count, cudnnMathType_t math)
{
    std::vector<Choice> out;
    for (int i = 0; i < count; ++i) {
        const Perf& p = perf[i];
        if (p.status != CUDNN_STATUS_SUCCESS) continue;
        if (cudnn_switches().deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
        if (math == CUDNN_FMA_MATH && p.mathType != CUDNN_FMA_MATH) continue;
        out.push_back(Choice{int(p.algo), p.mathType, p.memory});
    }
    return out;
}

// One pass of the convolution, with its descriptor-level functions gathered, so that the
// choosing and running code below is written once for all three.
template <Pass P>
struct PassOps;

template <>
struct PassOps<Pass::Forward> {
    static constexpr const char* name = "cudnnConvolutionForward";
    static constexpr int kAlgos = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    using Perf = cudnnConvolutionFwdAlgoPerf_t;
    static cudnnStatus_t get(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int n, int* got, Perf* perf)
    {
        return c.cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, n, got, perf);
    }
    static cudnnStatus_t find(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int n, int* got, Perf* perf)
    {
        return c.cudnnFindConvolutionForwardAlgorithm(h, d.x, d.w, d.conv, d.y, n, got, perf);
    }
    static cudnnStatus_t workspace(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int algo, size_t* bytes)
    {
        return c.cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, cudnnConvolutionFwdAlgo_t(algo),
                                                         bytes);
    }
    // out = y; a = x, b = w
    static cudnnStatus_t run(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int algo, const void* alpha,
                             const void* beta, void* ws, size_t ws_bytes, void* out, const void* a, const void* b)
    {
        return c.cudnnConvolutionForward(h, alpha, d.x, a, d.w, b, d.conv, cudnnConvolutionFwdAlgo_t(algo), ws,
                                         ws_bytes, beta, d.y, out);
    }
};

template <>
struct PassOps<Pass::BackwardData> {
    static constexpr const char* name = "cudnnConvolutionBackwardData";
    static constexpr int kAlgos = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
    static cudnnStatus_t get(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int n, int* got, Perf* perf)
    {
        return c.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, n, got, perf);
    }
    static cudnnStatus_t find(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int n, int* got, Perf* perf)
    {
        return c.cudnnFindConvolutionBackwardDataAlgorithm(h, d.w, d.y, d.conv, d.x, n, got, perf);
    }
    static cudnnStatus_t workspace(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int algo, size_t* bytes)
    {
        return c.cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                              cudnnConvolutionBwdDataAlgo_t(algo), bytes);
    }
    // out = dx; a = dy, b = w
    static cudnnStatus_t run(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int algo, const void* alpha,
                             const void* beta, void* ws, size_t ws_bytes, void* out, const void* a, const void* b)
    {
        return c.cudnnConvolutionBackwardData(h, alpha, d.w, b, d.y, a, d.conv, cudnnConvolutionBwdDataAlgo_t(algo),
                                              ws, ws_bytes, beta, d.x, out);
    }
};

template <>
struct PassOps<Pass::BackwardFilter> {
    static constexpr const char* name = "cudnnConvolutionBackwardFilter";
    static constexpr int kAlgos = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
    static cudnnStatus_t get(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int n, int* got, Perf* perf)
    {
        return c.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, n, got, perf);
    }
    static cudnnStatus_t find(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int n, int* got, Perf* perf)
    {
        return c.cudnnFindConvolutionBackwardFilterAlgorithm(h, d.x, d.y, d.conv, d.w, n, got, perf);
    }
    static cudnnStatus_t workspace(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int algo, size_t* bytes)
    {
        return c.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w,
                                                                cudnnConvolutionBwdFilterAlgo_t(algo), bytes);
    }
    // out = dw; a = dy, b = x
    static cudnnStatus_t run(const Cudnn& c, cudnnHandle_t h, const Descriptors& d, int algo, const void* alpha,
                             const void* beta, void* ws, size_t ws_bytes, void* out, const void* a, const void* b)
    {
        return c.cudnnConvolutionBackwardFilter(h, alpha, d.x, b, d.y, a, d.conv,
                                                cudnnConvolutionBwdFilterAlgo_t(algo), ws, ws_bytes, beta, d.w, out);
    }
};

// Runs pass P (out = the pass's result, written whole: beta = 0); false when cuDNN is
// off, missing, or does not take this case.
template <Pass P>
bool run_pass(const Tensor& out, const Tensor& a, const Tensor& b, const Window2d& win, int64_t O)
{
    using Ops = PassOps<P>;
    if (!cudnn_switches().enabled) return false;
    std::lock_guard<std::mutex> lock(g_mutex);
    const Cudnn* c = library();
    if (!c || g_broken) return false;
    const cudnnHandle_t h = handle(*c);
    if (!h) return false;
    try {
        const DType dtype = out->dtype;
        Descriptors d(*c, win, O, dtype);
        const Key key = key_of(P, win, O, dtype, d.math);
        auto found = g_choices.find(key);
        if (found == g_choices.end()) {
            typename Ops::Perf perf[Ops::kAlgos];
            int got = 0;
            if (cudnn_switches().benchmark)  // times every algorithm once (cuDNN allocates its own scratch)
                check(*c, Ops::find(*c, h, d, Ops::kAlgos, &got, perf), "cudnnFind*Algorithm");
            else
                check(*c, Ops::get(*c, h, d, Ops::kAlgos, &got, perf), "cudnnGet*Algorithm_v7");
            std::vector<Choice> choices = usable(perf, got, d.math);
            for (Choice& choice : choices) {  // the workspace depends on the algorithm and its math
                size_t bytes = 0;
                check(*c, c->cudnnSetConvolutionMathType(d.conv, choice.math), "cudnnSetConvolutionMathType");
                check(*c, Ops::workspace(*c, h, d, choice.algo, &bytes), "cudnnGet*WorkspaceSize");
                choice.workspace = std::max(choice.workspace, bytes);
            }
            found = g_choices.emplace(key, std::move(choices)).first;
        }
        // alpha and beta are float for every type but double (cuDNN's rule).
        const float f_one = 1.0f, f_zero = 0.0f;
        const double d_one = 1.0, d_zero = 0.0;
        const bool dbl = dtype == DType::Float64;
        const void* alpha = dbl ? static_cast<const void*>(&d_one) : &f_one;
        const void* beta = dbl ? static_cast<const void*>(&d_zero) : &f_zero;
        // The best algorithm whose workspace fits in memory now (cuDNN's ranking does not
        // look at free memory); when none fits, im2col runs with its bounded buffer.
        for (const Choice& choice : found->second) {
            std::shared_ptr<Storage> ws;
            try {
                // Back to the caching allocator when this returns: the next user of those
                // bytes is queued on the same stream, after cuDNN's kernels.
                if (choice.workspace) ws = allocate(choice.workspace, out->device());
            } catch (const CudaOutOfMemoryError&) {
                continue;
            }
            check(*c, c->cudnnSetConvolutionMathType(d.conv, choice.math), "cudnnSetConvolutionMathType");
            ProfiledLaunch profiled(Ops::name, dim3(0, 0, 0), dim3(0, 0, 0), 0);  // one entry per library call
            check(*c,
                  Ops::run(*c, h, d, choice.algo, alpha, beta, ws ? ws->data : nullptr, choice.workspace, out->data(),
                           a->data(), b->data()),
                  Ops::name);
            return true;
        }
        return false;
    } catch (const Unsupported&) {
        return false;
    }
}

bool forward(const Tensor& y, const Tensor& x, const Tensor& w, const Window2d& win)
{
    return run_pass<Pass::Forward>(y, x, w, win, w->shape[0]);
}
bool backward_input(const Tensor& gx, const Tensor& g, const Tensor& w, const Window2d& win)
{
    return run_pass<Pass::BackwardData>(gx, g, w, win, w->shape[0]);
}
bool backward_weight(const Tensor& gw, const Tensor& g, const Tensor& x, const Window2d& win)
{
    return run_pass<Pass::BackwardFilter>(gw, g, x, win, gw->shape[0]);
}

}  // namespace

long cudnn_version()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    const Cudnn* c = library();
    return c && !g_broken ? long(c->cudnnGetVersion()) : 0;
}

std::string cudnn_unavailable_reason()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    library();
    return g_unavailable;
}

// cuDNN's own output size for a convolution (descriptors only: no GPU needed), so tests
// can check that minitorch describes padding, stride and dilation to it as it means them.
std::array<int64_t, 4> cudnn_forward_output_shape(const Window2d& win, int64_t O)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    const Cudnn* c = library();
    if (!c) throw std::runtime_error("backends.cudnn: " + g_unavailable);
    try {
        Descriptors d(*c, win, O, DType::Float32);
        int n = 0, ch = 0, h = 0, w = 0;
        check(*c, c->cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &n, &ch, &h, &w),
              "cudnnGetConvolution2dForwardOutputDim");
        return {n, ch, h, w};
    } catch (const Unsupported&) {
        throw ValueError("backends.cudnn: cuDNN does not take this convolution");
    }
}

const ConvLibrary* cudnn_conv_library()
{
    static const ConvLibrary lib{&forward, &backward_input, &backward_weight};
    return &lib;
}

#endif  // MT_WITH_CUDNN

}  // namespace minitorch::cuda
