// vector_math.cpp — SIMD versions of the transcendental unary ops, from glibc's libmvec.
//
// The scalar kernels call libm once per element (exp, tanh...). glibc also ships vector
// versions of these functions, libmvec, accurate to within 4 ulp like the scalar ones:
// _ZGVdN8v_expf takes 8 floats in an AVX2 register and returns their exps. (The name is
// the vector function ABI's: _ZGV, the instruction set b = SSE / d = AVX2 on x86-64 or
// n = AdvSIMD (NEON) on AArch64, N = unmasked, the lane count, v = one vector argument,
// then the function.) We compared libmvec with SLEEF, Highway, xsimd and Eigen
// (docs/ARCHITECTURE.md): it is already on every glibc system, needs no build step, and
// keeps each function's results close to libm's.
//
// The functions are looked up at run time with dlopen/dlsym instead of being linked, so the
// module still loads where they are missing (older glibc, musl, macOS), and the scalar
// loops run there. The instruction set is chosen once per process:
//   AVX2 and FMA present -> the 'd' functions, 8 floats or 4 doubles per call
//   any other x86-64     -> the 'b' functions (SSE2), 4 floats or 2 doubles
//   AArch64              -> the 'n' functions (NEON), 4 floats or 2 doubles. glibc has them
//                           from 2.38 (exp log sin cos), 2.39 (expm1 log1p log2 tan) and
//                           2.40 (tanh erf); an op whose function is missing, or every op
//                           on an older glibc (no libmvec.so.1 at all), runs the scalar loop.
// MINITORCH_CPU_CAPABILITY=default|sse|avx2|neon overrides the choice (default: the scalar
// loops; a name this CPU lacks gets what it has), so each path can be tested on one machine.
#include "minitorch/vector_math.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

// libmvec exists on x86-64 glibc and on AArch64 glibc >= 2.38; elsewhere the table stays
// empty and the scalar loops run.
#if defined(__x86_64__) && defined(__GLIBC__)
#define MT_LIBMVEC_X86 1
#elif defined(__aarch64__) && defined(__GLIBC__)
#define MT_LIBMVEC_NEON 1
#endif
#if MT_LIBMVEC_X86 || MT_LIBMVEC_NEON
#define MT_HAVE_LIBMVEC 1
#include "vector_loops.h"
#endif

namespace minitorch::cpu {

#if MT_LIBMVEC_X86
// In vector_math_avx2.cpp (compiled with -mavx2 -mfma).
void vector_map_avx2_f32(bool is_sigmoid, void* fn, float* out, const float* in, int64_t n);
void vector_map_avx2_f64(bool is_sigmoid, void* fn, double* out, const double* in, int64_t n);
#endif

namespace {

constexpr size_t kNumUnaryOps = std::size(kUnaryOpInfo);

enum class Isa { Scalar, Sse, Avx2, Neon };

// The ops with a libmvec function, by the libm name of their float version. Sigmoid is
// computed from exp (vector_loops.h).
struct VectorOp {
    UnaryOp op;
    const char* libm;
};
constexpr VectorOp kVectorOps[] = {
    {UnaryOp::Exp, "exp"}, {UnaryOp::Expm1, "expm1"}, {UnaryOp::Log, "log"},  {UnaryOp::Log1p, "log1p"},
    {UnaryOp::Log2, "log2"}, {UnaryOp::Tanh, "tanh"},  {UnaryOp::Sin, "sin"}, {UnaryOp::Cos, "cos"},
    {UnaryOp::Tan, "tan"},  {UnaryOp::Erf, "erf"},     {UnaryOp::Sigmoid, "exp"},
};

struct Table {
    Isa isa = Isa::Scalar;
    void* f32[kNumUnaryOps] = {};  // the vector function for each op, or null
    void* f64[kNumUnaryOps] = {};
};

Isa choose_isa()
{
#if MT_LIBMVEC_X86
    const char* env = std::getenv("MINITORCH_CPU_CAPABILITY");
    const std::string want = env ? env : "";
    if (want == "default") return Isa::Scalar;
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (want == "sse") return Isa::Sse;
    return avx2 ? Isa::Avx2 : Isa::Sse;  // "avx2" on a CPU without it gets SSE
#elif MT_LIBMVEC_NEON
    const char* env = std::getenv("MINITORCH_CPU_CAPABILITY");
    if (env && std::string(env) == "default") return Isa::Scalar;
    return Isa::Neon;  // AdvSIMD is part of every AArch64 CPU
#else
    return Isa::Scalar;
#endif
}

Table load_table()
{
    Table t;
    t.isa = choose_isa();
    if (t.isa == Isa::Scalar) return t;
    void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);  // kept open for the process
    if (!lib) {
        t.isa = Isa::Scalar;
        return t;
    }
    const char* isa = t.isa == Isa::Avx2 ? "d" : t.isa == Isa::Neon ? "n" : "b";
    const int lanes32 = t.isa == Isa::Avx2 ? 8 : 4;  // 16-byte vectors for SSE and NEON
    for (const VectorOp& v : kVectorOps) {
        const std::string f32 = std::string("_ZGV") + isa + "N" + std::to_string(lanes32) + "v_" + v.libm + "f";
        const std::string f64 = std::string("_ZGV") + isa + "N" + std::to_string(lanes32 / 2) + "v_" + v.libm;
        t.f32[int(v.op)] = dlsym(lib, f32.c_str());  // null where this glibc lacks it
        t.f64[int(v.op)] = dlsym(lib, f64.c_str());
    }
    return t;
}

const Table& table()
{
    static const Table t = load_table();
    return t;
}

}  // namespace

template <>
bool has_vector_map<float>(UnaryOp op)
{
    return table().f32[int(op)] != nullptr;
}

template <>
bool has_vector_map<double>(UnaryOp op)
{
    return table().f64[int(op)] != nullptr;
}

#if MT_HAVE_LIBMVEC
template <>
void vector_map<float>(UnaryOp op, float* out, const float* in, int64_t n)
{
    const Table& t = table();
    const bool sig = op == UnaryOp::Sigmoid;
#if MT_LIBMVEC_X86
    if (t.isa == Isa::Avx2) {
        vector_map_avx2_f32(sig, t.f32[int(op)], out, in, n);
        return;
    }
#endif
    vector_loop<float, 4>(sig, t.f32[int(op)], out, in, n);  // SSE2 or NEON
}

template <>
void vector_map<double>(UnaryOp op, double* out, const double* in, int64_t n)
{
    const Table& t = table();
    const bool sig = op == UnaryOp::Sigmoid;
#if MT_LIBMVEC_X86
    if (t.isa == Isa::Avx2) {
        vector_map_avx2_f64(sig, t.f64[int(op)], out, in, n);
        return;
    }
#endif
    vector_loop<double, 2>(sig, t.f64[int(op)], out, in, n);  // SSE2 or NEON
}
#else
template <>
void vector_map<float>(UnaryOp, float*, const float*, int64_t) {}  // never called: the table is empty
template <>
void vector_map<double>(UnaryOp, double*, const double*, int64_t) {}
#endif

bool cpu_has_avx2() { return table().isa == Isa::Avx2; }

const char* cpu_capability()
{
    switch (table().isa) {
        case Isa::Avx2: return "AVX2";
        case Isa::Sse: return "SSE";
        case Isa::Neon: return "NEON";
        default: return "DEFAULT";
    }
}

}  // namespace minitorch::cpu
