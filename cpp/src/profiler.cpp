// profiler.cpp — the event list behind minitorch.profiler (see profiler.h).
//
// One mutex guards the running profile's events; each thread keeps its own nesting depth
// and the index of its open event. A session number tells a thread that the event it
// opened belongs to a profile that has stopped since (its index means nothing now).
#include "minitorch/profiler.h"

#include <cctype>
#include <chrono>
#include <mutex>

#include "minitorch/error.h"

namespace minitorch::profiler {

namespace {

using Clock = std::chrono::steady_clock;

std::mutex g_mutex;  // guards everything below
bool g_running = false;
Options g_options;
uint64_t g_session = 0;  // incremented when a profile stops
Clock::time_point g_origin;
std::vector<Event> g_events;
DeviceTimer* g_timer = nullptr;

std::atomic<uint64_t> g_next_thread{1};

struct ThreadState {
    int depth = 0;           // open ranges on this thread (only while profiling)
    int64_t event = -1;      // index of its open event in g_events, or -1
    uint64_t session = 0;    // the profile that index belongs to
    uint64_t id = 0;         // assigned on first use
    // The kernel call in progress (begin_kernel_call): nesting depth, the profile it began
    // in, its open event (or -1) and how many kernels that event had, or, without an open
    // event, how many events there were (its launches then make events of their own).
    int call_depth = 0;
    uint64_t call_session = 0;
    int64_t call_event = -1;
    size_t call_first = 0;
};
thread_local ThreadState t_state;

uint64_t thread_id()
{
    if (!t_state.id) t_state.id = g_next_thread.fetch_add(1);
    return t_state.id;
}

double now_us() { return std::chrono::duration<double, std::micro>(Clock::now() - g_origin).count(); }

// The thread's open event of the running profile, or null (call with g_mutex held).
Event* open_event()
{
    const ThreadState& t = t_state;
    if (t.event < 0 || t.session != g_session || size_t(t.event) >= g_events.size()) return nullptr;
    return &g_events[size_t(t.event)];
}

// "copy_kernel<D, S>" -> "copy_kernel<D,S>": the launch's kernel expression as one word.
std::string kernel_name(const char* text)
{
    std::string s;
    for (const char* p = text; *p; ++p)
        if (!std::isspace(static_cast<unsigned char>(*p))) s += *p;
    return s;
}

}  // namespace

void set_device_timer(DeviceTimer* timer)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    g_timer = timer;
}

void start(const Options& options)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    MT_CHECK_RUNTIME(!g_running, "profiler: a profile is already running (profiles cannot be nested)");
    g_options = options;
    g_events.clear();
    g_origin = Clock::now();
    if (g_timer && options.kernels) g_timer->start();
    g_running = true;
    detail::g_kernels.store(options.kernels);
    detail::g_ops.store(true);
}

std::vector<Event> stop()
{
    std::vector<Event> events;
    bool timed = false;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        MT_CHECK_RUNTIME(g_running, "profiler: no profile is running");
        detail::g_ops.store(false);
        detail::g_kernels.store(false);
        g_running = false;
        ++g_session;
        events.swap(g_events);
        timed = g_timer && g_options.kernels;
    }
    if (timed) {
        // Device times exist once the device has run everything that was launched.
        g_timer->finish();
        for (Event& e : events)
            for (KernelRecord& k : e.kernels)
                if (k.timer_slot >= 0) g_timer->elapsed(k.timer_slot, &k.start_us, &k.duration_us);
        g_timer->reset();
    }
    return events;
}

bool wants_shapes()
{
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_running && g_options.cpu && g_options.record_shapes && t_state.depth == 0;
}

int64_t begin_range(OpName name, std::vector<Shape> input_shapes)
{
    if (!enabled()) return kNotRecording;
    ThreadState& t = t_state;
    if (t.depth++ > 0) return kNested;
    Event e;
    e.name = std::string(name.base) + name.suffix;
    e.thread = thread_id();
    e.input_shapes = std::move(input_shapes);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_running || !g_options.cpu) return kNested;  // (stopped since the check above)
    e.start_us = now_us();
    t.event = int64_t(g_events.size());
    t.session = g_session;
    g_events.push_back(std::move(e));
    return t.event;
}

