"""float16 / bfloat16 read and written in place by the CUDA kernels (issue 31).

The CUDA elementwise kernels load 16-bit values, compute in float32 registers and round
once at the store, in one launch. That must give the same bits as computing in float32 and
rounding the result (what staging through float32 copies gave, and what PyTorch does):
each test compares a 16-bit op with the same op on the float32 values, rounded after.
The launch counts are structural (the same on a GPU and in the emulator), never times.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import CUDA_SKIP_REASON
from minitorch import nn
from minitorch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)

F16, BF16 = minitorch.float16, minitorch.bfloat16
HALVES = [pytest.param(F16, id="float16"), pytest.param(BF16, id="bfloat16")]


def bits(t: minitorch.Tensor) -> np.ndarray:
    """The exact values of t (16-bit or float32 values are exact in float32) as their bits,
    every NaN as one NaN (which sign a NaN gets is up to the compiler, on any path)."""
    if t.dtype == minitorch.bool:
        return t.cpu().numpy()
    v = np.ascontiguousarray(t.detach().cpu().float().numpy())
    v[np.isnan(v)] = np.nan
    return v.view(np.uint32)


def assert_same_bits(got: minitorch.Tensor, want: minitorch.Tensor) -> None:
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(bits(got), bits(want))


def half_tensor(dt, a: np.ndarray) -> minitorch.Tensor:
    return minitorch.tensor(np.asarray(a, np.float32), device="cuda").to(dt)


def samples(shape, seed: int, low: float = -4.0, high: float = 4.0) -> np.ndarray:
    """Spread values with the awkward ones in front: zeros, infinities, NaN, huge and tiny."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, shape).astype(np.float32).ravel()
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e4, -7e4, 3e-6, -1e-8, 1.0, -1.0, 0.5, 3.0, -3.0],
                       np.float32)
    k = min(len(special), x.size)
    x[:k] = special[:k]
    return x.reshape(shape)


