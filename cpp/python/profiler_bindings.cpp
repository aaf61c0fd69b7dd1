// profiler_bindings.cpp — the recorder of minitorch.profiler (python/minitorch/profiler.py
// groups, prints and exports what these return).
#include "bindings.h"
#include "minitorch/profiler.h"

namespace minitorch::python {

namespace {

py::tuple dims3(const std::array<uint32_t, 3>& d) { return py::make_tuple(d[0], d[1], d[2]); }

// (name, thread, start_us, duration_us, input_shapes, kernels, flops, bytes); each kernel is
// (name, grid, block, start_us, duration_us, flops, bytes, shared_memory, tag).
py::list events_to_python(const std::vector<profiler::Event>& events)
{
    py::list out;
    for (const profiler::Event& e : events) {
        py::list shapes, kernels;
        for (const Shape& s : e.input_shapes) shapes.append(py::cast(s));
        for (const profiler::KernelRecord& k : e.kernels)
            kernels.append(py::make_tuple(k.name, dims3(k.grid), dims3(k.block), k.start_us, k.duration_us, k.flops,
                                          k.bytes, k.shared_memory, k.tag));
        out.append(py::make_tuple(e.name, e.thread, e.start_us, e.duration_us, shapes, kernels, e.flops, e.bytes));
    }
    return out;
}

}  // namespace

void bind_profiler(py::module_& m)
{
    m.def("_profiler_start", [](bool cpu, bool kernels, bool record_shapes) {
        profiler::start({cpu, kernels, record_shapes});
    });
    m.def("_profiler_stop", [] { return events_to_python(profiler::stop()); });
    m.def("_profiler_enabled", [] { return profiler::enabled(); });
    // record_function and autograd.Function: a range on the calling thread (see profiler.h).
    m.def("_profiler_begin", [](const std::string& name) { return profiler::begin_range(name); });
    m.def("_profiler_end", [](int64_t token) { profiler::end_range(token); });
    // A RawKernel launch, timed by the caller (cuda_kernels/kernel.py); `tag` comes back on
    // its record (the Python side keeps the launch's emulator counters under it).
    m.def("_profiler_record_kernel", [](const std::string& name, std::array<uint32_t, 3> grid,
                                        std::array<uint32_t, 3> block, uint64_t shared_memory, double duration_us,
                                        double bytes, int64_t tag) {
        profiler::record_timed_kernel(name, grid, block, shared_memory, duration_us, bytes, tag);
    });
    m.def("_profiler_kernels_enabled", [] { return profiler::kernels_enabled(); });
}

}  // namespace minitorch::python
