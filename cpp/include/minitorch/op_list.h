// op_list.h — every elementwise op, written once.
//
// Each row below is the whole description of one op. The rows are "X-macros": a file
// that needs some column defines X to pick it out, expands the list, and undefines X.
// From these rows come
//   - the enums UnaryOp / BinaryOp and the names ("sin", "SinBackward0")   (ops.h)
//   - the dtype rule each op follows                               (cpp/src/ops/elementwise.cpp)
//   - what backward saves, and the gradient formula itself         (cpp/src/ops/elementwise.cpp)
//   - the Python methods and minitorch.<name> functions            (cpp/python/*.cpp)
//   - the table of derivatives in docs/derivatives.md             (docs/gen_derivatives.py)
// What the op computes on one element lives in elementwise_math.h, shared by the CPU
// and CUDA kernels. A new elementwise op is one row here plus its math there.
//
// Columns of a unary row  X(Enum, name, result, saves, gradient):
//   result   the dtype rule (see OpResult below)
//   saves    what the gradient formula reads: kSavesNone, kSavesX (the input), kSavesY (the output)
//   gradient an expression in g (the gradient of the output), x (the input) and y (the
//            output), written with ordinary tensor ops; `not_differentiable` for ops whose
//            output is bool or integer (such outputs never require grad).
// A binary row  X(Enum, name, result, saves_for_a, saves_for_b, gradient_a, gradient_b)
// is the same with inputs a and b: saves_for_a is what gradient_a reads (saved only when
// a requires grad), likewise for b; kSavesA | kSavesB | kSavesY combine.
// A name starting with '_' is internal (as PyTorch's aten ops): _C and Tensor have it,
// the minitorch namespace does not. _threshold_backward(g, y) = g where y > 0, else 0 is
// ReLU's backward in one kernel (PyTorch's threshold_backward); likewise
// _tanh_backward(g, y) = g (1 - y^2) and _sigmoid_backward(g, y) = g y (1 - y), written
// with the output y (PyTorch's tanh_backward, sigmoid_backward).
//
// The fused activations (_gelu, _gelu_tanh, _silu, _mish, _hardswish, _hardsigmoid; what
// nn.functional calls) are one kernel forward and one kernel backward: each gradient is a
// binary row `<act>_backward(g, x)` = g * act'(x), whose math is in elementwise_math.h
// (act_derivative). Its own gradient, for double backward, is written with ordinary
// tensor ops (the *_second_derivative helpers of cpp/src/ops/elementwise.cpp):
//   gelu(x)        = x Phi(x)                         gelu'   = Phi(x) + x phi(x)
//                    (Phi, phi: the standard normal CDF and density)
//   gelu_tanh(x)   = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)
//                                                     gelu_tanh' = (1 + t)/2 + x/2 (1 - t^2) u',  t = tanh(u)
//   silu(x)        = x s,  s = sigmoid(x)             silu'   = s (1 + x (1 - s))
//   mish(x)        = x T,  T = tanh(softplus(x))      mish'   = T + x s (1 - T^2)
//   hardswish(x)   = 0 (x <= -3), x (x+3)/6, x (x >= 3)      hardswish'   = 0, x/3 + 1/2, 1
//   hardsigmoid(x) = 0 (x <= -3), x/6 + 1/2, 1 (x >= 3)      hardsigmoid' = 0, 1/6, 0
//   softplus(x)    = log(1 + e^x), x above 20          softplus' = sigmoid(x), 1 above 20
// The activations with a parameter are binary rows whose b is the parameter (a number, or
// PReLU's learned weight): _leaky_relu(x, slope) = x (x > 0), slope x; _elu(x, alpha) = x
// (x > 0), alpha (e^x - 1). Backward is one kernel, <act>_backward(g, x, b) = g * <act>'(x)
// (a `ternary` kernel; with create_graph, the two ops g * _<act>_derivative(x, b)); their
// gradient for b (PReLU's weight) is g min(x, 0), and for ELU's alpha g (e^min(x, 0) - 1).
// The losses of one element, each with its derivative row as the activations have (backward
// <loss>_backward(g, a, b) = g * <loss>_derivative(a, b), one ternary kernel; with
// create_graph the two ops): _binary_cross_entropy(p, y) = -(y log p + (1 - y) log(1 - p)),
// each log clamped at -100 (PyTorch's); _binary_cross_entropy_with_logits(x, y) = max(x, 0)
// - x y + log(1 + e^-|x|), whose derivative sigmoid(x) - y is exact at x = 0 (a composition
// of relu and abs has a kink there); _huber_loss(d, delta) = d^2 / 2 for |d| <= delta, else
// delta (|d| - delta / 2), derivative d clamped to [-delta, delta] (smooth_l1 is huber / beta);
// _mse_loss(x, y) = (x - y)^2, derivative 2 (x - y); _l1_loss(x, y) = |x - y|, derivative
// sign(x - y) (mse_loss and l1_loss before their reduction).
#pragma once

