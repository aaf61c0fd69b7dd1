// profiler.h — what minitorch.profiler records: which ops ran, for how long, and the
// kernels each one launched.
//
// While a profile runs (start() ... stop()), the outermost op call on a thread opens an
// Event. Ops it calls and every kernel launched before it returns belong to that event,
// so an event's kernels are exactly the launches one user-level call made:
//
//     Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b)
//     {
//         MT_PROFILE_OP("linear", x, w, b);  // an event "linear"; the matmul inside adds no event
//         ...
//
// A launch outside every op becomes an event of its own, named after the kernel. When no
// profile runs, a scope costs one relaxed atomic load. The Python side
// (python/minitorch/profiler.py) groups and prints; this file only records.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "minitorch/tensor.h"

namespace minitorch::profiler {

// One kernel launch (or one library call such as a cuBLAS GEMM, with grid and block 0).
struct KernelRecord {
    std::string name;
    std::array<uint32_t, 3> grid{}, block{};
    double start_us = 0;     // on a GPU: when it started on the device; emulated: when launched
    double duration_us = 0;  // measured with CUDA events on a GPU; 0 in the emulated build
    int64_t timer_slot = -1; // the DeviceTimer's slot for it, resolved when the profile stops
    // The work of the kernel call it belongs to (kernel_work.h): charged to the call's main
    // launch; its helper launches (packing copies, a second pass) carry 0.
    double flops = 0, bytes = 0;
    uint64_t shared_memory = 0;  // dynamic shared memory bytes of the launch
    int64_t tag = -1;            // set by the Python side for RawKernel launches (its counters)
};

// One op call (or record_function range, or autograd node) and what it launched.
struct Event {
    std::string name;
    uint64_t thread = 0;                    // 1, 2, ... in the order threads first recorded
    double start_us = 0, duration_us = 0;   // CPU wall time, since the profile started
    std::vector<Shape> input_shapes;        // only with Options::record_shapes
    std::vector<KernelRecord> kernels;
    // The work of every kernel call made inside it (kernel_work.h), on any device: the sum
    // of its kernels' on a GPU, and the only record of it on the CPU (which has no launches).
    double flops = 0, bytes = 0;
};

struct Options {
    bool cpu = true;             // op events (off: only launches are recorded, each its own event)
    bool kernels = true;         // kernel launches (the CUDA activity)
    bool record_shapes = false;  // fill Event::input_shapes
};

// How a device backend times its launches (registered by cuda/ on a real GPU; the
// emulated build registers none and durations stay 0). Slots are per launch.
struct DeviceTimer {
    virtual ~DeviceTimer() = default;
    virtual void start() = 0;    // a profile starts: record a reference point
    virtual void finish() = 0;   // it stops: wait until every timed launch has completed
    // Start (since the reference) and duration of a slot's launch, in microseconds.
    virtual void elapsed(int64_t slot, double* start_us, double* duration_us) = 0;
    virtual void reset() = 0;    // the slots may be reused
};
void set_device_timer(DeviceTimer* timer);

namespace detail {
inline std::atomic<bool> g_ops{false};      // a profile runs
inline std::atomic<bool> g_kernels{false};  // ... and records kernel launches
}  // namespace detail

inline bool enabled() { return detail::g_ops.load(std::memory_order_relaxed); }
inline bool kernels_enabled() { return detail::g_kernels.load(std::memory_order_relaxed); }

// Starts a profile (RuntimeError when one is running); stop() ends it and returns its
// events in the order they began, device durations resolved.
void start(const Options& options);
std::vector<Event> stop();

// An op's name: a literal ("sum"), optionally with a suffix ("add" "_" for in-place add_).
struct OpName {
    const char* base;
    const char* suffix = "";
    OpName(const char* b) : base(b) {}  // NOLINT: implicit, so MT_PROFILE_OP("add", ...) reads well
    OpName(const std::string& b) : base(b.c_str()) {}
    OpName(const char* b, const char* s) : base(b), suffix(s) {}
};
inline OpName inplace(const char* name) { return {name, "_"}; }

// Ranges: begin_range returns a token that end_range takes back. Only the outermost range
// of a thread opens an event; with no profile running nothing happens at all.
constexpr int64_t kNotRecording = -2;  // no profile ran at begin_range
constexpr int64_t kNested = -1;        // inside another range (or CPU activity off): no event
int64_t begin_range(OpName name, std::vector<Shape> input_shapes = {});
void end_range(int64_t token);
// Whether begin_range would now open an event that records input shapes (so callers
// collect shapes only then).
bool wants_shapes();

// Records a launch in the thread's open event (or in a new event named after it);
// `timer_slot` as the DeviceTimer gave it, or -1.
void record_kernel(const char* name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                   int64_t timer_slot, uint64_t shared_memory = 0);
// A launch timed by its caller (RawKernel: the host's clock in the emulator, CUDA events on
// a GPU), recorded as record_kernel does, `duration_us` long and ending now, with the
// caller's estimate of its bytes (added to its event's too).
void record_timed_kernel(const std::string& name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                         uint64_t shared_memory, double duration_us, double bytes, int64_t tag);

// ---- FLOPs and bytes: one kernel call (a KernelTable entry, a convolution library call) --
// What one call computes and moves, by the formulas of kernel_work.h (an estimate: bytes
// are the compulsory traffic, every tensor argument read or written once).
struct Work {
    double flops = 0, bytes = 0;
};
// begin_kernel_call returns a token (kNotRecording when no profile runs, kNested inside
// another call); end_kernel_call adds `work` to the thread's open event and to the main
// launch made since begin (a library call, else the launch with the most threads).
int64_t begin_kernel_call();
void end_kernel_call(int64_t token, const Work& work);

// RAII around one kernel call: KernelCall call; if (call.counting()) call.set(work_of(...));
class KernelCall {
public:
    KernelCall() : token_(enabled() ? begin_kernel_call() : kNotRecording) {}
    ~KernelCall()
    {
        if (token_ != kNotRecording) end_kernel_call(token_, work_);
    }
    KernelCall(const KernelCall&) = delete;
    KernelCall& operator=(const KernelCall&) = delete;
    bool counting() const { return token_ >= 0; }  // the outermost call of a running profile
    void set(const Work& work) { work_ = work; }

private:
    int64_t token_;
    Work work_;
};

inline void add_shape(std::vector<Shape>& shapes, const Tensor& t) { shapes.push_back(t ? t->shape : Shape{}); }
inline void add_shape(std::vector<Shape>& shapes, const Tensor* t) { shapes.push_back(t && *t ? (*t)->shape : Shape{}); }
inline void add_shape(std::vector<Shape>& shapes, const std::vector<Tensor>& ts)
{
    for (const Tensor& t : ts) add_shape(shapes, t);
}

// RAII range around one op call: closed on return and when an exception leaves the op.
class OpScope {
public:
    template <class... Inputs>
    explicit OpScope(OpName name, const Inputs&... inputs)
    {
        if (!enabled()) return;
        std::vector<Shape> shapes;
        if (wants_shapes()) (add_shape(shapes, inputs), ...);
        token_ = begin_range(name, std::move(shapes));
    }
    ~OpScope()
    {
        if (token_ != kNotRecording) end_range(token_);
    }
    OpScope(const OpScope&) = delete;
    OpScope& operator=(const OpScope&) = delete;

private:
    int64_t token_ = kNotRecording;
};

}  // namespace minitorch::profiler

// The first line of an op: MT_PROFILE_OP("matmul", a, b); inputs are Tensors, Tensor
// pointers (null allowed) or vectors of Tensors (their shapes are the event's input_shapes).
#define MT_PROFILE_OP(...) ::minitorch::profiler::OpScope mt_profile_op_(__VA_ARGS__)
