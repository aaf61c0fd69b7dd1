"""Numbers meeting a GPU tensor stay on the host (issue 31).

`x * 2.0`, `1 - x`, `x.add_(1)`, `x.clamp(0, 1)` on a GPU tensor: the number is a 0-dim CPU
tensor, and the CUDA zip kernel takes its value as a kernel argument -- one launch per op,
as PyTorch does, where putting the number on the GPU first was a fill kernel (and a copy
when its dtype was not the op's). Every case is checked against the same op on the CPU
(itself checked against NumPy elsewhere), on the dense path and the strided one; the launch
counts are structural (the same on a GPU and in the emulator), never times.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from minitorch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]
OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "pow": operator.pow, "mod": operator.mod, "floordiv": operator.floordiv, "eq": operator.eq,
    "lt": operator.lt, "ge": operator.ge, "and": operator.and_, "maximum": minitorch.maximum,
}


def kernels(fn):
    """The names of the kernels launched while fn() runs."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k.name.split("<")[0] for e in prof.events() for k in e.kernels]


def values(dtype: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int8", "uint8"):
        return rng.integers(1, 9, shape).astype(dtype)
    if dtype in ("int64", "int32"):
        return (rng.integers(1, 9, shape) * rng.choice([-1, 1], shape)).astype(dtype)  # no 0: n % x, n // x
    x = rng.uniform(0.25, 4.0, shape).astype(np.float32)
    return x if dtype != "float64" else x.astype(np.float64)


def tensor(a: np.ndarray, dtype: str, device: str) -> minitorch.Tensor:
    return minitorch.tensor(a, device=device).to(getattr(minitorch, dtype))


def layouts(t: minitorch.Tensor):
    """The same values as a contiguous tensor, a transposed view and a 0-dim tensor."""
    yield "contiguous", t
    yield "transposed", t.t()
    yield "stepped", t[:, ::2]
    yield "0-dim", t[1, 2]


def number_for(op: str, dtype: str):
    if dtype == "bool":
        return True
    if op in ("pow", "floordiv", "mod") or dtype in ("int64", "int32", "int8", "uint8"):
        return 3
    return 2.5


def assert_same(got: minitorch.Tensor, want: minitorch.Tensor) -> None:
    assert got.device.type == "cuda" and got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    g, w = got.detach().cpu(), want.detach()
    if g.dtype.is_floating_point:
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=1e-6, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def supported(op: str, dtype: str) -> bool:
    if dtype == "bool":
        return op in ("add", "mul", "eq", "lt", "ge", "and", "maximum")
    if op == "and":
        return dtype in ("int64", "int32", "int8", "uint8")
    return True


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(OPS))
def test_number_on_either_side_gives_the_cpu_result(op, dtype):
    if not supported(op, dtype):
        pytest.skip(f"{op} is not defined for {dtype}")
    f = OPS[op]
    a = values(dtype, (4, 6), 1)
    host, gpu = tensor(a, dtype, "cpu"), tensor(a, dtype, "cuda")
    n = number_for(op, dtype)
    for (name, h), (_, g) in zip(layouts(host), layouts(gpu)):
        assert_same(f(g, n), f(h, n))
        if op not in ("pow", "maximum", "and"):  # (n ** x grows past int8; maximum/and take one order)
            assert_same(f(n, g), f(n, h))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "bool"])
def test_a_number_costs_no_launch(dtype):
    x = tensor(values(dtype, (8, 6), 2), dtype, "cuda")
    n = True if dtype == "bool" else 2
    assert kernels(lambda: x * n) == ["dense_kernel"]
    assert kernels(lambda: n * x) == ["dense_kernel"]
    assert kernels(lambda: x.t() * n) == ["zip_kernel"]  # the strided path takes it too
    assert kernels(lambda: x == n) == ["dense_kernel"]
    if dtype != "bool":
        assert kernels(lambda: x.clamp(0, 1)) == ["ternary_dense_kernel"]  # both bounds in one kernel
        with minitorch.no_grad():
            assert kernels(lambda: x.add_(1)) == ["dense_kernel"]
            assert kernels(lambda: x.t().mul_(n)) == ["zip_kernel"]
            assert kernels(lambda: x.add_(x, alpha=2)) == ["dense_kernel", "dense_kernel"]


def test_a_float_number_meeting_a_16_bit_tensor_is_kept_in_float32():
    # h * 0.3 multiplies by 0.3 (float32), not by 0.3 rounded to bfloat16 (as PyTorch)
    h = minitorch.tensor([1.0, 3.0, 100.0], device="cuda").to(minitorch.bfloat16)
    want = (h.float() * 0.3).to(minitorch.bfloat16)
    assert_same(h * 0.3, want.cpu())