// clang-format off
#define MT_UNARY_OPS(X)                                                                           \
    X(Neg,        neg,         NoBool,    kSavesNone, -g)                                         \
    X(Abs,        abs,         Same,      kSavesX,    g * sign(x))                                \
    X(Sign,       sign,        Same,      kSavesNone, zeros_like(g))                              \
    X(Relu,       relu,        NoBool,    kSavesY,    threshold_backward(g, y))                   \
    X(Exp,        exp,         Float,     kSavesY,    g * y)                                      \
    X(Expm1,      expm1,       Float,     kSavesY,    g * (y + 1))                                \
    X(Log,        log,         Float,     kSavesX,    g / x)                                      \
    X(Log1p,      log1p,       Float,     kSavesX,    g / (x + 1))                                \
    X(Log2,       log2,        Float,     kSavesX,    g / (x * 0.6931471805599453))               \
    X(Sqrt,       sqrt,        Float,     kSavesY,    g / (y * 2))                                \
    X(Rsqrt,      rsqrt,       Float,     kSavesY,    g * y * y * y * -0.5)                       \
    X(Sigmoid,    sigmoid,     Float,     kSavesY,    sigmoid_backward(g, y))                     \
    X(Tanh,       tanh,        Float,     kSavesY,    tanh_backward(g, y))                        \
    X(Sin,        sin,         Float,     kSavesX,    g * cos(x))                                 \
    X(Cos,        cos,         Float,     kSavesX,    -g * sin(x))                                \
    X(Tan,        tan,         Float,     kSavesY,    g * (1 + y * y))                            \
    X(Sinh,       sinh,        Float,     kSavesX,    g * (exp(x) + exp(-x)) * 0.5)               \
    X(Cosh,       cosh,        Float,     kSavesX,    g * (exp(x) - exp(-x)) * 0.5)               \
    X(Asin,       asin,        Float,     kSavesX,    g / sqrt(1 - x * x))                        \
    X(Acos,       acos,        Float,     kSavesX,    -g / sqrt(1 - x * x))                       \
    X(Atan,       atan,        Float,     kSavesX,    g / (x * x + 1))                            \
    X(Asinh,      asinh,       Float,     kSavesX,    g / sqrt(x * x + 1))                        \
    X(Acosh,      acosh,       Float,     kSavesX,    g / sqrt(x * x - 1))                        \
    X(Atanh,      atanh,       Float,     kSavesX,    g / (1 - x * x))                            \
    X(Erf,        erf,         Float,     kSavesX,    g * kTwoOverSqrtPi * exp(-x * x))           \
    X(Erfc,       erfc,        Float,     kSavesX,    -g * kTwoOverSqrtPi * exp(-x * x))          \
    X(Erfinv,     erfinv,      Float,     kSavesY,    g * kSqrtPiOverTwo * exp(y * y))            \
    X(Log10,      log10,       Float,     kSavesX,    g / (x * 2.302585092994046))                \
    X(Exp2,       exp2,        Float,     kSavesY,    g * y * 0.6931471805599453)                 \
    X(Lgamma,     lgamma,      Float,     kSavesX,    g * digamma(x))                             \
    X(Digamma,    digamma,     Float,     kSavesX,    g * trigamma(x))                            \
    X(Trigamma,   _trigamma,   Float,     kSavesX,    no_gradient_formula("_trigamma", g))        \
    X(Ndtri,      _ndtri,      Float,     kSavesY,    g * kSqrtTwoPi * exp(y * y * 0.5))          \
    X(Gelu,       _gelu,       Float,     kSavesX,    gelu_backward(g, x))                        \
    X(GeluTanh,   _gelu_tanh,  Float,     kSavesX,    gelu_tanh_backward(g, x))                   \
    X(Silu,       _silu,       Float,     kSavesX,    silu_backward(g, x))                        \
    X(Mish,       _mish,       Float,     kSavesX,    mish_backward(g, x))                        \
    X(Hardswish,  _hardswish,  Float,     kSavesX,    hardswish_backward(g, x))                   \
    X(Hardsigmoid, _hardsigmoid, Float,   kSavesX,    hardsigmoid_backward(g, x))                 \
    X(Softplus,   _softplus,   Float,     kSavesX,    softplus_backward(g, x))                    \
    X(Floor,      floor,       NoBool,    kSavesNone, zeros_like(g))                              \
    X(Ceil,       ceil,        NoBool,    kSavesNone, zeros_like(g))                              \
    X(Round,      round,       NoBool,    kSavesNone, zeros_like(g))                              \
    X(Trunc,      trunc,       NoBool,    kSavesNone, zeros_like(g))                              \
    X(Frac,       frac,        FloatOnly, kSavesNone, g)                                        \
    X(IsNan,      isnan,       Bool,      kSavesNone, not_differentiable)                         \
    X(IsInf,      isinf,       Bool,      kSavesNone, not_differentiable)                         \
    X(IsFinite,   isfinite,    Bool,      kSavesNone, not_differentiable)                         \
    X(IsPosInf,   isposinf,    Bool,      kSavesNone, not_differentiable)                         \
    X(IsNegInf,   isneginf,    Bool,      kSavesNone, not_differentiable)                         \
    X(Signbit,    signbit,     Bool,      kSavesNone, not_differentiable)                         \
    X(LogicalNot, logical_not, Bool,      kSavesNone, not_differentiable)                         \
    X(BitwiseNot, bitwise_not, Integral,  kSavesNone, not_differentiable)

