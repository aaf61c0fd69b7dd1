// multi_tensor.cuh — one launch for many tensors (PyTorch's multi_tensor_apply): the
// optimizers' "foreach" steps update every parameter of a group in a few launches instead
// of one launch per parameter, so a step's CPU time no longer grows with the number of
// parameters (a GPT-sized model has ~50 of them; each launch costs microseconds of CPU).
//
// How the work is cut: every tensor is split into chunks of kMultiChunk elements, and
// every block of a launch works on one chunk of one tensor. The table that says which
// block works on which chunk, and the tensors' pointers and sizes, travel to the GPU inside
// the kernel's arguments (a struct passed by value, under CUDA's 4 KB limit for kernel
// parameters), so no host-to-device copy is needed. When the table is full (too many
// tensors or too many chunks), it is launched and a new one is started, continuing the
// same tensor where the last launch stopped.
#pragma once
#include <vector>

#include "common.cuh"

namespace minitorch::cuda {

constexpr int kMultiMaxTensors = 24;    // tensors one launch can address
constexpr int kMultiMaxBlocks = 320;    // chunks (= blocks) one launch can work on
constexpr int64_t kMultiChunk = 16384;  // elements of one tensor one block handles (by default)
// A model of a few million parameters is a few hundred chunks: enough blocks for every SM of a
// large GPU (with 65536-element chunks a GPT-sized step had ~40 blocks per launch).
constexpr int kMultiThreads = 512;      // threads per block of the optimizers' steps
constexpr int kMultiIlp = 4;            // elements per thread per step (multi_tensor_elements)

// The chunk size: kMultiChunk, or MINITORCH_MULTI_TENSOR_CHUNK (elements) where it is set,
// which lets the tests fill a table of kMultiMaxBlocks chunks with small tensors.
inline int64_t multi_tensor_chunk_size()
{
    static const int64_t chunk = [] {
        const int64_t v = env_positive("MINITORCH_MULTI_TENSOR_CHUNK");
        return v > 0 ? v : kMultiChunk;
    }();
    return chunk;
}

// Depth = how many lists travel together (Adam: param, grad, exp_avg, exp_avg_sq; RMSprop
// up to five).
template <class T, int Depth>
struct TensorListMeta {
    T* ptr[Depth][kMultiMaxTensors];
    int64_t numel[kMultiMaxTensors];
    unsigned char block_tensor[kMultiMaxBlocks];  // block b works on tensor block_tensor[b] ...
    int block_chunk[kMultiMaxBlocks];             // ... elements [chunk * chunk_size, + chunk_size)
    int64_t chunk_size;
};
static_assert(sizeof(TensorListMeta<double, 5>) < 4000, "kernel arguments must stay under 4 KB");

// Fills TensorListMeta tables from `lists` (Depth lists of the same length, tensor k of
// every list with the same number of elements, all contiguous and non-empty) and calls
// launch(meta, blocks) for each full table and for the last one.
template <class T, int Depth, class Launch>
void multi_tensor_apply(const std::vector<Tensor> (&lists)[Depth], Launch launch)
{
    TensorListMeta<T, Depth> meta{};
    meta.chunk_size = multi_tensor_chunk_size();
    int tensors = 0, blocks = 0;
    const size_t count = lists[0].size();
    for (size_t k = 0; k < count; ++k) {
        const int64_t n = lists[0][k]->numel();
        for (int d = 0; d < Depth; ++d) meta.ptr[d][tensors] = lists[d][k]->template data_as<T>();
        meta.numel[tensors] = n;
        ++tensors;
        const int64_t chunks = (n + meta.chunk_size - 1) / meta.chunk_size;
        for (int64_t c = 0; c < chunks; ++c) {
            meta.block_tensor[blocks] = static_cast<unsigned char>(tensors - 1);
            meta.block_chunk[blocks] = static_cast<int>(c);
            ++blocks;
            const bool last_chunk = c == chunks - 1, last_tensor = k == count - 1;
            const bool table_full = blocks == kMultiMaxBlocks || (last_chunk && tensors == kMultiMaxTensors);
            if (!table_full || (last_chunk && last_tensor)) continue;
            launch(meta, blocks);
            blocks = 0;
            if (last_chunk) {
                tensors = 0;  // the next tensor starts a fresh table
            } else {          // this tensor goes on in the next table, as its tensor 0
                for (int d = 0; d < Depth; ++d) meta.ptr[d][0] = meta.ptr[d][tensors - 1];
                meta.numel[0] = meta.numel[tensors - 1];
                tensors = 1;
            }
        }
    }
    if (blocks) launch(meta, blocks);
}

// The elements of this block's chunk: [begin, end) of tensor `t`.
template <class T, int Depth>
__device__ inline void multi_tensor_chunk(const TensorListMeta<T, Depth>& meta, int& t, int64_t& begin, int64_t& end)
{
    t = meta.block_tensor[blockIdx.x];
    begin = int64_t(meta.block_chunk[blockIdx.x]) * meta.chunk_size;
    end = begin + meta.chunk_size < meta.numel[t] ? begin + meta.chunk_size : meta.numel[t];
}

// Runs a step over the chunk's elements [begin, end) in steps of kMultiIlp * blockDim.x: in a
// step, thread i takes elements begin + i + j * blockDim.x (j < kMultiIlp: neighbouring threads
// on neighbouring elements), first v[j] = e.load(element) for all of them, then
// e.update(element, v[j]) (the optimizers' SgdElements, AdamElements, ... in optim.cu). All of a
// step's reads are issued before any write, so a thread has kMultiIlp elements of every list in
// flight instead of one: a step is memory-bound, and its speed is the bytes in flight per SM.
template <class Elements>
__device__ __forceinline__ void multi_tensor_elements(int64_t begin, int64_t end, const Elements& e)
{
    using V = decltype(e.load(begin));
    const int64_t stride = blockDim.x;
    for (int64_t i0 = begin + threadIdx.x; i0 < end; i0 += kMultiIlp * stride) {
        V v[kMultiIlp];
MT_UNROLL
        for (int j = 0; j < kMultiIlp; ++j)
            if (i0 + j * stride < end) v[j] = e.load(i0 + j * stride);
MT_UNROLL
        for (int j = 0; j < kMultiIlp; ++j)
            if (i0 + j * stride < end) e.update(i0 + j * stride, v[j]);
    }
}

}  // namespace minitorch::cuda
