// cudnn_rnn.cu — one recurrent layer (nn.LSTM, nn.GRU, nn.RNN; both directions when
// bidirectional) on cuDNN's RNN API, as PyTorch runs them on a GPU. This file is CUDA's
// RnnLibrary (kernels.h); ops/rnn.cpp's cudnn_rnn_layer asks it first.
//
// Why: minitorch's own layers (lstm_layer, gru_layer, rnn_layer in ops/rnn.cpp) launch a
// GEMM and a cell kernel per time step each way. cuDNN plans the whole recurrence: the
// input GEMMs of every step at once, the recurrent GEMMs with the gate arithmetic fused
// after them, and both directions of a bidirectional layer side by side.
//
// A call:
//   1. describes the layer (cudnnSetRNNDescriptor_v8: cell, biases, directions, sizes,
//      dtype, math), the sequences (time-major and unpacked: every sequence T steps long)
//      and the states (D, N, H);
//   2. copies the parameters into cuDNN's weight space. Its layout is cuDNN's: per
//      direction ("pseudo-layer") and per gate, a matrix (H rows, row-major) and a bias,
//      whose addresses cudnnGetRNNWeightParams gives. cuDNN keeps a direction's input
//      matrices next to each other in PyTorch's gate order (LSTM i, f, g, o; GRU r, z, n),
//      and likewise its recurrent matrices and its biases (PyTorch relies on it too), so
//      each parameter is ONE copy; a layout found to be otherwise is declined;
//   3. runs cudnnRNNForward. Training keeps the weight space, the reserve space (what
//      cuDNN saves of the activations) and the sequence lengths for the backward, which
//      runs cudnnRNNBackwardData_v8 (dx, dhx, dcx), then cudnnRNNBackwardWeights_v8 into a
//      zeroed buffer of the weight space's layout (it adds), whose slices are the weights'
//      gradients: views, no copy.
// Float32 uses TF32 tensor cores only while backends.cudnn.allow_tf32 (the switch PyTorch's
// RNNs follow too); float16 runs on tensor cores with float32 sums. A case cuDNN does not
// take (NOT_SUPPORTED / BAD_PARAM: a dtype, a size past int32) returns null, and the layer
// runs ops/rnn.cpp's kernels.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cudnn.cuh"
#include "minitorch/ops.h"

namespace minitorch::cuda {

std::shared_ptr<Storage> allocate(size_t nbytes, Device device);  // allocator.cu

#if !MT_WITH_CUDNN

const RnnLibrary* cudnn_rnn_library() { return nullptr; }

#else

namespace {

using cudnn::to_int;
using cudnn::Unsupported;
using Cudnn = cudnn::Library;

constexpr cudnn::Checker<cudnn::Part::Rnn> check;  // this file's part of cuDNN

// Where the parameters lie in the weight space, per RnnShape without T and N (cached).
struct Layout {
    size_t bytes = 0;              // cudnnGetRNNWeightSpaceSize
    std::vector<int64_t> offsets;  // per direction w_ih, w_hh (, b_ih, b_hh): element offsets
};
using LayoutKey = std::array<int64_t, 7>;  // the RnnShape without T, N; the TF32 switch
std::map<LayoutKey, Layout> g_layouts;

// A parameter's place in a buffer of the weight space's layout (the weights or their gradients).
Tensor slot(const Tensor& space, const Shape& shape, int64_t offset)
{
    return as_strided(space, shape, contiguous_strides(shape), offset);
}

// What a forward keeps for its backward.
struct Saved : RnnSaved {
    Tensor weights;                 // the weight space, 1-D of the layer's dtype
    Tensor seq_lengths;             // (N,) int32 on the device, every entry T
    std::vector<Shape> shapes;      // each parameter's shape, in forward's order
    std::vector<int64_t> offsets;   // and its place in the weight space
    std::shared_ptr<Storage> reserve;
    size_t reserve_bytes = 0;
};

// The descriptors of one call, destroyed together (RAII).
struct Descriptors {
    const Cudnn& c;
    cudnnDropoutDescriptor_t dropout = nullptr;
    cudnnRNNDescriptor_t rnn = nullptr;
    cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
    cudnnTensorDescriptor_t h = nullptr;               // hx, hy and (LSTM) cx, cy: (D, N, H)
    cudnnTensorDescriptor_t m = nullptr, b = nullptr;  // filled by cudnnGetRNNWeightParams