#define MT_BINARY_OPS(X)                                                                          \
    X(Add,        add,         Same,    kSavesNone,        kSavesNone,        g, g)               \
    X(Sub,        sub,         NoBool,  kSavesNone,        kSavesNone,        g, -g)              \
    X(Mul,        mul,         Same,    kSavesB,           kSavesA,           g * b, g * a)       \
    X(Div,        div,         Float,   kSavesB,           kSavesA | kSavesB, g / b, div_backward_divisor(g, a, b)) \
    X(Pow,        pow,         Same,    kSavesA | kSavesB, kSavesA | kSavesB | kSavesY,           \
      pow_grad_base(g, a, b), pow_grad_exponent(g, a, b, y))                                      \
    X(Maximum,    maximum,     Same,    kSavesA | kSavesB, kSavesA | kSavesB,                     \
      g * share_of_a(a > b, a, b), g * (1 - share_of_a(a > b, a, b)))                             \
    X(Minimum,    minimum,     Same,    kSavesA | kSavesB, kSavesA | kSavesB,                     \
      g * share_of_a(a < b, a, b), g * (1 - share_of_a(a < b, a, b)))                             \
    X(Remainder,  remainder,   NoBool,  kSavesNone,        kSavesA | kSavesB, g, -g * floor(a / b)) \
    X(Fmod,       fmod,        NoBool,  kSavesNone,        kSavesA | kSavesB, g, -g * trunc(a / b)) \
    X(FloorDivide, floor_divide, NoBool, kSavesNone,       kSavesNone,        zeros_like(g), zeros_like(g)) \
    X(Atan2,      atan2,       Float,   kSavesA | kSavesB, kSavesA | kSavesB,                     \
      g * b / (a * a + b * b), -g * a / (a * a + b * b))                                          \
    X(ThresholdBackward, _threshold_backward, Same, kSavesB, kSavesNone,                          \
      threshold_backward(g, b), zeros_like(g))                                                    \
    X(TanhBackward, _tanh_backward, Float, kSavesB, kSavesA | kSavesB,                           \
      tanh_backward(g, b), g * a * b * -2)                                                        \
    X(SigmoidBackward, _sigmoid_backward, Float, kSavesB, kSavesA | kSavesB,                     \
      sigmoid_backward(g, b), g * a * (1 - b * 2))                                                \
    X(GeluBackward, _gelu_backward, Float, kSavesB, kSavesA | kSavesB,                           \
      gelu_backward(g, b), g * a * gelu_second_derivative(b))                                     \
    X(GeluTanhBackward, _gelu_tanh_backward, Float, kSavesB, kSavesA | kSavesB,                   \
      gelu_tanh_backward(g, b), g * a * gelu_tanh_second_derivative(b))                           \
    X(SiluBackward, _silu_backward, Float, kSavesB, kSavesA | kSavesB,                           \
      silu_backward(g, b), g * a * silu_second_derivative(b))                                     \
    X(MishBackward, _mish_backward, Float, kSavesB, kSavesA | kSavesB,                           \
      mish_backward(g, b), g * a * mish_second_derivative(b))                                     \
    X(HardswishBackward, _hardswish_backward, Float, kSavesB, kSavesA | kSavesB,                  \
      hardswish_backward(g, b), g * a * hardswish_second_derivative(b))                           \
    X(HardsigmoidBackward, _hardsigmoid_backward, Float, kSavesB, kSavesNone,                     \
      hardsigmoid_backward(g, b), zeros_like(g))                                                  \
    X(SoftplusBackward, _softplus_backward, Float, kSavesB, kSavesA | kSavesB,                    \
      softplus_backward(g, b), g * a * softplus_second_derivative(b))                             \
    X(LeakyRelu,  _leaky_relu, Float,   kSavesA | kSavesB, kSavesA,                               \
      leaky_relu_backward(g, a, b), g * nonpositive_part(a))                                      \
    X(LeakyReluDerivative, _leaky_relu_derivative, Float, kSavesNone, kSavesA,                    \
      zeros_like(g), g * nonpositive(a))                                                          \
    X(Elu,        _elu,        Float,   kSavesA | kSavesB, kSavesA,                               \
      elu_backward(g, a, b), g * expm1(nonpositive_part(a)))                                      \
    X(EluDerivative, _elu_derivative, Float, kSavesA | kSavesB, kSavesA,                          \
      g * elu_derivative(a, b) * nonpositive(a), g * nonpositive(a) * exp(nonpositive_part(a)))   \
    X(BinaryCrossEntropy, _binary_cross_entropy, Float, kSavesA | kSavesB, kSavesA,                 \
      bce_backward(g, a, b), g * (clamped_log1m(a) - clamped_log(a)))                          \
    X(BceDerivative, _bce_derivative, Float, kSavesA | kSavesB, kSavesA,                          \
      g * bce_second_derivative(a, b), -g / bce_denominator(a))                                   \
    X(BinaryCrossEntropyWithLogits, _binary_cross_entropy_with_logits, Float, kSavesA | kSavesB,  \
      kSavesA, bce_with_logits_backward(g, a, b), -g * a)                                      \
    X(BceWithLogitsDerivative, _bce_with_logits_derivative, Float, kSavesA, kSavesNone,           \
      sigmoid_backward(g, sigmoid(a)), -g)                                                        \
    X(HuberLoss,  _huber_loss, Float,   kSavesA | kSavesB, kSavesA | kSavesB,                     \
      huber_backward(g, a, b), g * (abs(a) - b) * (abs(a) > b))                                   \
    X(HuberDerivative, _huber_derivative, Float, kSavesA | kSavesB, kSavesA | kSavesB,            \
      g * (abs(a) <= b), g * sign(a) * (abs(a) > b))                                              \
    X(MseLoss,    _mse_loss,   Float, kSavesA | kSavesB, kSavesA | kSavesB,                       \
      mse_backward(g, a, b), -mse_backward(g, a, b))                                              \
    X(L1Loss,     _l1_loss,    Float, kSavesA | kSavesB, kSavesA | kSavesB,                       \
      l1_backward(g, a, b), -l1_backward(g, a, b))                                                \
    X(Eq,         eq,          Compare, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(Ne,         ne,          Compare, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(Lt,         lt,          Compare, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(Le,         le,          Compare, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(Gt,         gt,          Compare, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(Ge,         ge,          Compare, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(LogicalAnd, logical_and, Bool,    kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(LogicalOr,  logical_or,  Bool,    kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(LogicalXor, logical_xor, Bool,    kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(BitwiseAnd, bitwise_and, Integral, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(BitwiseOr,  bitwise_or,  Integral, kSavesNone, kSavesNone, not_differentiable, not_differentiable) \
    X(BitwiseXor, bitwise_xor, Integral, kSavesNone, kSavesNone, not_differentiable, not_differentiable)
// clang-format on

namespace minitorch {

// The dtype rule of an op (inputs are first promoted together, as in PyTorch):
enum class OpResult {
    Same,       // the promoted dtype (add, abs, floor of an int64 is an int64)
    NoBool,     // the same, but bool inputs are a TypeError (neg, sub, floor)
    Float,      // bool and int64 inputs become float32 first (exp, sin, div, atan2)
    FloatOnly,  // floating inputs only; others are a TypeError (frac)
    Compare,    // bool result of comparing the promoted inputs (eq, lt)
    Bool,       // bool result, any input dtype (isnan, logical_and)
    Integral,   // bool and int64 inputs only, dtype kept (bitwise_and, ~)
};

// What a gradient formula reads, so backward saves no more (bit flags).
enum : unsigned { kSavesNone = 0, kSavesX = 1, kSavesA = 1, kSavesB = 2, kSavesY = 4 };

#define MT_OP_ENUM(Enum, ...) Enum,
enum class UnaryOp { MT_UNARY_OPS(MT_OP_ENUM) };
enum class BinaryOp { MT_BINARY_OPS(MT_OP_ENUM) };
#undef MT_OP_ENUM

struct UnaryOpInfo {
    const char* name;           // "sin": the method and minitorch.<name>
    const char* backward_name;  // "SinBackward0", as PyTorch's grad_fn names
    OpResult result;
    unsigned saves;
};
struct BinaryOpInfo {
    const char* name;
    const char* backward_name;
    OpResult result;
    unsigned saves_for_a, saves_for_b;
};

#define MT_UNARY_INFO(Enum, name, result, saves, ...) {#name, #Enum "Backward0", OpResult::result, saves},
#define MT_BINARY_INFO(Enum, name, result, saves_a, saves_b, ...) \
    {#name, #Enum "Backward0", OpResult::result, saves_a, saves_b},
inline constexpr UnaryOpInfo kUnaryOpInfo[] = {MT_UNARY_OPS(MT_UNARY_INFO)};
inline constexpr BinaryOpInfo kBinaryOpInfo[] = {MT_BINARY_OPS(MT_BINARY_INFO)};
#undef MT_UNARY_INFO
#undef MT_BINARY_INFO

// Both tables are generated from the same rows as the enums, so the enum value is the index.
inline constexpr const UnaryOpInfo& info(UnaryOp op) { return kUnaryOpInfo[int(op)]; }
inline constexpr const BinaryOpInfo& info(BinaryOp op) { return kBinaryOpInfo[int(op)]; }
inline constexpr const char* op_name(UnaryOp op) { return info(op).name; }
inline constexpr const char* op_name(BinaryOp op) { return info(op).name; }

// Outputs of these kinds are bool or integer: no gradient flows through them.
inline constexpr bool differentiable(OpResult r)
{
    return r != OpResult::Compare && r != OpResult::Bool && r != OpResult::Integral;
}
// Whether the op writes a bool tensor whatever its inputs' dtype.
inline constexpr bool has_bool_result(OpResult r) { return r == OpResult::Compare || r == OpResult::Bool; }

}  // namespace minitorch
