// aarch64_simd_check.cpp — checks the SIMD math of cpp/src/cpu/vector_math.cpp outside Python.
//
// Built by tools/check_aarch64_simd.sh together with the real cpp/src/cpu/vector_math.cpp
// (and vector_math_avx2.cpp on x86-64), and run there under qemu-aarch64 against two glibc
// versions, and natively on an x86-64 host. Not run by CI.
//
//   aarch64_simd_check EXPECTED      EXPECTED: NEON, SSE, AVX2 or DEFAULT
//
// It checks that
//   - cpu_capability() (the table's instruction set) is EXPECTED;
//   - with EXPECTED = DEFAULT, has_vector_map is false for every op and dtype: the table is
//     empty and the scalar loops run;
//   - otherwise has_vector_map is true for exactly the 11 ops below in float and double (the
//     table holds a function from libmvec for each), and for each of them vector_map, on
//     ~4000 inputs over the op's range plus 0, -0, +-inf, NaN, subnormal, tiny, huge and
//     near-overflow values, is
//       * within 4 ulp of the exact value (libm in a wider type: double for float inputs,
//         long double for double inputs), the bound tests/test_vector_math.py uses, and
//       * where the exact value is not finite (inf, NaN), the same as the scalar result
//         (unary_op of elementwise_math.h, which the scalar loops compute), and
//       * the same for every length 1..17 as the prefix of one long call (the tail is one
//         zero-padded vector);
//     and it prints how far the results are from the scalar libm ones (in ulp) and on how
//     many inputs they differ, which shows the vector functions, not libm, computed them.
// The exit status is 0 when every check holds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include "minitorch/elementwise_math.h"
#include "minitorch/vector_math.h"

using minitorch::UnaryOp;
namespace cpu = minitorch::cpu;

