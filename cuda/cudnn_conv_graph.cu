// cudnn_conv_graph.cu — conv2d's three passes through cuDNN's graph (backend) API, the way
// PyTorch drives cuDNN 9, with an execution plan kept per shape.
//
// cuDNN 9 has two ways in. The legacy functions (cudnnConvolutionForward and friends, in
// cudnn_conv.cu) take an algorithm number and work out the rest at every call: on an H200 they
// cost 40-230 us of CPU per call, where PyTorch, on the graph API, spends 13-40. The graph API
// states the work once:
//   1. tensors x (N, C, H, W), w (O, C/groups, KH, KW), y (N, O, OH, OW), each with a unique id,
//      its dtype, sizes, strides and the alignment of its pointer; a convolution descriptor
//      (padding, stride, dilation, cross-correlation, sums in float32, float64 for double);
//   2. one operation (forward, backward-data or backward-filter) in an operation graph;
//   3. cuDNN's heuristics rank engine configurations for that graph on this GPU (mode A, then
//      the fallback list); we drop the ones our switches forbid (NumericalNotes: TF32 tensor
//      cores for float32 while allow_tf32 is off, non-deterministic ones under deterministic,
//      ones that convert inputs down or sum in 16 bits);
//   4. an execution plan is finalized from the first configuration that takes the case (later
//      ones only if it fails or its workspace does not fit; with backends.cudnn.benchmark, the
//      first ten are timed once and run fastest first);
// and each call then only binds pointers (a variant pack: ids -> addresses, workspace) and
// executes the plan. Steps 1-4 run once per key (pass, geometry, dtype, alignment, switches).
//
// Steps 1-4 need no GPU when cuDNN is given a device's properties as JSON (cuDNN >= 9.8): the
// tests build plans for an H100 on a machine without one (_cudnn_graph_plans), so all but the
// execution is tested wherever cuDNN loads. MINITORCH_CUDNN_API=legacy sends every call to the
// legacy functions (to compare the two on a GPU).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cudnn.cuh"

namespace minitorch::cuda {

std::shared_ptr<Storage> allocate(size_t nbytes, Device device);  // allocator.cu

#if MT_WITH_CUDNN

namespace cudnn {

namespace {

constexpr Checker<Part::Conv> check;  // the convolutions' part of cuDNN

// One backend descriptor, destroyed with its owner.
class Desc {
public:
    Desc(const Library& c, cudnnBackendDescriptorType_t type) : c_(&c)
    {
        check(c, c.cudnnBackendCreateDescriptor(type, &d_), "cudnnBackendCreateDescriptor");
    }
    ~Desc()
    {
        if (d_) c_->cudnnBackendDestroyDescriptor(d_);
    }
    Desc(const Desc&) = delete;
    Desc& operator=(const Desc&) = delete;

