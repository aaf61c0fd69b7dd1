// shape.cu — CUDA kernel for "remap" (flip, roll, tril/triu, repeat); what each output
// element reads is remap_source (shape_math.h), shared with the CPU kernel.
#include <cstdint>

#include "common.cuh"
#include "minitorch/shape_math.h"

namespace minitorch::cuda {

namespace {

// The output's shape, passed by value beside the Remap (a kernel cannot read host vectors).
struct OutShape {
    int64_t size[kMaxDims];
};

// Thread mapping: one thread per output element i (grid-stride); consecutive threads
// write consecutive outputs (coalesced), and read wherever remap_source points: flip and
// roll read runs of neighbours too, tril/triu the same element, repeat a repeating row.
// The copy moves bytes: one instance per element size serves every dtype.
template <class Bytes>
__global__ void remap_kernel(Bytes* out, const Bytes* in, Remap map, OutShape shape, int64_t n)
{
    MT_GRID_STRIDE(i, n) {
        const int64_t at = remap_source(map, shape.size, i);
        out[i] = at < 0 ? Bytes(0) : in[at];  // all-zero bytes are 0 in every dtype
    }
}

template <class Bytes>
void launch_remap(const Tensor& out, const Tensor& in, const Remap& map)
{
    OutShape shape{};
    for (int d = 0; d < map.ndim; ++d) shape.size[d] = out->shape[d];
    const int64_t n = out->numel();
    MT_LAUNCH(blocks_for(n), kThreads, 0, 0, remap_kernel<Bytes>)(out->data_as<Bytes>(), in->data_as<Bytes>(), map,
                                                                  shape, n);
    MT_CUDA_CHECK_LAUNCH("remap");
}

}  // namespace

void remap(const Tensor& out, const Tensor& in, const Remap& map)
{
    switch (itemsize(out->dtype)) {
        case 1: return launch_remap<uint8_t>(out, in, map);
        case 2: return launch_remap<uint16_t>(out, in, map);
        case 4: return launch_remap<uint32_t>(out, in, map);
        default: return launch_remap<uint64_t>(out, in, map);
    }
}

}  // namespace minitorch::cuda