    Descriptors(const Cudnn& lib, cudnnHandle_t handle, const RnnShape& s) : c(lib)
    {
        try {
            describe(handle, s);
        } catch (...) {  // a constructor that throws runs no destructor: free what was made
            destroy();
            throw;
        }
    }
    ~Descriptors() { destroy(); }
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;

private:
    void describe(cudnnHandle_t handle, const RnnShape& s)
    {
        const cudnnDataType_t t = cudnn::data_type(s.dtype);
        const int T = to_int(s.T), N = to_int(s.N), I = to_int(s.I), H = to_int(s.H), D = int(s.directions());
        to_int(s.T * s.N * std::max(s.I, D * s.H));  // cuDNN indexes a sequence batch with int
        check(c, c.cudnnCreateDropoutDescriptor(&dropout), "cudnnCreateDropoutDescriptor");
        // No dropout inside one layer (nn's dropout runs between layers), so no random states.
        check(c, c.cudnnSetDropoutDescriptor(dropout, handle, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
        check(c, c.cudnnCreateRNNDescriptor(&rnn), "cudnnCreateRNNDescriptor");
        const cudnnDataType_t sums = s.dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        cudnnMathType_t math = CUDNN_DEFAULT_MATH;  // float32: TF32 allowed; float64: plain
        if (is_16bit(s.dtype)) math = CUDNN_TENSOR_OP_MATH;
        else if (s.dtype == DType::Float32 && !tf32_switches().conv) math = CUDNN_FMA_MATH;
        // projSize = hiddenSize: no LSTM projection. Padded I/O: the unpacked layouts need it.
        check(c,
              c.cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, cudnnRNNMode_t(int(s.mode)),
                                         s.bias ? CUDNN_RNN_DOUBLE_BIAS : CUDNN_RNN_NO_BIAS,
                                         s.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                         CUDNN_LINEAR_INPUT, t, sums, math, I, H, H, 1, dropout,
                                         CUDNN_RNN_PADDED_IO_ENABLED),
              "cudnnSetRNNDescriptor_v8");
        const std::vector<int> lengths(size_t(N), T);
        check(c, c.cudnnCreateRNNDataDescriptor(&x), "cudnnCreateRNNDataDescriptor");
        check(c, c.cudnnSetRNNDataDescriptor(x, t, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, I, lengths.data(),
                                             nullptr),
              "cudnnSetRNNDataDescriptor(x)");
        check(c, c.cudnnCreateRNNDataDescriptor(&y), "cudnnCreateRNNDataDescriptor");
        check(c, c.cudnnSetRNNDataDescriptor(y, t, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, N, D * H,
                                             lengths.data(), nullptr),
              "cudnnSetRNNDataDescriptor(y)");
        const int dims[3] = {D, N, H}, strides[3] = {to_int(s.N * s.H), H, 1};
        check(c, c.cudnnCreateTensorDescriptor(&h), "cudnnCreateTensorDescriptor");
        check(c, c.cudnnSetTensorNdDescriptor(h, t, 3, dims, strides), "cudnnSetTensorNdDescriptor(h)");
        check(c, c.cudnnCreateTensorDescriptor(&m), "cudnnCreateTensorDescriptor");
        check(c, c.cudnnCreateTensorDescriptor(&b), "cudnnCreateTensorDescriptor");
    }
    void destroy()
    {
        if (b) c.cudnnDestroyTensorDescriptor(b);
        if (m) c.cudnnDestroyTensorDescriptor(m);
        if (h) c.cudnnDestroyTensorDescriptor(h);
        if (y) c.cudnnDestroyRNNDataDescriptor(y);
        if (x) c.cudnnDestroyRNNDataDescriptor(x);
        if (rnn) c.cudnnDestroyRNNDescriptor(rnn);
        if (dropout) c.cudnnDestroyDropoutDescriptor(dropout);
        b = m = h = nullptr, y = x = nullptr, rnn = nullptr, dropout = nullptr;
    }
};

// The weight space's size and where each parameter lies in it: asked of cuDNN once per
// layer geometry, with a scratch weight space (the addresses are what it returns; only
// their offsets from the start are kept). Declines a layout whose gates are not adjacent.
const Layout& layout_of(const Cudnn& c, cudnnHandle_t handle, const Descriptors& d, const RnnShape& s, Device dev)
{
    const LayoutKey key{int64_t(s.mode), s.bidirectional, s.bias, s.I, s.H, int64_t(s.dtype), tf32_switches().conv};
    if (auto found = g_layouts.find(key); found != g_layouts.end()) return found->second;
    Layout layout;
    check(c, c.cudnnGetRNNWeightSpaceSize(handle, d.rnn, &layout.bytes), "cudnnGetRNNWeightSpaceSize");
    if (layout.bytes % itemsize(s.dtype)) throw Unsupported{};  // kept as a tensor of the layer's dtype
    const std::shared_ptr<Storage> scratch = allocate(std::max<size_t>(layout.bytes, 1), dev);
    const char* base = static_cast<const char*>(scratch->data);
    const int64_t item = int64_t(itemsize(s.dtype)), G = s.gates(), H = s.H;
    const int64_t elements = int64_t(layout.bytes) / item;
    // Element offset of a returned address, checked to lie inside the weight space.
    auto offset_of = [&](const void* p, int64_t count) {
        const int64_t bytes = static_cast<const char*>(p) - base;
        if (!p || bytes % item != 0 || bytes < 0 || bytes / item + count > elements) throw Unsupported{};
        return bytes / item;
    };
    for (int p = 0; p < int(s.directions()); ++p) {
        int64_t mat[2] = {0, 0}, bias[2] = {0, 0};  // [input, recurrent]: the first gate's offsets
        for (int part = 0; part < 2; ++part) {
            const int64_t cols = part == 0 ? s.I : H;
            for (int64_t g = 0; g < G; ++g) {
                void* m_addr = nullptr;
                void* b_addr = nullptr;
                // Without biases (CUDNN_RNN_NO_BIAS) only the matrix is asked for.
                check(c,
                      c.cudnnGetRNNWeightParams(handle, d.rnn, p, layout.bytes, scratch->data, int(part * G + g), d.m,
                                                &m_addr, s.bias ? d.b : nullptr, s.bias ? &b_addr : nullptr),
                      "cudnnGetRNNWeightParams");
                const int64_t mo = offset_of(m_addr, H * cols);
                if (g == 0) mat[part] = mo;
                else if (mo != mat[part] + g * H * cols) throw Unsupported{};  // gates not adjacent
                if (s.bias) {
                    const int64_t bo = offset_of(b_addr, H);
                    if (g == 0) bias[part] = bo;
                    else if (bo != bias[part] + g * H) throw Unsupported{};
                }
            }
        }
        layout.offsets.insert(layout.offsets.end(), {mat[0], mat[1]});
        if (s.bias) layout.offsets.insert(layout.offsets.end(), {bias[0], bias[1]});
    }
    return g_layouts.emplace(key, std::move(layout)).first->second;
}

std::shared_ptr<RnnSaved> forward(const RnnShape& s, const Tensor& y, const Tensor& hy, const Tensor& cy,
                                  const Tensor& x, const Tensor& hx, const Tensor& cx,
                                  const std::vector<Tensor>& weights, bool training)
{
    if (!cudnn_switches().enabled) return nullptr;
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    const Cudnn* c = cudnn::library();
    if (!c || !c->has_rnn || cudnn::broken(cudnn::Part::Rnn)) return nullptr;
    const cudnnHandle_t h = cudnn::handle(*c);
    if (!h) return nullptr;
    // cuDNN takes bfloat16 recurrent layers from 9.13, on sm_80 on (as PyTorch checks too);
    // elsewhere the layer runs minitorch's kernels.
    if (s.dtype == DType::BFloat16 && (c->cudnnGetVersion() < 91300 || compute_capability() < 80)) return nullptr;
    const Device dev = x->device();
    try {
        Descriptors d(*c, h, s);
        const Layout& layout = layout_of(*c, h, d, s, dev);
        auto saved = std::make_shared<Saved>();
        // Zeroed, as PyTorch's: any padding cuDNN leaves between the blocks holds no garbage.
        saved->weights = zeros({int64_t(layout.bytes / itemsize(s.dtype))}, s.dtype, dev);
        saved->offsets = layout.offsets;
        for (size_t k = 0; k < weights.size(); ++k) {  // one copy per parameter (see the top)
            const Shape& shape = weights[k]->shape;
            saved->shapes.push_back(shape);
            copy_(slot(saved->weights, shape, layout.offsets[k]), weights[k]);
        }
        saved->seq_lengths = full({s.N}, Scalar(int64_t(s.T)), DType::Int32, dev);
        const cudnnForwardMode_t mode = training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
        size_t work_bytes = 0, reserve_bytes = 0;
        check(*c, c->cudnnGetRNNTempSpaceSizes(h, d.rnn, mode, d.x, &work_bytes, &reserve_bytes),
              "cudnnGetRNNTempSpaceSizes");
        // Back to the caching allocator when this returns: the next user of those bytes is
        // queued on the same stream, after cuDNN's kernels.
        const std::shared_ptr<Storage> work = work_bytes ? allocate(work_bytes, dev) : nullptr;
        if (reserve_bytes) saved->reserve = allocate(reserve_bytes, dev);
        saved->reserve_bytes = reserve_bytes;
        const bool lstm = s.mode == RnnMode::Lstm;
        ProfiledLaunch profiled("cudnnRNNForward", dim3(0, 0, 0), dim3(0, 0, 0), 0);  // one entry per library call
        check(*c,
              c->cudnnRNNForward(h, d.rnn, mode, saved->seq_lengths->data_as<int32_t>(), d.x, x->data(), d.y, y->data(),
                                 d.h, hx->data(), hy->data(), d.h, lstm ? cx->data() : nullptr,
                                 lstm ? cy->data() : nullptr, layout.bytes, saved->weights->data(), work_bytes,
                                 work ? work->data : nullptr, reserve_bytes,
                                 saved->reserve ? saved->reserve->data : nullptr),
              "cudnnRNNForward");
        return saved;
    } catch (const Unsupported&) {
        return nullptr;
    }
}

std::vector<Tensor> backward(const RnnShape& s, RnnSaved& base, const Tensor& dx, const Tensor& dhx, const Tensor& dcx,
                             const Tensor& x, const Tensor& hx, const Tensor& cx, const Tensor& y, const Tensor& dy,
                             const Tensor& dhy, const Tensor& dcy, bool weights_needed)
{
    Saved& saved = static_cast<Saved&>(base);
    std::lock_guard<std::mutex> lock(cudnn::mutex());
    const Cudnn* c = cudnn::library();
    const cudnnHandle_t h = c ? cudnn::handle(*c) : nullptr;
    if (!h || !c->has_rnn || cudnn::broken(cudnn::Part::Rnn))
        throw std::runtime_error("cudnn_rnn_layer: backward: cuDNN is no longer usable: " +
                                 cudnn::unavailable(cudnn::Part::Rnn));
    const Device dev = x->device();
    try {
        Descriptors d(*c, h, s);
        size_t work_bytes = 0, reserve_bytes = 0;
        check(*c, c->cudnnGetRNNTempSpaceSizes(h, d.rnn, CUDNN_FWD_MODE_TRAINING, d.x, &work_bytes, &reserve_bytes),
              "cudnnGetRNNTempSpaceSizes");
        MT_CHECK(reserve_bytes == saved.reserve_bytes, "cudnn_rnn_layer: backward: cuDNN's reserve space changed size (",
                 saved.reserve_bytes, " bytes at the forward, ", reserve_bytes, " now)");
        const std::shared_ptr<Storage> work = work_bytes ? allocate(work_bytes, dev) : nullptr;
        void* reserve = saved.reserve ? saved.reserve->data : nullptr;
        const size_t weight_bytes = size_t(saved.weights->numel()) * itemsize(s.dtype);
        const bool lstm = s.mode == RnnMode::Lstm;
        const int32_t* lengths = saved.seq_lengths->data_as<int32_t>();
        {
            ProfiledLaunch profiled("cudnnRNNBackwardData_v8", dim3(0, 0, 0), dim3(0, 0, 0), 0);
            check(*c,
                  c->cudnnRNNBackwardData_v8(h, d.rnn, lengths, d.y, y->data(), dy->data(), d.x, dx->data(), d.h,
                                             hx->data(), dhy->data(), dhx->data(), d.h, lstm ? cx->data() : nullptr,
                                             lstm ? dcy->data() : nullptr, lstm ? dcx->data() : nullptr,
                                             weight_bytes, saved.weights->data(), work_bytes,
                                             work ? work->data : nullptr, reserve_bytes, reserve),
                  "cudnnRNNBackwardData_v8");
        }
        if (!weights_needed) return {};
        const Tensor dw = zeros(saved.weights->shape, s.dtype, dev);  // BackwardWeights adds into it
        {
            ProfiledLaunch profiled("cudnnRNNBackwardWeights_v8", dim3(0, 0, 0), dim3(0, 0, 0), 0);
            check(*c,
                  c->cudnnRNNBackwardWeights_v8(h, d.rnn, CUDNN_WGRAD_MODE_ADD, lengths, d.x, x->data(), d.h,
                                                hx->data(), d.y, y->data(), weight_bytes, dw->data(), work_bytes,
                                                work ? work->data : nullptr, reserve_bytes, reserve),
                  "cudnnRNNBackwardWeights_v8");
        }
        std::vector<Tensor> grads;
        for (size_t k = 0; k < saved.shapes.size(); ++k) {
            grads.push_back(slot(dw, saved.shapes[k], saved.offsets[k]));
        }
        return grads;
    } catch (const Unsupported&) {
        throw std::runtime_error("cudnn_rnn_layer: backward: cuDNN declined the backward of a layer whose forward it ran");
    }
}

}  // namespace

const RnnLibrary* cudnn_rnn_library()
{
    static const RnnLibrary lib{&forward, &backward};
    return &lib;
}

#endif  // MT_WITH_CUDNN

}  // namespace minitorch::cuda