    cudnnBackendDescriptor_t get() const { return d_; }
    void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values)
    {
        check(*c_, c_->cudnnBackendSetAttribute(d_, name, type, count, values), "cudnnBackendSetAttribute");
    }
    void set(cudnnBackendAttributeName_t name, const Desc& other)
    {
        const cudnnBackendDescriptor_t d = other.get();
        set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
    }
    void set_ints(cudnnBackendAttributeName_t name, std::vector<int64_t> values)
    {
        set(name, CUDNN_TYPE_INT64, int64_t(values.size()), values.data());
    }
    void finalize(const char* what) { check(*c_, c_->cudnnBackendFinalize(d_), what); }
    // Finalize, saying only whether it worked (a plan a configuration cannot make).
    bool try_finalize() { return c_->cudnnBackendFinalize(d_) == CUDNN_STATUS_SUCCESS; }

private:
    const Library* c_;
    cudnnBackendDescriptor_t d_ = nullptr;
};
using DescPtr = std::unique_ptr<Desc>;

// The tensors' unique ids in the graph and in each call's variant pack.
constexpr int64_t kX = 1, kW = 2, kY = 3;

DescPtr tensor(const Library& c, int64_t uid, std::vector<int64_t> dims, cudnnDataType_t type, int64_t align)
{
    std::vector<int64_t> strides(dims.size(), 1);  // contiguous NCHW
    for (size_t i = dims.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
    auto t = std::make_unique<Desc>(c, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    t->set_ints(CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
    t->set_ints(CUDNN_ATTR_TENSOR_STRIDES, strides);
    t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    t->finalize("cudnnBackendFinalize(tensor)");
    return t;
}

// What one call describes: the pass, the geometry, the dtype and the pointers' alignments.
struct Problem {
    ConvPass pass;
    Window2d win;
    int64_t O;
    DType dtype;
    int64_t align_x = 16, align_w = 16, align_y = 16;
};

// One engine configuration of a graph, with its plan once made.
struct Config {
    DescPtr config;          // the engine configuration (declared before plan: destroyed after it)
    int64_t notes = 0;       // its NumericalNotes as bits
    int64_t engine = -1;     // its engine's global index
    DescPtr plan;            // its plan (null: not made yet)
    int64_t workspace = -1;  // the plan's bytes (-1: not tried yet, -2: makes no plan)
};
// The graph of one pass and its engine configurations (what steps 1-3 make), with the plans
// made from them so far. The descriptors stay alive as long as the plans that came from them.
struct Graph {
    // (declared first, destroyed last: the configurations and plans came from these)
    std::vector<DescPtr> parts;    // tensors, convolution, operation, operation graph
    std::vector<Config> configs;   // the usable engine configurations, best first
};

// The device the plans are for: this GPU through the handle (as PyTorch builds them: the handle
// goes to the operation graph and to each plan, and the heuristics ask the graph's device), or a
// device described in JSON (no handle: the description goes to the heuristics and the plans).
struct Target {
    cudnnHandle_t handle = nullptr;
    const Desc* prop = nullptr;
};

// Step 1-2: the operation graph of problem p.
void describe(const Library& c, const Target& t, const Problem& p, Graph& g)
{
    const Window2d& win = p.win;
    const cudnnDataType_t type = data_type(p.dtype);
    const cudnnDataType_t sums = p.dtype == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    g.parts.push_back(tensor(c, kX, {win.N, win.C, win.H, win.W}, type, p.align_x));
    g.parts.push_back(tensor(c, kW, {p.O, win.C / win.groups, win.KH, win.KW}, type, p.align_w));  // groups: C/g
    g.parts.push_back(tensor(c, kY, {win.N, p.O, win.OH, win.OW}, type, p.align_y));
    const Desc &x = *g.parts[0], &w = *g.parts[1], &y = *g.parts[2];

    auto conv = std::make_unique<Desc>(c, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t spatial = 2;
    conv->set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &sums);
    conv->set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    conv->set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
    conv->set_ints(CUDNN_ATTR_CONVOLUTION_DILATIONS, {win.dil_h, win.dil_w});
    conv->set_ints(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {win.stride_h, win.stride_w});
    conv->set_ints(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {win.pad_h, win.pad_w});
    conv->set_ints(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {win.pad_h, win.pad_w});
    conv->finalize("cudnnBackendFinalize(convolution)");

    // alpha = 1, beta = 0: the pass writes its result whole. A double for double data (cuDNN's rule).
    const float f_one = 1.0f, f_zero = 0.0f;
    const double d_one = 1.0, d_zero = 0.0;
    const bool dbl = p.dtype == DType::Float64;
    const cudnnBackendAttributeType_t scalar = dbl ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
    const void* one = dbl ? static_cast<const void*>(&d_one) : &f_one;
    const void* zero = dbl ? static_cast<const void*>(&d_zero) : &f_zero;
    // The pass's operation and where its three tensors, convolution and scalars go.
    struct OpAttrs {
        cudnnBackendDescriptorType_t type;
        cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
    };
    static const OpAttrs kOps[3] = {
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
        {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
    };
    const OpAttrs& a = kOps[int(p.pass)];
    auto op = std::make_unique<Desc>(c, a.type);
    op->set(a.x, x);
    op->set(a.w, w);
    op->set(a.y, y);
    op->set(a.conv, *conv);
    op->set(a.alpha, scalar, 1, one);
    op->set(a.beta, scalar, 1, zero);
    op->finalize("cudnnBackendFinalize(convolution operation)");

    auto graph = std::make_unique<Desc>(c, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (t.handle) graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &t.handle);
    const cudnnBackendDescriptor_t ops = op->get();
    graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ops);
    graph->finalize("cudnnBackendFinalize(operation graph)");
    g.parts.push_back(std::move(conv));
    g.parts.push_back(std::move(op));
    g.parts.push_back(std::move(graph));
}

// The NumericalNotes of an engine configuration, as bits (1 << CUDNN_NUMERICAL_NOTE_...), and its
// engine's global index.
std::pair<int64_t, int64_t> notes_of(const Library& c, const Desc& config)
{
    Desc engine(c, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t e = engine.get();
    int64_t got = 0;
    check(c, c.cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                        &got, &e),
          "cudnnBackendGetAttribute(engine)");
    if (got < 1) throw Unsupported{};
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t count = 0, index = -1;
    check(c, c.cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                        CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes),
          "cudnnBackendGetAttribute(numerical notes)");
    check(c, c.cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &index),
          "cudnnBackendGetAttribute(engine index)");
    // (a newer cuDNN may report more notes than this header knows: only the first ones were written)
    count = std::min<int64_t>(count, CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
    int64_t bits = 0;
    for (int64_t i = 0; i < count; ++i)
        if (int(notes[i]) >= 0 && int(notes[i]) < 63) bits |= int64_t(1) << int(notes[i]);
    return {bits, index};
}

}  // namespace

// Whether the switches let a configuration with these NumericalNotes run on data of this dtype.
bool conv_engine_allowed(int64_t notes, DType dtype)
{
    auto has = [&](cudnnBackendNumericalNote_t n) { return (notes >> int(n)) & 1; };
    if (cudnn_switches().deterministic && has(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)) return false;
    // TF32 (float32 inputs rounded to 10 mantissa bits) only while allow_tf32 says so
    if (dtype == DType::Float32 && !tf32_switches().conv && has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) return false;
    // inputs converted to a narrower type, or sums kept in 16 bits: not what conv2d promises
    return !has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) && !has(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION);
}

namespace {

// Step 3: cuDNN's ranked configurations for g's operation graph on the target device (mode A,
// then the fallback list); `all` keeps the ones the switches forbid too.
void rank(const Library& c, const Target& t, Graph& g, DType dtype, bool all)
{
    for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
        Desc heur(c, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *g.parts.back());
        heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
        if (t.prop) heur.set(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, *t.prop);
        if (c.cudnnBackendFinalize(heur.get()) != CUDNN_STATUS_SUCCESS) continue;  // no list of this kind
        int64_t n = 0;
        check(c, c.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                            &n, nullptr),
              "cudnnBackendGetAttribute(heuristics' count)");
        std::vector<DescPtr> made;
        std::vector<cudnnBackendDescriptor_t> raw;
        for (int64_t i = 0; i < n; ++i) {
            made.push_back(std::make_unique<Desc>(c, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
            raw.push_back(made.back()->get());
        }
        int64_t got = 0;
        check(c, c.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n,
                                            &got, raw.data()),
              "cudnnBackendGetAttribute(heuristics' results)");
        for (int64_t i = 0; i < got && i < n; ++i) {
            const std::pair<int64_t, int64_t> found = notes_of(c, *made[i]);
            const int64_t notes = found.first, engine = found.second;
            if (!all && !conv_engine_allowed(notes, dtype)) continue;
            const bool ranked = std::any_of(g.configs.begin(), g.configs.end(),
                                            [&](const Config& k) { return k.engine == engine; });
            if (mode == CUDNN_HEUR_MODE_FALLBACK && ranked) continue;  // mode A has it already
            g.configs.push_back(Config{std::move(made[i]), notes, engine});
        }
    }
}

// Step 4 for configuration i (once): its plan and workspace; false when it makes none (never throws
// for that: a runtime_error only if cuDNN cannot make a descriptor at all).
bool plan(const Library& c, const Target& t, Graph& g, size_t i)
{
    Config& k = g.configs[i];
    if (k.plan) return true;
    if (k.workspace == -2) return false;  // tried before
    k.workspace = -2;                     // until it works
    DescPtr plan;
    try {
        plan = std::make_unique<Desc>(c, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *k.config);
        if (t.handle) plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &t.handle);
        else plan->set(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, *t.prop);
    } catch (const Unsupported&) {
        return false;
    }
    int64_t bytes = -1, got = 0;
    if (!plan->try_finalize() ||
        c.cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &got,
                                   &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes < 0)
        return false;
    k.plan = std::move(plan);
    k.workspace = bytes;
    return true;
}

// A device described in JSON (tests, no GPU needed). Null when this cuDNN cannot take the
// description (before 9.8, or a field missing).
DescPtr device_properties(const Library& c, const std::string& json)
{
    auto prop = std::make_unique<Desc>(c, CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
    prop->set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, int64_t(json.size()), json.data());
    return prop->try_finalize() ? std::move(prop) : nullptr;
}

// Per key, the graph and its plans (no configurations: the legacy functions take that key).
// Never destroyed: destroying plans while the process exits, with CUDA going away, can crash
// (PyTorch leaks its plan cache for that reason), and the handle is kept the same way.
std::map<ConvKey, std::unique_ptr<Graph>>& graphs()
{
    static auto* g = new std::map<ConvKey, std::unique_ptr<Graph>>;
    return *g;
}

// Runs plan i of g with these pointers. A status that says "not this case" throws Unsupported
// (the caller tries the next plan), any other an error; `quiet` (timing candidates): false for any
// failure, unless it left the GPU in an error state.
bool execute(const Library& c, cudnnHandle_t h, Graph& g, size_t i, void* x, void* w, void* y, void* ws,
             bool quiet = false)
{
    Desc pack(c, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const int64_t uids[3] = {kX, kW, kY};
    void* pointers[3] = {x, w, y};
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers);
    pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    pack.finalize("cudnnBackendFinalize(variant pack)");
    const cudnnStatus_t st = c.cudnnBackendExecute(h, g.configs[i].plan->get(), pack.get());
    if (st == CUDNN_STATUS_SUCCESS) return true;
    if (quiet) {
        MT_CUDA_CHECK(cudaGetLastError());
        return false;
    }
    check(c, st, "cudnnBackendExecute");
    return false;
}

// A CUDA event for timing, destroyed with its owner.
struct Event {
    cudaEvent_t e = nullptr;
    Event() { MT_CUDA_CHECK(cudaEventCreate(&e)); }
    ~Event() { cudaEventDestroy(e); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
};

// backends.cudnn.benchmark: the first kBenchmarkLimit configurations that make a plan are timed
// once (after one run to warm it up) on this call's own tensors, and kept fastest first (the rest
// dropped). PyTorch's backends.cudnn.benchmark_limit is 10 too: every plan costs a build.
constexpr size_t kBenchmarkLimit = 10;
void time_plans(const Library& c, const Target& t, Graph& g, void* x, void* w, void* y, Device device)
{
    std::vector<std::pair<float, size_t>> timed;
    Event start, stop;
    for (size_t i = 0, tried = 0; i < g.configs.size() && tried < kBenchmarkLimit; ++i) {
        if (!plan(c, t, g, i)) continue;
        ++tried;
        std::shared_ptr<Storage> ws;
        try {
            if (g.configs[i].workspace > 0) ws = allocate(size_t(g.configs[i].workspace), device);
        } catch (const CudaOutOfMemoryError&) {
            continue;
        }
        void* wsp = ws ? ws->data : nullptr;
        try {
            if (!execute(c, t.handle, g, i, x, w, y, wsp, true)) continue;  // warm-up
            MT_CUDA_CHECK(cudaEventRecord(start.e, 0));
            if (!execute(c, t.handle, g, i, x, w, y, wsp, true)) continue;
            MT_CUDA_CHECK(cudaEventRecord(stop.e, 0));
            MT_CUDA_CHECK(cudaEventSynchronize(stop.e));
        } catch (const Unsupported&) {  // the variant pack declined
            continue;
        }
        float ms = 0;
        MT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e, stop.e));
        timed.emplace_back(ms, i);
    }
    std::stable_sort(timed.begin(), timed.end());
    std::vector<Config> fastest;
    for (const auto& [ms, i] : timed) fastest.push_back(std::move(g.configs[i]));
    // Only the winner keeps its plan (a plan may hold compiled GPU code); a runner-up rebuilds
    // its own if the winner ever declines.
    for (size_t j = 1; j < fastest.size(); ++j) fastest[j].plan.reset();
    g.configs = std::move(fastest);  // the untimed ones go (g.parts, which they came from, stay)
}

