// cudnn_conv.cu — conv2d and its two gradients on cuDNN (minitorch.backends.cudnn); the
// input gradient is also conv_transpose2d's forward. Groups go to cuDNN as a group count.
//
// conv.cpp asks the device's ConvLibrary (kernels.h) first; this file is CUDA's. Each call goes
// to cuDNN's graph API first (cudnn_conv_graph.cu: a plan per shape, the fast way in cuDNN 9); the
// legacy functions below take the calls it cannot (a cuDNN without it, MINITORCH_CUDNN_API=legacy,
// a case no plan takes). A legacy call:
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
// cuDNN is loaded at its first use (cudnn.cuh), so minitorch builds, imports and convolves
// without it: conv.cpp then runs im2col + GEMMs. A case cuDNN does not support
// (CUDNN_STATUS_NOT_SUPPORTED / BAD_PARAM: bfloat16 on an old GPU, sizes past int32) also
// returns false and runs im2col; any other failure is an error.
#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cudnn.cuh"

namespace minitorch::cuda {

std::shared_ptr<Storage> allocate(size_t nbytes, Device device);  // allocator.cu

#if !MT_WITH_CUDNN

std::string cudnn_unavailable_reason();  // cudnn.cu
std::array<int64_t, 4> cudnn_forward_output_shape(const Window2d&, int64_t)
{
    throw std::runtime_error("backends.cudnn: " + cudnn_unavailable_reason());
}
const ConvLibrary* cudnn_conv_library() { return nullptr; }
std::vector<std::array<int64_t, 4>> cudnn_graph_plans(const Window2d&, int64_t, DType, int, const std::string&)
{
    throw std::runtime_error("backends.cudnn: " + cudnn_unavailable_reason());
}

#else

namespace cudnn {

ConvKey conv_key(ConvPass pass, const Window2d& w, int64_t O, DType dtype, int64_t align_x, int64_t align_w,
                 int64_t align_y)
{
    const CudnnSwitches& s = cudnn_switches();
    return {int64_t(pass), w.N, w.C, w.H, w.W, O, w.KH, w.KW, w.stride_h, w.stride_w, w.pad_h, w.pad_w,
            w.dil_h, w.dil_w, w.groups, int64_t(dtype), align_x, align_w, align_y,
            s.benchmark, s.deterministic, tf32_switches().conv};
}

}  // namespace cudnn

namespace {

using cudnn::data_type;
using cudnn::to_int;
using cudnn::Unsupported;
using Cudnn = cudnn::Library;

constexpr cudnn::Checker<cudnn::Part::Conv> check;  // this file's part of cuDNN

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

using Pass = cudnn::ConvPass;

struct Choice {
    int algo = 0;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t workspace = 0;
};

// Per key (conv_key: the math type follows from the dtype and allow_tf32), the usable algorithms,
// best first (empty: cuDNN does not take this case).
std::map<cudnn::ConvKey, std::vector<Choice>> g_choices;

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
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    const Cudnn* c = cudnn::library();
    if (!c || cudnn::broken(cudnn::Part::Conv)) return false;
    const cudnnHandle_t h = cudnn::handle(*c);
    if (!h) return false;
    try {
        if (cudnn::graph_conv(*c, h, P, out, a, b, win, O)) return true;
        const DType dtype = out->dtype;
        Descriptors d(*c, win, O, dtype);
        const cudnn::ConvKey key = cudnn::conv_key(P, win, O, dtype);
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

// cuDNN's own output size for a convolution (descriptors only: no GPU needed), so tests
// can check that minitorch describes padding, stride and dilation to it as it means them.
std::array<int64_t, 4> cudnn_forward_output_shape(const Window2d& win, int64_t O)
{
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    const Cudnn* c = cudnn::library();
    if (!c) throw std::runtime_error("backends.cudnn: " + cudnn::unavailable(cudnn::Part::Conv));
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

std::vector<std::array<int64_t, 4>> cudnn_graph_plans(const Window2d& win, int64_t O, DType dtype, int pass,
                                                      const std::string& device_json)
{
    MT_CHECK(pass >= 0 && pass <= 2, "backends.cudnn: pass must be 0 (forward), 1 (backward data) or 2 (backward "
             "filter), got ", pass);
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    const Cudnn* c = cudnn::library();
    if (!c) throw std::runtime_error("backends.cudnn: " + cudnn::unavailable(cudnn::Part::Conv));
    if (!c->has_graph) throw std::runtime_error("backends.cudnn: " + c->loaded_from + " has no graph API");
    return cudnn::graph_plans(*c, Pass(pass), win, O, dtype, device_json);
}

const ConvLibrary* cudnn_conv_library()
{
    static const ConvLibrary lib{&forward, &backward_input, &backward_weight};
    return &lib;
}

#endif  // MT_WITH_CUDNN

}  // namespace minitorch::cuda
