// index_check.cpp — the CPU's check_index kernel (cuda/index_check.cu mirrors it): every index
// in range, negative ones wrapped into out, or an IndexError naming the first bad one and
// where it is. On the CPU the check is immediate; a GPU records the fault and raises at the
// next synchronization.
#include "kernels_cpu.h"
#include "minitorch/index_math.h"

namespace minitorch::cpu {

void check_index(const Tensor& out, const Tensor& index, const IndexCheck& check)
{
    const int64_t n = index->numel();
    const int64_t* in = index->data_as<int64_t>();
    int64_t* o = out->data_as<int64_t>();
    for (int64_t i = 0; i < n; ++i)
        if (!resolve_index(in[i], check, o[i])) throw IndexError(index_error_message(check, in[i], i));
}

}  // namespace minitorch::cpu