const char* profiler_name(ConvPass pass)
{
    switch (pass) {
        case ConvPass::Forward: return "cudnnBackendExecute(ConvolutionForward)";
        case ConvPass::BackwardData: return "cudnnBackendExecute(ConvolutionBackwardData)";
        case ConvPass::BackwardFilter: return "cudnnBackendExecute(ConvolutionBackwardFilter)";
    }
    return "cudnnBackendExecute";
}

// MINITORCH_CUDNN_API=legacy: every call to the legacy functions. Read at every call.
bool graph_api_wanted()
{
    return !env_is("MINITORCH_CUDNN_API", "legacy");
}

}  // namespace

// The caller holds mutex() and has checked the switches, the library and the handle.
bool graph_conv(const Library& c, cudnnHandle_t h, ConvPass pass, const Tensor& out, const Tensor& a,
                const Tensor& b, const Window2d& win, int64_t O)
{
    if (!c.has_graph || !graph_api_wanted()) return false;
    // Past 2^31 elements a tensor is left to the legacy path's own checks (PyTorch splits the
    // batch there); the engines' 32-bit index math is not promised for it.
    if (out->numel() > INT32_MAX || a->numel() > INT32_MAX || b->numel() > INT32_MAX) return false;
    const Target t{h, nullptr};
    // The pass's three tensors by role: x, w, y (see cudnn_conv.cu's run_pass for a and b).
    void *x = nullptr, *w = nullptr, *y = nullptr;
    switch (pass) {
        case ConvPass::Forward: x = a->data(), w = b->data(), y = out->data(); break;
        case ConvPass::BackwardData: x = out->data(), w = b->data(), y = a->data(); break;
        case ConvPass::BackwardFilter: x = b->data(), w = out->data(), y = a->data(); break;
    }
    // Up to 16 bytes: what cuDNN picks its vector loads by.
    Problem p{pass, win, O, out->dtype, alignment_of(x, 16), alignment_of(w, 16), alignment_of(y, 16)};
    const ConvKey key = conv_key(p.pass, p.win, p.O, p.dtype, p.align_x, p.align_w, p.align_y);
    auto found = graphs().find(key);
    if (found == graphs().end()) {
        auto g = std::make_unique<Graph>();
        try {
            describe(c, t, p, *g);
            rank(c, t, *g, p.dtype, false);
        } catch (const Unsupported&) {
            g = std::make_unique<Graph>();  // remembered as "no plan": the legacy functions take this key
        } catch (const CudaOutOfMemoryError&) {
            throw;
        } catch (const std::runtime_error&) {
            g = std::make_unique<Graph>();  // cuDNN failed to describe or rank it: the legacy functions try
        }
        // Outside the fallback above: a CUDA error while timing (a fault in a kernel) reaches Python.
        if (cudnn_switches().benchmark) time_plans(c, t, *g, x, w, y, out->device());
        found = graphs().emplace(key, std::move(g)).first;
    }
    Graph& g = *found->second;
    // The best configuration that makes a plan and whose workspace fits in memory now.
    for (size_t i = 0; i < g.configs.size(); ++i) {
        if (!plan(c, t, g, i)) continue;
        std::shared_ptr<Storage> ws;
        try {
            // Back to the caching allocator when this returns: the next user of those bytes is
            // queued on the same stream, after cuDNN's kernels.
            if (g.configs[i].workspace > 0) ws = allocate(size_t(g.configs[i].workspace), out->device());
        } catch (const CudaOutOfMemoryError&) {
            continue;
        }
        ProfiledLaunch profiled(profiler_name(pass), dim3(0, 0, 0), dim3(0, 0, 0), 0);  // one entry per call
        try {
            if (execute(c, h, g, i, x, w, y, ws ? ws->data : nullptr)) return true;
        } catch (const Unsupported&) {
        }
        g.configs[i].workspace = -2;  // declined at run time: not again
        g.configs[i].plan.reset();
    }
    return false;
}

