// index_check.cu — checking index tensors on the GPU without stopping it.
//
// Checking on the host would mean copying the indices back and waiting for the GPU
// on every index_select and every cross_entropy. Instead a kernel checks them where
// they are: the first bad value goes into a small record in device memory, and the
// host looks at that record only when it waits for the GPU anyway (a device-to-host
// copy such as .item(), or cuda.synchronize()). So the IndexError arrives a little
// later than on the CPU, but it does arrive, and the process stays usable.
//
// Thread mapping: one thread per index, grid-stride loop.
#include <string>
#include <vector>

#include "common.cuh"

namespace minitorch::cuda {

namespace {

struct IndexFault {
    int flag;  // 0 = no error; the first thread to swap in 1 fills the rest
    int op;    // position of the op's name in op_names()
    int is_target;
    int pad;
    long long value, position, size;
};

struct CheckArgs {
    int64_t size, ignore;
    bool wrap_negative, is_target;
    int op;
};

__global__ void check_index_kernel(const int64_t* in, int64_t* out, int64_t n, CheckArgs a, IndexFault* fault)
{
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t v = in[i];
        if (a.is_target && v == a.ignore) {
            out[i] = v;
        } else if (v < (a.wrap_negative ? -a.size : 0) || v >= a.size) {
            if (atomicCAS(&fault->flag, 0, 1) == 0) {
                fault->op = a.op;
                fault->is_target = a.is_target;
                fault->value = v;
                fault->position = i;
                fault->size = a.size;
            }
            out[i] = 0;  // a safe row for whatever kernel reads these indices next
        } else {
            out[i] = v < 0 ? v + a.size : v;
        }
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
        if (std::string(names[i]) == op) return int(i);
    names.push_back(op);
    return int(names.size() - 1);
}

}  // namespace

void check_index(const Tensor& out, const Tensor& index, const IndexCheck& check)
{
    FaultState& s = state();
    if (!s.record) {
        MT_CUDA_CHECK(cudaMalloc(&s.record, sizeof(IndexFault)));
        MT_CUDA_CHECK(cudaMemset(s.record, 0, sizeof(IndexFault)));
    }
    const int64_t n = index->numel();
    CheckArgs a{check.size, check.ignore, check.wrap_negative, check.is_target, op_id(check.op)};
    MT_LAUNCH(blocks_for(n), kThreads, 0, 0, check_index_kernel)(index->data_as<int64_t>(), out->data_as<int64_t>(),
                                                                n, a, s.record);
    MT_CUDA_CHECK_LAUNCH("check_index");
    s.pending = true;
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
    throw IndexError(index_error_message(c, f.value, f.position) +
                     " (found by a CUDA kernel; reported at the next synchronization)");
}

}  // namespace minitorch::cuda
