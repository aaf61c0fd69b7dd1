// cudnn.cuh — cuDNN as minitorch uses it, shared by cudnn_conv.cu (convolutions) and
// cudnn_rnn.cu (recurrent layers); cudnn.cu defines it.
//
// cuDNN is loaded with dlopen at its first use (libcudnn.so.9: the toolkit's, one on
// LD_LIBRARY_PATH, or the nvidia-cudnn-cu13 wheel's, whose path Python passes in), so
// minitorch builds, imports and runs without it: the callers then run their own kernels.
// Its functions are looked up once, their types taken from cudnn.h (a signature cannot
// drift from the header's). One handle serves the process, on stream 0, the stream every
// minitorch kernel runs on.
#pragma once

#include <array>
#include <mutex>
#include <string>
#include <vector>

#include "common.cuh"

#if !MT_CUDA_EMULATED && __has_include(<cudnn.h>)
#define MT_WITH_CUDNN 1
#include <cudnn.h>
#else
#define MT_WITH_CUDNN 0
#endif

namespace minitorch::cuda::cudnn {

#if MT_WITH_CUDNN

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

// The RNN API's functions (cuDNN's "adv" part), looked up apart: a library without them
// still convolves, and the recurrent layers run minitorch's own kernels.
#define MT_CUDNN_RNN_FUNCTIONS(X)                                                                  \
    X(cudnnSetTensorNdDescriptor)                                                                  \
    X(cudnnCreateDropoutDescriptor) X(cudnnSetDropoutDescriptor) X(cudnnDestroyDropoutDescriptor)  \
    X(cudnnCreateRNNDescriptor) X(cudnnSetRNNDescriptor_v8) X(cudnnDestroyRNNDescriptor)           \
    X(cudnnCreateRNNDataDescriptor) X(cudnnSetRNNDataDescriptor) X(cudnnDestroyRNNDataDescriptor)  \
    X(cudnnGetRNNWeightSpaceSize) X(cudnnGetRNNTempSpaceSizes) X(cudnnGetRNNWeightParams)          \
    X(cudnnRNNForward) X(cudnnRNNBackwardData_v8) X(cudnnRNNBackwardWeights_v8)

// The graph (backend) API's functions: descriptors made, set and finalized by attribute, the
// way cuDNN's own frontend and PyTorch drive it (cudnn_conv_graph.cu). Looked up apart too: without
// them the convolutions take the legacy functions above.
#define MT_CUDNN_GRAPH_FUNCTIONS(X)                                                                  \
    X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor) X(cudnnBackendSetAttribute)     \
    X(cudnnBackendGetAttribute) X(cudnnBackendFinalize) X(cudnnBackendExecute)

struct Library {
    void* lib = nullptr;
    std::string loaded_from;
    bool has_rnn = false;    // every function of MT_CUDNN_RNN_FUNCTIONS was found
    bool has_graph = false;  // every function of MT_CUDNN_GRAPH_FUNCTIONS was found
#define MT_CUDNN_MEMBER(f) decltype(&::f) f = nullptr;
    MT_CUDNN_FUNCTIONS(MT_CUDNN_MEMBER)
    MT_CUDNN_RNN_FUNCTIONS(MT_CUDNN_MEMBER)
    MT_CUDNN_GRAPH_FUNCTIONS(MT_CUDNN_MEMBER)
#undef MT_CUDNN_MEMBER
};

// The parts of cuDNN that can fail on their own (one of its sub-libraries not loading).
enum class Part { Conv = 0, Rnn = 1 };

std::mutex& mutex();                     // guards loading, the handle and the callers' caches
const Library* library();                // loaded once; null, with unavailable() saying why. Hold mutex().
cudnnHandle_t handle(const Library& c);  // made once; null when it cannot be (no GPU). Hold mutex().
bool broken(Part part);                  // loaded, but this part failed at run time
std::string unavailable(Part part);      // why this part cannot be used ("" while it can)

// Thrown for a case cuDNN does not take: the callers run their own kernels instead.
struct Unsupported {};

// Statuses that mean "not this case" (the NOT_SUPPORTED and BAD_PARAM categories: a shape,
// a layout, a dtype) throw Unsupported. A sub-library failing to load (a partial wheel,
// mixed versions) marks `part` broken for good, with unavailable(part) saying why, and
// throws Unsupported. Anything else is a RuntimeError.
void check(const Library& c, cudnnStatus_t status, const char* what, Part part);
// check() for one part, as each caller's file declares it: `constexpr Checker<Part::Rnn> check;`
template <Part P>
struct Checker {
    void operator()(const Library& c, cudnnStatus_t status, const char* what) const { cudnn::check(c, status, what, P); }
};

cudnnDataType_t data_type(DType t);  // the floating dtypes; Unsupported for the others
int to_int(int64_t v);               // cuDNN's sizes are int: Unsupported past INT32_MAX

// conv2d's passes on the graph API (cudnn_conv_graph.cu), used by cudnn_conv.cu.
enum class ConvPass { Forward = 0, BackwardData = 1, BackwardFilter = 2 };
// One pass with the plan kept for its shape: true when it ran; false when this cuDNN has no graph
// API, MINITORCH_CUDNN_API=legacy, or no plan takes the case (the legacy functions are next). The
// pass's result goes to `out`; a, b: x and w (forward), dy and w (backward data), dy and x
// (backward filter). Hold mutex().
bool graph_conv(const Library& c, cudnnHandle_t h, ConvPass pass, const Tensor& out, const Tensor& a,
                const Tensor& b, const Window2d& win, int64_t O);
// The key of both caches of choices for a pass (cudnn_conv.cu's algorithms, cudnn_conv_graph.cu's
// plans): the geometry, the dtype, the pointers' alignments (0 where they do not matter) and every
// switch that changes the choice (benchmark, deterministic, allow_tf32).
using ConvKey = std::array<int64_t, 22>;
ConvKey conv_key(ConvPass pass, const Window2d& w, int64_t O, DType dtype, int64_t align_x = 0, int64_t align_w = 0,
                 int64_t align_y = 0);
// Whether the switches let an engine with these NumericalNotes (bits) run on data of this dtype.
bool conv_engine_allowed(int64_t notes, DType dtype);
// The tests' view of the heuristics for a device described in JSON (no GPU needed): per ranked
// configuration, (engine's global index, plan's workspace bytes or -1, notes as bits, allowed).
std::vector<std::array<int64_t, 4>> graph_plans(const Library& c, ConvPass pass, const Window2d& win, int64_t O,
                                                DType dtype, const std::string& device_json);

#endif  // MT_WITH_CUDNN

}  // namespace minitorch::cuda::cudnn