// For the tests: the configurations cuDNN's heuristics rank for a pass on the device that
// `device_json` describes, each as (engine's global index, the plan's workspace in bytes or -1
// when no plan could be made, NumericalNotes as bits, whether the switches allow it). No GPU
// needed; every plan is finalized.
std::vector<std::array<int64_t, 4>> graph_plans(const Library& c, ConvPass pass, const Window2d& win, int64_t O,
                                                DType dtype, const std::string& device_json)
{
    DescPtr prop;  // (declared before g: g's plans go first)
    Graph g;
    std::vector<std::array<int64_t, 4>> out;
    try {
        prop = device_properties(c, device_json);
        if (!prop) throw Unsupported{};
        const Target t{nullptr, prop.get()};
        describe(c, t, Problem{pass, win, O, dtype}, g);
        rank(c, t, g, dtype, true);
        for (size_t i = 0; i < g.configs.size(); ++i) {
            const bool made = plan(c, t, g, i);
            const Config& k = g.configs[i];
            out.push_back({k.engine, made ? k.workspace : -1, k.notes, conv_engine_allowed(k.notes, dtype)});
        }
    } catch (const Unsupported&) {
        throw ValueError("backends.cudnn: cuDNN's graph API did not take this convolution or device description "
                         "(device descriptions need cuDNN >= 9.8)");
    }
    return out;
}

}  // namespace cudnn

#endif  // MT_WITH_CUDNN

}  // namespace minitorch::cuda