def kernels(fn):
    """The kernels launched while fn() runs."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k for e in prof.events() for k in e.kernels]


def kernel_kind(name: str) -> str:
    """A kernel's name without its template arguments, and any cuBLAS GEMM as "cuBLAS GEMM": on a
    GPU cuBLAS has an entry point per precision (cublasSgemmStridedBatched for float32,
    cublasGemmStridedBatchedEx(bf16) for bfloat16), where one launch stands for one launch."""
    return "cuBLAS GEMM" if name.startswith("cublas") else name.split("<")[0]


UNARY = ["neg", "abs", "sign", "relu", "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sigmoid", "tanh",
         "sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "floor",
         "ceil", "round", "trunc", "frac", "isnan", "isinf", "isfinite", "logical_not"]
ACTIVATIONS = {
    "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu, "mish": F.mish,
    "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
}
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder", "fmod", "floor_divide", "atan2",
          "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]


def unary(name):
    return ACTIVATIONS[name] if name in ACTIVATIONS else (lambda x: getattr(x, name)())


def binary(name):
    return lambda a, b: getattr(minitorch, name)(a, b)


def rounded(fn, dt, *xs):
    """fn on the float32 values of xs, its float result rounded to dt: the reference."""
    out = fn(*[x.float() if isinstance(x, minitorch.Tensor) and x.dtype == dt else x for x in xs])
    return out.to(dt) if out.dtype == minitorch.float32 else out


# ---- values: the same bits as float32 math rounded once ----------------------------------------

@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("name", UNARY + list(ACTIVATIONS))
def test_unary_ops_equal_float32_math_rounded(dt, name):
    x = half_tensor(dt, samples((37, 9), 1))
    fn = unary(name)
    assert_same_bits(fn(x), rounded(fn, dt, x))
    assert_same_bits(fn(x.t()), rounded(fn, dt, x.t()))  # the strided kernel


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_equal_float32_math_rounded(dt, name):
    a, b = half_tensor(dt, samples((33, 10), 2)), half_tensor(dt, samples((33, 10), 3, 0.25, 3.0))
    fn = binary(name)
    assert_same_bits(fn(a, b), rounded(fn, dt, a, b))
    assert_same_bits(fn(b, a), rounded(fn, dt, b, a))
    assert_same_bits(fn(a.t(), b.t()), rounded(fn, dt, a.t(), b.t()))
    assert_same_bits(fn(a, b[0]), rounded(fn, dt, a, b[0]))  # broadcast row


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "silu", "mish", "hardswish", "hardsigmoid", "relu"])
def test_fused_activation_backward_equals_float32_math_rounded(dt, act):
    fn = unary(act)
    xv = samples((50,), 4)
    xv[np.isnan(xv) | np.isinf(xv)] = 0.75
    x = half_tensor(dt, xv).requires_grad_()
    g = half_tensor(dt, samples((50,), 5))
    fn(x).backward(g)
    x32 = x.detach().float().requires_grad_()
    fn(x32).backward(g.float())
    assert x.grad.dtype == dt
    assert_same_bits(x.grad, x32.grad.to(dt))


@pytest.mark.parametrize("dt", HALVES)
def test_python_scalars_stay_float32(dt):
    x = half_tensor(dt, samples((5, 7), 6, 0.1, 5.0))
    for fn in (lambda t: t * 0.3, lambda t: 0.3 - t, lambda t: t ** 2.5, lambda t: t / 3, lambda t: t + 1,
               lambda t: t > 0.1, lambda t: 2 ** t):
        assert_same_bits(fn(x), rounded(fn, dt, x))


@pytest.mark.parametrize("dt", HALVES)
def test_float32_tensor_beside_a_16_bit_one_gives_float32(dt):
    a, b = half_tensor(dt, samples((6, 8), 7)), minitorch.tensor(samples((6, 8), 8), device="cuda")
    for fn in (lambda x, y: x + y, lambda x, y: y * x, lambda x, y: x > y, lambda x, y: minitorch.atan2(x, y[0])):
        got = fn(a, b)
        want = fn(a.float(), b)
        assert_same_bits(got, want)
    # float16 beside bfloat16: float32, as PyTorch
    other = F16 if dt == BF16 else BF16
    c = half_tensor(other, samples((6, 8), 9))
    got = a + c
    assert got.dtype == minitorch.float32
    assert_same_bits(got, a.float() + c.float())
    # and on the CPU (its kernels stage the 16-bit side): the same values
    assert_same_bits(a.cpu() + b.cpu(), (a.float() + b).cpu())


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("shapes", [((0, 3), (0, 3)), ((1,), (1,)), ((4, 1, 3), (1, 5, 1)), ((), (3,)),
                                    ((1, 1), ()), ((2, 0, 4), (1, 4)), ((1001,), (1001,))])
def test_broadcasting_and_empty_or_one_element_shapes(dt, shapes):
    sa, sb = shapes
    a, b = half_tensor(dt, samples(sa, 10)), half_tensor(dt, samples(sb, 11))
    for name in ("add", "mul", "lt", "maximum"):
        assert_same_bits(binary(name)(a, b), rounded(binary(name), dt, a, b))
    assert_same_bits(a.exp(), a.float().exp().to(dt))


@pytest.mark.parametrize("dt", HALVES)
def test_views_at_odd_offsets_and_steps(dt):
    base = half_tensor(dt, samples((9, 20), 12))
    for a, b in [(base[1:, 1:], base[:-1, :-1]), (base[:, ::3], base[:, 1::3]), (base[2, 3:17], base[4, 1:15]),
                 (base.t()[5:], base.t()[:-5])]:
        assert_same_bits(a * b, rounded(lambda x, y: x * y, dt, a, b))
        assert_same_bits(a.sigmoid(), a.float().sigmoid().to(dt))


@pytest.mark.parametrize("dt", HALVES)
def test_in_place_ops_write_16_bits(dt):
    a, b = half_tensor(dt, samples((8, 6), 13)), half_tensor(dt, samples((8, 6), 14))
    want = (a.float() * b.float()).to(dt)
    a.mul_(b)
    assert_same_bits(a, want)
    want = (a.float() + 0.1).to(dt)
    a += 0.1
    assert_same_bits(a, want)
    view = a[:, 1::2]
    want = (view.float() - b[:, :3].float()).to(dt)
    view.sub_(b[:, :3])
    assert_same_bits(a[:, 1::2], want)


@pytest.mark.parametrize("dt", HALVES)
def test_where_and_clamp(dt):
    a, b = half_tensor(dt, samples((7, 5), 15)), half_tensor(dt, samples((5,), 16))
    cond = a > 0.5
    assert_same_bits(minitorch.where(cond, a, b), minitorch.where(cond, a.float(), b.float()).to(dt))
    assert_same_bits(minitorch.where(cond, a.t().t(), 0.0), minitorch.where(cond, a.float(), 0.0).to(dt))
    assert_same_bits(a.clamp(-1, 2), a.float().clamp(-1, 2).to(dt))


# ---- launches: one per op ----------------------------------------------------------------------

@pytest.mark.parametrize("dt", HALVES)
def test_16_bit_ops_launch_as_many_kernels_as_float32(dt):
    a32, b32 = (minitorch.tensor(samples((64, 100), s), device="cuda") for s in (19, 20))
    a, b = a32.to(dt), b32.to(dt)
    ops = [lambda x, y: x + y, lambda x, y: x.exp(), lambda x, y: F.gelu(x), lambda x, y: x < y,
           lambda x, y: x[:, ::2] * y[:, 1::2], lambda x, y: x + y[0], lambda x, y: minitorch.where(x > 0, x, y),
           lambda x, y: x * 0.5, lambda x, y: (x - y).abs_()]
    for op in ops:
        n16, n32 = len(kernels(lambda: op(a, b))), len(kernels(lambda: op(a32, b32)))
        assert n16 == n32, (n16, n32)
    assert len(kernels(lambda: a + b)) == 1
    assert len(kernels(lambda: a.sigmoid())) == 1
    # bf16 + float32: no float32 copy of the 16-bit side
    assert len(kernels(lambda: a + b32)) == 1


# ---- reductions, softmax and the teaching GEMMs: read in place, accumulate in float32 or wider ----

REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum0": lambda x: x.sum(0), "sum1": lambda x: x.sum(1, keepdim=True),
"prod1": lambda x: x.prod(1), "max": lambda x: x.max(), "min0": lambda x: x.min(0).values,
    "amax1": lambda x: x.amax(1), "argmax1": lambda x: x.argmax(1), "argmin0": lambda x: x.argmin(0),
    "var1": lambda x: x.var(1), "std0": lambda x: x.std(0), "logsumexp1": lambda x: x.logsumexp(1),
    "norm1": lambda x: x.norm(dim=1),
}


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("name", list(REDUCTIONS))
@pytest.mark.parametrize("shape", [(6, 300), (2049, 3), (1, 1), (5, 1), (3, 70000)])
def test_reductions_equal_float32_math_rounded(dt, name, shape):
    fn = REDUCTIONS[name]
    x = half_tensor(dt, np.random.default_rng(21).uniform(-2, 2, shape))
    got, want = fn(x), fn(x.float())
    assert got.dtype == (dt if want.dtype == minitorch.float32 else want.dtype)
    assert_same_bits(got, want.to(got.dtype))
    assert_same_bits(fn(x.t()), fn(x.t().float()).to(got.dtype))  # reduced through a copy or in place


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("shape, dims", [((6, 300), (1,)), ((6, 300), (0,)), ((3, 70000), (1,)), ((4, 5, 6), (0, 2)),
                                         ((4, 5, 6), ())])
def test_mean_is_the_float32_mean_rounded_once(dt, shape, dims):
    # The reduce kernel divides the (double) sum by the count before its one store, as
    # PyTorch's mean does: not the 16-bit sum, rounded, then divided and rounded again.
    x = half_tensor(dt, np.random.default_rng(25).uniform(-2, 2, shape))
    got = x.mean(dims) if dims else x.mean()
    assert_same_bits(got, (x.float().mean(dims) if dims else x.float().mean()).to(dt))
    want = x.float().cpu().numpy().astype(np.float64).mean(axis=dims or None)
    np.testing.assert_array_equal(got.float().cpu().numpy(), minitorch.tensor(np.asarray(want, np.float32)).to(dt).float()
                                  .numpy())


@pytest.mark.parametrize("dt", [F16, BF16, minitorch.float32, minitorch.float64])
def test_mean_launches_what_sum_does(dt):
    # one reduce launch (two where a long line is split across blocks, as for sum): no fill,
    # copy and divide after it
    x = minitorch.tensor(samples((64, 300), 28, -2, 2), device="cuda").to(dt)
    assert len(kernels(lambda: x.mean(1))) == 1
    assert len(kernels(lambda: x.mean())) == len(kernels(lambda: x.sum())) <= 2
    for dims, keepdim in (((1,), False), ((0,), True), ((0, 1), True)):
        n_mean = len(kernels(lambda: x.mean(dims, keepdim=keepdim)))
        assert n_mean == len(kernels(lambda: x.sum(dims, keepdim=keepdim))) <= 2, (dims, n_mean)


@pytest.mark.parametrize("dt", HALVES)
def test_reductions_find_nan_and_ties_as_float32_does(dt):
    v = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, np.nan, 5.0, np.nan], [-0.0, 0.0, -7.0, -7.0]], np.float32)
    x = half_tensor(dt, v)
    for fn in (lambda t: t.max(1).indices, lambda t: t.min(1).indices, lambda t: t.max(1).values, lambda t: t.sum(1)):
        assert_same_bits(fn(x), fn(x.float()).to(fn(x).dtype))


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("shape, dim", [((8, 100), 1), ((8, 3000), -1), ((4, 7, 5), 1), ((1, 1), 0), ((0, 4), 1)])
def test_softmax_and_its_backward_equal_float32_math_rounded(dt, fn, shape, dim):
    rng = np.random.default_rng(22)
    x = half_tensor(dt, rng.uniform(-6, 6, shape)).requires_grad_()
    g = half_tensor(dt, rng.standard_normal(shape))
    y = fn(x, dim=dim)
    y.backward(g)
    # the float32 reference: float32 values of the same 16-bit y (the backward reads y)
    x32 = x.detach().float()
    assert_same_bits(y, fn(x32, dim=dim).to(dt))
    y32 = y.detach().float()
    grad = (g.float() - y32.exp() * g.float().sum(dim, keepdim=True)) if fn is F.log_softmax else \
        y32 * (g.float() - (g.float() * y32).sum(dim, keepdim=True))
    np.testing.assert_allclose(x.grad.float().cpu().numpy(), grad.to(dt).float().cpu().numpy(), rtol=2**-7, atol=1e-6)
    assert x.grad.dtype == dt


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("shapes", [((5, 40), (40, 7)), ((3, 17, 33), (33, 9)), ((2, 4, 6), (2, 6, 3)), ((1, 1), (1, 1))])
def test_teaching_gemm_sums_16_bit_values_in_float32(dt, shapes):
    rng = np.random.default_rng(23)
    a, b = half_tensor(dt, rng.standard_normal(shapes[0])), half_tensor(dt, rng.standard_normal(shapes[1]))
    got = a @ b
    assert got.dtype == dt
    if minitorch.cuda.is_emulated():  # the teaching kernel on both sides: the same sums, the same bits
        assert_same_bits(got, (a.float() @ b.float()).to(dt))
        assert_same_bits(b.mT @ a.mT, (b.mT.float() @ a.mT.float()).to(dt))  # strided operands, read in place
    np.testing.assert_allclose(got.float().cpu().numpy(), (a.float() @ b.float()).cpu().numpy(), rtol=2**-7, atol=2**-7)


@pytest.mark.parametrize("dt", HALVES)
def test_reductions_and_softmax_launch_as_many_kernels_as_float32(dt):
    x32 = minitorch.tensor(samples((64, 300), 24), device="cuda")
    x = x32.to(dt)
    for fn in (lambda t: t.sum(1), lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(1), lambda t: t.max(1),
               lambda t: t.argmax(), lambda t: t.var(1), lambda t: F.softmax(t, 1), lambda t: F.log_softmax(t, 0),
               lambda t: t @ t.mT):
        n16, n32 = len(kernels(lambda: fn(x))), len(kernels(lambda: fn(x32)))
        assert n16 == n32, (n16, n32)
    assert len(kernels(lambda: x.sum(1))) == 1


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("shape", [(6, 64), (300, 40), (2, 3, 1030), (1, 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_reads_16_bits_in_place(dt, shape, affine):
    rng = np.random.default_rng(26)
    D = shape[-1]
    x = half_tensor(dt, rng.uniform(-3, 5, shape)).requires_grad_()
    w = half_tensor(dt, rng.uniform(0.5, 1.5, D)).requires_grad_() if affine else None
    b = half_tensor(dt, rng.standard_normal(D)).requires_grad_() if affine else None
    y = F.layer_norm(x, (D,), w, b)
    f32 = (lambda t: None if t is None else t.detach().float())
    assert_same_bits(y, F.layer_norm(f32(x), (D,), f32(w), f32(b)).to(dt))
    g = half_tensor(dt, rng.standard_normal(shape))
    y.backward(g)
    x32 = f32(x).requires_grad_()
    w32, b32 = (None, None) if not affine else (f32(w).requires_grad_(), f32(b).requires_grad_())
    F.layer_norm(x32, (D,), w32, b32).backward(g.float())
    # the backward reads the saved mean and rstd, rounded to dt: close to float32's, not the same bits
    pairs = [(x.grad, x32.grad)] + ([(w.grad, w32.grad), (b.grad, b32.grad)] if affine else [])
    for got, want in pairs:
        assert got.dtype == dt
        np.testing.assert_allclose(got.float().cpu().numpy(), want.cpu().numpy(), rtol=2**-5, atol=0.05 * (D ** 0.5))


@pytest.mark.parametrize("dt", HALVES)
def test_layer_norm_launches_as_many_kernels_as_float32(dt):
    x32 = minitorch.tensor(samples((64, 96), 27, -2, 2), device="cuda")
    ln = nn.LayerNorm(96).to("cuda")
    ln16 = nn.LayerNorm(96).to("cuda").to(dt)
    x = x32.to(dt)
    assert len(kernels(lambda: ln16(x))) == len(kernels(lambda: ln(x32))) == 1
    x.requires_grad_(), x32.requires_grad_()
    y, y32 = ln16(x), ln(x32)
    g, g32 = minitorch.ones_like(y), minitorch.ones_like(y32)
    assert len(kernels(lambda: y.backward(g))) == len(kernels(lambda: y32.backward(g32)))


def test_transformer_block_under_autocast_launches_what_float32_does_plus_its_casts():
    minitorch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True,
                                       activation="gelu").to("cuda")
    x = minitorch.randn(2, 8, 32, device="cuda")

    def step(autocast: bool):
        with minitorch.autocast("cuda", dtype=BF16, enabled=autocast):
            loss = layer(x).float().pow(2).mean()
        loss.backward()

    counts = {}
    for autocast in (False, True):
        step(autocast)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step(autocast)
        events = prof.events()
        casts = sum(len(e.kernels) for e in events if e.name in ("to", "ToCopyBackward0"))
        # the residual add (bf16 + float32) hands its bf16 input a gradient cast back to bf16
        casts += sum(k.name.startswith("copy_kernel") for e in events if e.name == "AddBackward0" for k in e.kernels)
        counts[autocast] = (sum(len(e.kernels) for e in events), casts)
    (n32, casts32), (n16, casts16) = counts[False], counts[True]
    # autocast's own casts (weights and activations to bf16, gradients back) aside, one launch
    # per op as in float32: no staging copies
    assert n16 - casts16 <= n32 - casts32, counts


def batch_norm_launches(bn, x):
    """Kernels of a training forward, its backward and an eval forward of bn on x."""
    x = x.detach().requires_grad_()
    bn.train()
    box = {}
    fwd = kernels(lambda: box.setdefault("y", bn(x)))
    y = box["y"]
    g = minitorch.ones_like(y)
    bwd = kernels(lambda: y.backward(g))
    bn.eval()
    ev = kernels(lambda: bn(x.detach()))
    return [len(fwd), len(bwd), len(ev)]


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("make, shape", [(nn.BatchNorm1d, (16, 6)), (nn.BatchNorm2d, (4, 6, 5, 5)),
                                         (nn.BatchNorm3d, (2, 6, 3, 4, 5))], ids=["1d", "2d", "3d"])
def test_batch_norm_launches_as_many_kernels_as_float32(dt, make, shape):
    # mixed (16-bit input, float32 parameters and statistics: autocast's) and all 16-bit (the
    # module .to(dt)) read and write the 16 bits in place: no staging copies around the kernels
    x32 = minitorch.tensor(samples(shape, 29, -2, 2), device="cuda")
    n32 = batch_norm_launches(make(6).to("cuda"), x32)
    assert n32[1:] == [2, 1], n32  # backward: sums, dx; eval: one affine kernel
    assert batch_norm_launches(make(6).to("cuda"), x32.to(dt)) == n32
    assert batch_norm_launches(make(6).to("cuda").to(dt), x32.to(dt)) == n32


@pytest.mark.parametrize("dt", HALVES)
def test_16_bit_batch_norm_equals_float32_math_rounded(dt):
    # the same statistics (float32 values of the same 16-bit input) give the float32 output rounded once
    x = half_tensor(dt, np.random.default_rng(30).uniform(-2, 2, (4, 3, 6, 6)))
    bn, bn32 = nn.BatchNorm2d(3).to("cuda"), nn.BatchNorm2d(3).to("cuda")
    assert_same_bits(bn(x), bn32(x.float()).to(dt))
    np.testing.assert_array_equal(bn.running_var.cpu().numpy(), bn32.running_var.cpu().numpy())
    bn.eval(), bn32.eval()
    assert_same_bits(bn(x), bn32(x.float()).to(dt))


def test_resnet_block_under_autocast_launches_what_float32_does_plus_its_casts():
    minitorch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(out)) + x)

    block = Block(8).to("cuda")
    x = minitorch.randn(2, 8, 6, 6, device="cuda")
    with minitorch.autocast("cuda", dtype=BF16):  # the convolutions run in bf16, the batch norms mixed
        assert block.bn1(block.conv1(x)).dtype == BF16 and block(x).dtype == minitorch.float32

    def step(autocast: bool):
        with minitorch.autocast("cuda", dtype=BF16, enabled=autocast):
            loss = block(x).float().pow(2).mean()
        loss.backward()

    # Left out: autocast's casts ("to", their backward, and the gradient of the residual add,
    # bf16 + float32, cast back to bf16). The convolutions run im2col + GEMMs here (cuDNN off,
    # so that a GPU runs the same kernels as the emulated build), which read bf16 in place.
    skip = ("to", "ToCopyBackward0", "AddBackward0")
    launches = {}
    for autocast in (False, True):
        with minitorch.backends.cudnn.flags(enabled=False):
            step(autocast)
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                step(autocast)
        launches[autocast] = [(e.name, [kernel_kind(k.name) for k in e.kernels]) for e in prof.events()
                              if e.kernels and e.name not in skip]
    # every other op, the batch norms (mixed: bf16 input, float32 parameters) and their
    # backward included, launches the same kernels as in float32: no staging copies
    assert launches[True] == launches[False]
    assert sum(name == "batch_norm" for name, _ in launches[True]) == 2
    assert sum(name == "conv2d" for name, _ in launches[True]) == 2
    assert block.bn1.running_mean.dtype == block.bn1.weight.grad.dtype == minitorch.float32


CONVS = [  # (input shape, weight shape, keyword arguments)
    pytest.param((2, 3, 7, 6), (4, 3, 3, 3), dict(padding=1), id="3x3"),
    pytest.param((3, 4, 9, 8), (6, 2, 3, 2), dict(stride=2, dilation=(1, 2), groups=2), id="strided-groups"),
    pytest.param((2, 5, 4, 4), (3, 5, 1, 1), dict(), id="1x1-direct"),
    pytest.param((1, 1, 1, 1), (1, 1, 1, 1), dict(padding=1), id="one-pixel"),
]


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("xs, ws, kw", CONVS)
def test_im2col_convolution_reads_16_bits_in_place(dt, xs, ws, kw):
    """conv2d without cuDNN in 16 bits: im2col moves the values as they are, the GEMMs and
    col2im sum in float32 and round once, so the output and the weight gradient are the
    float32 convolution of the same values rounded (bit for bit where both run the teaching
    GEMM), the input gradient within one 16-bit rounding of each summed column; and the
    launches are those of float32, with no staging copies."""
    rng = np.random.default_rng(41)
    x, w = half_tensor(dt, rng.uniform(-2, 2, xs)), half_tensor(dt, rng.uniform(-1, 1, ws))
    g = half_tensor(dt, rng.uniform(-1, 1, F.conv2d(x.float(), w.float(), **kw).shape))

    def run(dtype, launches=None):
        xi, wi, gi = x.to(dtype).detach().requires_grad_(), w.to(dtype).detach().requires_grad_(), g.to(dtype)

        def conv():
            F.conv2d(xi, wi, **kw).backward(gi)
        if launches is None:
            conv()
            return F.conv2d(xi, wi, **kw), xi.grad, wi.grad
        launches[dtype] = kernels(conv)

    launches = {}
    with minitorch.backends.cudnn.flags(enabled=False):
        y16, gx16, gw16 = run(dt)
        y32, gx32, gw32 = run(minitorch.float32)
        run(dt, launches), run(minitorch.float32, launches)
    assert y16.dtype == gx16.dtype == gw16.dtype == dt
    if minitorch.cuda.is_emulated():
        assert_same_bits(y16, y32.to(dt))
        assert_same_bits(gw16, gw32.to(dt))
    for got, want in ((y16, y32), (gx16, gx32), (gw16, gw32)):
        np.testing.assert_allclose(got.detach().float().cpu().numpy(), want.detach().cpu().numpy(), rtol=2**-6,
                                   atol=2**-6)
    names = {d: [kernel_kind(k.name) for k in ks] for d, ks in launches.items()}
    assert names[dt] == names[minitorch.float32], names
    if kw.get("groups", 1) == 1:  # (grouped GEMMs pack the weight per sample, in float32 too)
        assert "copy_kernel" not in names[dt], names


POOLS = [  # (function, input shape, keyword arguments)
    pytest.param(F.max_pool2d, (2, 3, 8, 7), dict(kernel_size=2), id="max-2x2"),
    pytest.param(F.max_pool2d, (2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1), id="max-3x3-overlapping"),
    pytest.param(F.max_pool2d, (1, 2, 9, 8), dict(kernel_size=2, stride=2, dilation=2, ceil_mode=True), id="max-dilated"),
    pytest.param(F.avg_pool2d, (2, 3, 8, 7), dict(kernel_size=2), id="avg-2x2"),
    pytest.param(F.avg_pool2d, (2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1), id="avg-3x3-overlapping"),
    pytest.param(F.avg_pool2d, (1, 2, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True), id="avg-ceil"),
    pytest.param(F.adaptive_avg_pool2d, (2, 4, 5, 5), dict(output_size=1), id="adaptive-avg"),
]


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("pool, shape, kw", POOLS)
def test_pooling_reads_16_bits_in_place(dt, pool, shape, kw):
    """Pooling in 16 bits compares and sums in float32 and rounds once: forward and backward
    are the float32 pooling of the same values rounded, bit for bit (the backward kernels
    gather each input pixel's windows, so the sum's order is fixed), with the launches of
    float32 and no staging copies."""
    rng = np.random.default_rng(43)
    x = half_tensor(dt, samples(shape, 44)[..., ::-1].copy() if pool is F.max_pool2d else rng.uniform(-2, 2, shape))
    g = half_tensor(dt, rng.uniform(-1, 1, pool(x.float(), **kw).shape))

    def run(dtype, launches=None):
        xi, gi = x.to(dtype).detach().requires_grad_(), g.to(dtype)

        def step():
            pool(xi, **kw).backward(gi)
        if launches is None:
            step()
            return pool(xi, **kw), xi.grad
        launches[dtype] = [k.name.split("<")[0] for k in kernels(step)]

    (y16, gx16), (y32, gx32) = run(dt), run(minitorch.float32)
    assert y16.dtype == gx16.dtype == dt
    assert_same_bits(y16.detach(), y32.detach().to(dt))
    assert_same_bits(gx16, gx32.to(dt))
    launches = {}
    run(dt, launches), run(minitorch.float32, launches)
    assert launches[dt] == launches[minitorch.float32] and "copy_kernel" not in launches[dt], launches


MOVES = {  # indexing ops that only move elements: one kernel of the element's size, any dtype
    "index_select": lambda m, i, r: m.index_select(0, r),
    "index_select dim 1": lambda m, i, r: m.index_select(1, r % 9),
    "getitem": lambda m, i, r: m[r],
    "getitem 2 indices": lambda m, i, r: m[r, r % 9],
    "gather": lambda m, i, r: m.gather(1, i),
    "gather transposed": lambda m, i, r: m.t().gather(0, i.t() % 9),
    "embedding": lambda m, i, r: F.embedding(i % 30, m),
    # The writes name each place once (argsort: a permutation): where two writes name one place,
    # which one lands is up to the GPU's thread order, and may differ between the two dtypes.
    "scatter": lambda m, i, r: m.scatter(1, i.argsort(1), m[:, :7].flip(1).contiguous()),
    "index_copy": lambda m, i, r: m.index_copy(0, r[:5].argsort() * 6, m[:5].flip(0).contiguous()),
    "index_put": lambda m, i, r: m.index_put((r[:4].argsort() * 7,), m[:4].flip(0).contiguous()),
}


@pytest.mark.parametrize("dt", HALVES + [pytest.param(minitorch.int8, id="int8"),
                                        pytest.param(minitorch.uint8, id="uint8"),
                                        pytest.param(minitorch.int16, id="int16"),
                                        pytest.param(minitorch.int32, id="int32")])
@pytest.mark.parametrize("name", list(MOVES))
def test_indexing_moves_every_dtype_in_place(dt, name):
    """gather / index_select / embedding / scatter / index_put move elements: the same bits as
    the op on a wide copy, narrowed (NaN and -0.0 included), in the launches of float32 (the
    kernels run on an unsigned type of the element's size), no staging copies."""
    rng = np.random.default_rng(47)
    wide = minitorch.float32 if dt.is_floating_point else minitorch.int64
    values = samples((30, 9), 48) if dt.is_floating_point else rng.integers(-100, 100, (30, 9))
    if dt == minitorch.uint8:
        values = np.abs(values)
    m = minitorch.tensor(np.asarray(values), device="cuda").to(dt)
    i = minitorch.tensor(rng.integers(0, 9, (30, 7)), device="cuda")
    r = minitorch.tensor(rng.integers(-30, 30, (12,)), device="cuda")
    fn = MOVES[name]
    got, want = fn(m, i, r), fn(m.to(wide), i, r).to(dt)
    assert got.dtype == dt
    if dt.is_floating_point:
        assert_same_bits(got, want)
    else:
        np.testing.assert_array_equal(got.cpu().numpy(), want.cpu().numpy())
    names = {d: [k.name.split("<")[0] for k in kernels(lambda d=d: fn(m.to(d), i, r))] for d in (dt, wide)}
    cast = len(kernels(lambda: m.to(wide)))  # the wide side's own cast of m
    assert names[dt] == names[wide][cast:], names  # (out-of-place scatter / index_put clone m on both sides)
