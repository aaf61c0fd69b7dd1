// streams.cu — what keeps a GPU fed: streams and events for Python (minitorch.cuda.Stream,
// minitorch.cuda.Event), page-locked host memory (Tensor.pin_memory) and copies to the GPU
// that return before they finish (tensor.to("cuda", non_blocking=True)).
//
// Why pinned memory: the GPU's copy engine reads host memory by DMA, which needs pages
// the OS cannot move. From ordinary (pageable) memory the driver first copies into a
// pinned staging buffer and the host waits; from pinned memory cudaMemcpyAsync only queues
// the copy, and the host can prepare the next batch while it runs.
//
// minitorch's own kernels and copies run on the legacy default stream (stream 0), and
// Streams made here are blocking streams, which that stream synchronizes with: work on
// them is ordered with minitorch's, so no extra waits are needed for correctness.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "common.cuh"
#include "minitorch/ops.h"

namespace minitorch::cuda {

namespace {

void need_device(const char* op)
{
    MT_CHECK_RUNTIME(init(), op, ": no CUDA device is available");
}

// Async copies in flight: each keeps its pinned source alive until its event has passed
// (freeing pinned memory under a running copy would let the copy read freed memory).
struct PendingCopy {
    cudaEvent_t done;
    std::shared_ptr<Storage> source;
};
std::mutex g_pending_mutex;
std::vector<PendingCopy> g_pending;

}  // namespace

void release_finished_copies()
{
    std::lock_guard<std::mutex> lock(g_pending_mutex);
    auto done = [](const PendingCopy& p) {
        if (cudaEventQuery(p.done) == cudaErrorNotReady) {
            cudaGetLastError();  // "not ready" is an answer, not an error to keep
            return false;
        }
        cudaEventDestroy(p.done);
        return true;
    };
    g_pending.erase(std::remove_if(g_pending.begin(), g_pending.end(), done), g_pending.end());
}

namespace {

// A query's answer: true when the work has finished, false while it runs ("not ready" is
// an answer, not an error to keep); any other error raises.
bool finished(cudaError_t r)
{
    if (r == cudaErrorNotReady) {
        cudaGetLastError();
        return false;
    }
    MT_CUDA_CHECK(r);
    return true;
}

}  // namespace

uintptr_t stream_create(int priority)
{
    need_device("Stream");
    cudaStream_t s = nullptr;
    MT_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamDefault, priority));
    return reinterpret_cast<uintptr_t>(s);
}

void stream_destroy(uintptr_t s)
{
    if (s) cudaStreamDestroy(reinterpret_cast<cudaStream_t>(s));  // at exit the runtime may be gone
}

void stream_synchronize(uintptr_t s) { MT_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(s))); }

bool stream_query(uintptr_t s) { return finished(cudaStreamQuery(reinterpret_cast<cudaStream_t>(s))); }

void stream_wait_event(uintptr_t s, uintptr_t e)
{
    MT_CUDA_CHECK(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(s), reinterpret_cast<cudaEvent_t>(e), 0));
}

uintptr_t event_create(bool enable_timing, bool blocking)
{
    need_device("Event");
    unsigned flags = (enable_timing ? 0u : unsigned(cudaEventDisableTiming)) | (blocking ? unsigned(cudaEventBlockingSync) : 0u);
    cudaEvent_t e = nullptr;
    MT_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return reinterpret_cast<uintptr_t>(e);
}

void event_destroy(uintptr_t e)
{
    if (e) cudaEventDestroy(reinterpret_cast<cudaEvent_t>(e));
}

void event_record(uintptr_t e, uintptr_t s)
{
    MT_CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(e), reinterpret_cast<cudaStream_t>(s)));
}

void event_synchronize(uintptr_t e) { MT_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(e))); }

bool event_query(uintptr_t e) { return finished(cudaEventQuery(reinterpret_cast<cudaEvent_t>(e))); }

float event_elapsed_ms(uintptr_t start, uintptr_t end)
{
    float ms = 0;
    MT_CUDA_CHECK(cudaEventElapsedTime(&ms, reinterpret_cast<cudaEvent_t>(start), reinterpret_cast<cudaEvent_t>(end)));
    return ms;
}

Tensor pin_memory(const Tensor& t)
{
    MT_CHECK_RUNTIME(t->device().is_cpu(), "pin_memory: only CPU tensors can be pinned; this one is on ", t->device());
    need_device("pin_memory");
    Tensor src = contiguous(t);
    const size_t bytes = size_t(src->numel()) * itemsize(src->dtype);
    void* p = nullptr;
    if (bytes) MT_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    auto out = std::make_shared<TensorImpl>();
    out->storage = Storage::wrap(p, bytes, Device{}, [](void* q) {
        if (q) cudaFreeHost(q);
    });
    out->storage->pinned = true;
    out->dtype = src->dtype;
    out->shape = src->shape;
    out->strides = contiguous_strides(src->shape);
    if (bytes) std::memcpy(p, src->data(), bytes);
    return out;
}

Tensor copy_to_device_async(const Tensor& src, Device device)
{
    MT_CHECK_RUNTIME(src->device().is_cpu() && src->storage->pinned && src->is_contiguous(),
                     "non_blocking copy: the source must be a contiguous tensor in pinned memory (pin_memory())");
    need_device("to");
    release_finished_copies();
    Tensor dst = empty(src->shape, src->dtype, device);
    const size_t bytes = size_t(src->numel()) * itemsize(src->dtype);
    if (!bytes) return dst;
    MT_CUDA_CHECK(cudaMemcpyAsync(dst->data(), src->data(), bytes, cudaMemcpyHostToDevice, 0));
    cudaEvent_t done = nullptr;
    MT_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    MT_CUDA_CHECK(cudaEventRecord(done, 0));
    std::lock_guard<std::mutex> lock(g_pending_mutex);
    g_pending.push_back({done, src->storage});
    return dst;
}

}  // namespace minitorch::cuda