namespace {

constexpr double kMaxUlp = 4;

// The ops vector_math.cpp has SIMD versions of, with a range of ordinary inputs.
struct Case {
    UnaryOp op;
    double lo, hi;  // lo > 0: log-uniform over [lo, hi]
};
constexpr Case kCases[] = {
    {UnaryOp::Exp, -80, 80},       {UnaryOp::Expm1, -20, 20},      {UnaryOp::Log, 1e-30, 1e30},
    {UnaryOp::Log1p, -0.99, 1e6},  {UnaryOp::Log2, 1e-30, 1e30},   {UnaryOp::Tanh, -12, 12},
    {UnaryOp::Sigmoid, -90, 90},   {UnaryOp::Sin, -100, 100},      {UnaryOp::Cos, -100, 100},
    {UnaryOp::Tan, -1.5, 1.5},     {UnaryOp::Erf, -5, 5},
};

bool has_case(UnaryOp op)
{
    for (const Case& c : kCases)
        if (c.op == op) return true;
    return false;
}

template <class T>
const char* type_name()
{
    return std::is_same_v<T, float> ? "float32" : "float64";
}

template <class T>
std::vector<T> inputs(const Case& c)
{
    std::mt19937_64 rng(uint64_t(c.op) + 1);
    std::vector<T> x;
    for (int i = 0; i < 4000; i++) {
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        x.push_back(T(c.lo > 0 ? std::exp(std::log(c.lo) + u * (std::log(c.hi) - std::log(c.lo)))
                               : c.lo + u * (c.hi - c.lo)));
    }
    using lim = std::numeric_limits<T>;
    const T special[] = {T(0), T(-0.0), lim::infinity(), -lim::infinity(), lim::quiet_NaN(),
                         lim::denorm_min(), -lim::denorm_min(), lim::min(), -lim::min(), T(1e-6), T(-1e-6),
                         T(1), T(-1), T(0.5), T(-0.5), T(88.7), T(-88.7), T(103), T(-103), T(709.7), T(-709.7),
                         T(745), T(-745), T(1e30), T(-1e30), lim::max(), lim::lowest()};
    x.insert(x.end(), std::begin(special), std::end(special));
    return x;
}

// The distance between a and b in representable values of T (0 when equal, 1 for neighbours).
template <class T>
double ulp_apart(T a, T b)
{
    using U = std::conditional_t<std::is_same_v<T, float>, int32_t, int64_t>;
    auto ordered = [](T v) {  // maps the floats to integers in the same order
        U i;
        std::memcpy(&i, &v, sizeof v);
        return i < 0 ? std::numeric_limits<U>::min() - i : i;
    };
    const U i = ordered(a), j = ordered(b);  // the difference, exact in unsigned arithmetic
    return double(i > j ? uint64_t(i) - uint64_t(j) : uint64_t(j) - uint64_t(i));
}

// |got - exact| in units of the last place of T at the exact value.
template <class T, class W>
double ulp_error(T got, W exact)
{
    const T r = T(exact);
    T spacing = std::nextafter(std::fabs(r), std::numeric_limits<T>::infinity()) - std::fabs(r);
    if (!std::isfinite(spacing)) spacing = std::fabs(r) - std::nextafter(std::fabs(r), T(0));  // r == max
    return double(std::fabs(W(got) - exact) / W(spacing));
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Checks one op in T; prints one line; returns whether it passed.
template <class T>
bool check_op(const Case& c)
{
    using W = std::conditional_t<std::is_same_v<T, float>, double, long double>;
    const char* name = minitorch::op_name(c.op);
    const std::vector<T> x = inputs<T>(c);
    const int64_t n = int64_t(x.size());
    std::vector<T> got(x.size());
    cpu::vector_map<T>(c.op, got.data(), x.data(), n);

    double worst = 0, worst_scalar = 0, apart = 0;
    int64_t differ = 0, bad = 0, nonfinite = 0;
    for (int64_t i = 0; i < n; i++) {
        const W exact = minitorch::unary_op<W>(c.op, W(x[i]));
        const T scalar = minitorch::unary_op<T>(c.op, x[i]);
        if (!same(got[i], scalar)) differ++;
        const bool ok = std::isfinite(T(exact)) ? ulp_error(got[i], exact) <= kMaxUlp : same(got[i], scalar);
        if (!ok && bad++ < 5)
            std::printf("  %s %s(%.9g) = %.17g, scalar %.17g, exact %.17Lg\n", type_name<T>(), name, double(x[i]),
                        double(got[i]), double(scalar), (long double)exact);
        nonfinite += !std::isfinite(T(exact));
        if (std::isfinite(T(exact))) {
            worst = std::max(worst, ulp_error(got[i], exact));
            worst_scalar = std::max(worst_scalar, ulp_error(scalar, exact));
            apart = std::max(apart, ulp_apart(got[i], scalar));
        }
    }
    int64_t bad_tails = 0;
    for (int64_t len = 1; len <= 17; len++) {
        std::vector<T> part(size_t(len), T(-1));
        cpu::vector_map<T>(c.op, part.data(), x.data(), len);
        if (std::memcmp(part.data(), got.data(), size_t(len) * sizeof(T)) != 0) bad_tails++;
    }
    std::printf("%-8s %s: %lld values (%lld inf/nan), max %.2f ulp from exact (scalar libm %.2f), differs from "
                "scalar on %lld (at most %.0f ulp apart), tails 1..17 %s%s\n",
                name, type_name<T>(), (long long)n, (long long)nonfinite, worst, worst_scalar, (long long)differ,
                apart, bad_tails ? "DIFFER" : "same", bad ? "  FAIL" : "");
    return bad == 0 && bad_tails == 0;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s NEON|SSE|AVX2|DEFAULT\n", argv[0]);
        return 2;
    }
    const std::string expected = argv[1];
#if defined(__GLIBC__)
    std::printf("glibc %s at run time\n", gnu_get_libc_version());
#endif
    const std::string capability = cpu::cpu_capability();
    bool ok = capability == expected;
    std::printf("capability %s (expected %s)%s\n", capability.c_str(), expected.c_str(), ok ? "" : "  FAIL");

    // Which ops have a vector function, for both dtypes: all of kCases, or none on DEFAULT.
    const bool want_simd = expected != "DEFAULT";
    int found = 0, wrong = 0;
    for (int i = 0; i < int(std::size(minitorch::kUnaryOpInfo)); i++) {
        const UnaryOp op = UnaryOp(i);
        const bool want = want_simd && has_case(op);
        const bool has[2] = {cpu::has_vector_map<float>(op), cpu::has_vector_map<double>(op)};
        for (int d = 0; d < 2; d++) {
            found += has[d];
            if (has[d] != want) {
                wrong++;
                std::printf("  %s %s: has_vector_map %d, expected %d\n", d ? "float64" : "float32",
                            minitorch::op_name(op), has[d], want);
            }
        }
    }
    std::printf("vector functions in the table: %d (expected %d)%s\n", found,
                want_simd ? int(2 * std::size(kCases)) : 0, wrong ? "  FAIL" : "");
    ok = ok && wrong == 0;

    if (want_simd && ok) {
        for (const Case& c : kCases) ok = check_op<float>(c) && ok;
        for (const Case& c : kCases) ok = check_op<double>(c) && ok;
    }
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