void end_range(int64_t token)
{
    if (token == kNotRecording) return;
    ThreadState& t = t_state;
    --t.depth;
    if (token < 0) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (Event* e = open_event(); e && t.event == token) e->duration_us = now_us() - e->start_us;
    t.event = -1;
}

namespace {

// Adds a launch to the thread's open event, or makes it an event of its own (call with
// g_mutex held, while a profile records kernels).
void add_kernel(KernelRecord k)
{
    if (Event* e = open_event()) {
        e->kernels.push_back(std::move(k));
        return;
    }
    // Launched outside every op (or with the CPU activity off): an event of its own.
    Event e;
    e.name = k.name;
    e.thread = thread_id();
    e.start_us = k.start_us;
    e.kernels.push_back(std::move(k));
    g_events.push_back(std::move(e));
}

// The launch a kernel call's work is charged to: a library call (cuBLAS, cuDNN: grid 0) if
// there is one, else the launch with the most threads (the first of equals). Null for none.
KernelRecord* main_launch(const std::vector<KernelRecord*>& launches)
{
    KernelRecord* best = nullptr;
    double best_threads = -1;
    for (KernelRecord* k : launches) {
        const double blocks = double(k->grid[0]) * k->grid[1] * k->grid[2];
        const double threads = blocks == 0 ? 1e300 : blocks * k->block[0] * k->block[1] * k->block[2];
        if (threads > best_threads) best = k, best_threads = threads;
    }
    return best;
}

}  // namespace

void record_kernel(const char* name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block, int64_t timer_slot,
                   uint64_t shared_memory)
{
    KernelRecord k{kernel_name(name), grid, block, 0.0, 0.0, timer_slot};
    k.shared_memory = shared_memory;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_running || !g_options.kernels) return;
    k.start_us = now_us();
    add_kernel(std::move(k));
}

void record_timed_kernel(const std::string& name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                         uint64_t shared_memory, double duration_us, double bytes, int64_t tag)
{
    KernelRecord k{name, grid, block, 0.0, duration_us, -1};
    k.shared_memory = shared_memory;
    k.bytes = bytes;
    k.tag = tag;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_running || !g_options.kernels) return;
    k.start_us = now_us() - duration_us;
    if (Event* e = open_event()) e->bytes += bytes;
    add_kernel(std::move(k));
    if (!open_event()) g_events.back().bytes += bytes;  // its own event
}

int64_t begin_kernel_call()
{
    ThreadState& t = t_state;
    if (t.call_depth++ > 0) return kNested;  // a kernel calling another: the outer one counts
    std::lock_guard<std::mutex> lock(g_mutex);
    t.call_session = g_session;
    const Event* e = open_event();
    t.call_event = e ? t.event : -1;
    t.call_first = e ? e->kernels.size() : g_events.size();
    return 0;
}

void end_kernel_call(int64_t token, const Work& work)
{
    ThreadState& t = t_state;
    --t.call_depth;
    if (token < 0) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_running || t.call_session != g_session) return;  // the profile stopped meanwhile
    std::vector<KernelRecord*> launches;
    Event* owner = nullptr;  // the event the work is added to
    if (t.call_event >= 0 && size_t(t.call_event) < g_events.size()) {
        owner = &g_events[size_t(t.call_event)];
        for (size_t i = t.call_first; i < owner->kernels.size(); ++i) launches.push_back(&owner->kernels[i]);
    } else {
        // No open event: each launch of this thread made an event of its own.
        const uint64_t me = thread_id();
        for (size_t i = t.call_first; i < g_events.size(); ++i)
            if (g_events[i].thread == me && g_events[i].kernels.size() == 1) launches.push_back(&g_events[i].kernels[0]);
    }
    KernelRecord* main = main_launch(launches);
    if (main) {
        main->flops += work.flops;
        main->bytes += work.bytes;
        if (!owner)  // the main launch's own event
            for (size_t i = t.call_first; i < g_events.size(); ++i)
                if (!g_events[i].kernels.empty() && &g_events[i].kernels[0] == main) owner = &g_events[i];
    }
    if (owner) {
        owner->flops += work.flops;
        owner->bytes += work.bytes;
    }
}

}  // namespace minitorch::profiler
