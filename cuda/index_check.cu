// index_check.cu — checking index tensors on the GPU without stopping it.
//
// Checking on the host would mean copying the indices back and waiting for the GPU
// on every index_select and every cross_entropy. Instead a kernel checks them where
// they are: the first bad value goes into a small record in device memory, and the
// host looks at that record only when it waits for the GPU anyway (a device-to-host
// copy such as .item(), or cuda.synchronize()). So the IndexError arrives a little
// later than on the CPU, but it does arrive, and the process stays usable. Kernels that
// read indices anyway (the class losses in softmax.cu) check their own and report to
// the same record (index_faults), without a launch of their own.
//
// Thread mapping: one thread per index, grid-stride loop.
#include <cstring>
#include <vector>

#include "common.cuh"

namespace minitorch::cuda {

namespace {

// `c.op` is a host pointer the kernel never reads; the record names the op by number.
__global__ void check_index_kernel(const int64_t* in, int64_t* out, int64_t n, IndexCheck c, IndexFaults faults)
{
    MT_GRID_STRIDE(i, n) {
        if (resolve_index(in[i], c, out[i])) continue;
        faults.report(c, in[i], i);
        out[i] = 0;  // a safe row for whatever kernel reads these indices next
    }
}

// The record lives for the whole process; `pending` says a check ran since the last look.
struct FaultState {
    IndexFault* record = nullptr;
    bool pending = false;
    std::vector<const char*> op_names;  // string literals, so the pointers stay valid
};

FaultState& state()
{
    static FaultState s;
    return s;
}

int op_id(const char* op)
{
    auto& names = state().op_names;
    for (size_t i = 0; i < names.size(); ++i)
        if (std::strcmp(names[i], op) == 0) return int(i);
    names.push_back(op);
    return int(names.size() - 1);
}

}  // namespace

IndexFaults index_faults(const char* op)
{
    FaultState& s = state();
    if (!s.record) {
        MT_CUDA_CHECK(cudaMalloc(&s.record, sizeof(IndexFault)));
        MT_CUDA_CHECK(cudaMemset(s.record, 0, sizeof(IndexFault)));
    }
    s.pending = true;
    return IndexFaults{s.record, op_id(op)};
}

void check_index(const Tensor& out, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel();
    MT_LAUNCH(blocks_for(n), kThreads, 0, 0, check_index_kernel)(index->data_as<int64_t>(), out->data_as<int64_t>(),
                                                                n, check, index_faults(check.op));
    MT_CUDA_CHECK_LAUNCH("check_index");
}

void report_index_errors()
{
    FaultState& s = state();
    if (!s.pending) return;
    s.pending = false;
    IndexFault f{};
    MT_CUDA_CHECK(cudaMemcpy(&f, s.record, sizeof f, cudaMemcpyDeviceToHost));
    if (!f.flag) return;
    MT_CUDA_CHECK(cudaMemset(s.record, 0, sizeof(IndexFault)));  // reported once, then forgotten
    IndexCheck c{s.op_names[size_t(f.op)], f.size, false, f.is_target != 0};
    c.dim = f.dim;
    throw IndexError(index_error_message(c, f.value, f.position) +
                     " (found by a CUDA kernel; reported at the next synchronization)");
}

}  // namespace minitorch::cuda