def test_narrow_integers_wrap_as_on_the_cpu():
    a = np.array([100, 120, -128, 7], np.int8)
    g, h = tensor(a, "int8", "cuda"), tensor(a, "int8", "cpu")
    assert_same(g + 100, h + 100)
    assert_same(g * 3, h * 3)
    with minitorch.no_grad():
        g.add_(100), h.add_(100)
    assert_same(g, h)


def test_a_0_dim_cpu_tensor_meets_a_gpu_tensor():
    x = minitorch.tensor([[1.0, -2.0], [3.0, 4.5]], device="cuda")
    s = minitorch.tensor(2.5)  # a CPU tensor, not a Python number
    assert_same(x * s, x.cpu() * s)
    assert_same(s - x, s - x.cpu())
    assert kernels(lambda: x * s) == ["dense_kernel"]
    # one that needs a gradient is copied over, and its gradient comes back to the CPU
    s = minitorch.tensor(2.5, requires_grad=True)
    x.requires_grad_()
    (x * s).sum().backward()
    assert s.grad.device.type == "cpu" and s.grad.item() == pytest.approx(6.5)
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.full((2, 2), 2.5))


@pytest.mark.parametrize("f", [
    lambda x: x ** 2.0, lambda x: x ** 0.0, lambda x: 2.0 ** x, lambda x: 1.0 / x, lambda x: 3 - x * 0.5,
    lambda x: x.clamp(-0.5, 0.5), lambda x: minitorch.maximum(x, 0.25), lambda x: x % 0.75, lambda x: (x + 1) ** 3,
    lambda x: minitorch.atan2(x, 2.0),
], ids=["square", "pow0", "exp2", "reciprocal", "affine", "clamp", "maximum", "remainder", "cube", "atan2"])
def test_gradients_through_numbers_match_the_cpu(f):
    a = np.array([[0.0, -0.75, 0.25], [1.5, -2.0, 0.5]], np.float64)
    g = minitorch.tensor(a, device="cuda", requires_grad=True)
    h = minitorch.tensor(a, requires_grad=True)
    yg, yh = f(g), f(h)
    assert_same(yg, yh.detach())
    w = minitorch.tensor(np.arange(6.0).reshape(2, 3) + 1)
    (yg * w.cuda()).sum().backward()
    (yh * w).sum().backward()
    assert_same(g.grad, h.grad)


def test_an_empty_tensor_and_a_number():
    x = minitorch.empty(0, 3, device="cuda")
    assert tuple((x * 2).shape) == (0, 3) and kernels(lambda: x + 1) == []


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8", "bool"])
def test_where_and_masked_fill_take_a_number_in_the_kernel(dtype):
    a = values(dtype, (4, 6), 3)
    g, h = tensor(a, dtype, "cuda"), tensor(a, dtype, "cpu")
    n = False if dtype == "bool" else 5
    mask = np.random.default_rng(4).random((4, 6)) < 0.5
    mg, mh = minitorch.tensor(mask, device="cuda"), minitorch.tensor(mask)
    assert_same(minitorch.where(mg, g, n), minitorch.where(mh, h, n))
    assert_same(minitorch.where(mg, n, g.t().t()), minitorch.where(mh, n, h))
    assert_same(minitorch.where(mg.t(), g.t(), n), minitorch.where(mh.t(), h.t(), n))  # strided
    assert_same(minitorch.where(mg, n, 1), minitorch.where(mh, n, 1))  # two numbers, the mask's device
    assert_same(g.masked_fill(mg, n), h.masked_fill(mh, n))
    assert_same(g.masked_fill(mg[0], n), h.masked_fill(mh[0], n))  # a broadcast mask
    if dtype != "int8":  # (narrow integers put the number on the GPU: their kernels widen through copies)
        assert kernels(lambda: minitorch.where(mg, g, n)) == ["where_dense_kernel"]
        assert kernels(lambda: g.masked_fill(mg, n)) == ["where_dense_kernel"]
        assert kernels(lambda: minitorch.where(mg.t(), g.t(), n)) == ["where_kernel"]  # strided


def test_masked_fill_with_minus_infinity_and_a_value_that_needs_a_gradient():
    s = minitorch.tensor([[0.5, 1.0], [2.0, -1.0]], device="cuda", requires_grad=True)
    causal = minitorch.tensor([[False, True], [False, False]], device="cuda")
    y = s.masked_fill(causal, float("-inf")).softmax(-1)
    assert y.cpu().tolist()[0] == [1.0, 0.0]
    y.sum().backward()
    v = minitorch.tensor(3.0, requires_grad=True)  # a CPU value that needs a gradient: copied over
    s.masked_fill(causal, v).sum().backward()
    assert v.grad.item() == 1.0
