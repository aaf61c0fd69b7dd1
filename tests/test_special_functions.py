"""The special functions among the elementwise ops (op_list.h; math in elementwise_math.h,
one kernel each on every device): erfc, erfinv, lgamma, digamma (and _trigamma, digamma's
gradient), log10, exp2, and the sign tests signbit / isposinf / isneginf, with the aliases
sgn and fix. Known values and identities, poles and edges, gradients up to the order that is
implemented. tests/opinfo checks them against NumPy / the math module on every dtype;
tests/golden_ops against PyTorch."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import DEVICES
from minitorch.testing import gradcheck

EULER = 0.5772156649015329


def T(values, device, dtype=minitorch.float64, grad=False):
    return minitorch.tensor(values, dtype=dtype, device=device, requires_grad=grad)


@pytest.mark.parametrize("device", DEVICES)
def test_erfinv_inverts_erf(device):
    y = np.array([-0.999999, -0.9, -0.3, 0.0, 1e-8, 0.5, 0.99, 0.9999999])
    x = T(y, device).erfinv().cpu().numpy()
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=1e-14, atol=1e-15)
    # near +-1 erf(x) rounds to +-1: the tails are solved through erfc (values checked with mpmath)
    near_one = T([1 - 1e-15, 1 - 2.0 ** -53, 1 - 1e-12, 0.9999999999, -(1 - 1e-15), 1e-20], device).erfinv()
    np.testing.assert_allclose(near_one.cpu().numpy(), [5.675915739744712, 5.863584748755168, 5.042031898572696,
                                                        4.572824958544925, -5.675915739744712, 8.86226925452758e-21],
                               rtol=1e-12)
    edges = T([1.0, -1.0, 1.5, -2.0, float("nan")], device).erfinv().cpu().numpy()
    assert edges[0] == np.inf and edges[1] == -np.inf and np.isnan(edges[2:]).all()
    y32 = y.astype(np.float32)  # near +-1 the rounding of y itself moves erfinv(y) a lot
    f = T(y32, device, minitorch.float32).erfinv().cpu().numpy()
    want = T(y32.astype(np.float64), device).erfinv().cpu().numpy()
    np.testing.assert_allclose(f, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_digamma_values(device):
    got = T([1.0, 0.5, 2.0, -0.5, 100.0, 1e-8], device).digamma().cpu().numpy()
    want = [-EULER, -EULER - 2 * math.log(2), 1 - EULER, -EULER - 2 * math.log(2) + 2,
            4.600161852738087, -1e8 - EULER]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    poles = T([0.0, -0.0, -1.0, -3.0], device).digamma().cpu().numpy()
    assert poles[0] == -np.inf and poles[1] == np.inf and np.isnan(poles[2:]).all()
    # psi(x + 1) = psi(x) + 1/x, negative x included
    x = np.random.default_rng(0).uniform(-6, 6, 200)
    x = x[np.abs(x - np.round(x)) > 1e-3]
    a = T(x + 1, device).digamma().cpu().numpy()
    b = T(x, device).digamma().cpu().numpy() + 1 / x
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
def test_lgamma_values(device):
    x = [1.0, 2.0, 0.5, 10.0, -0.5, -2.5, 1e-10]
    got = T(x, device).lgamma().cpu().numpy()
    np.testing.assert_allclose(got, [math.lgamma(v) for v in x], rtol=1e-13)
    assert T([0.0, -1.0], device).lgamma().cpu().numpy().tolist() == [np.inf, np.inf]
    ints = minitorch.tensor([1, 5, 10], device=device).lgamma()  # integers compute in float32
    assert ints.dtype == minitorch.float32
    np.testing.assert_allclose(ints.cpu().numpy(), [0.0, math.log(24), math.log(362880)], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_gamma_family_gradients(device):
    """lgamma' = digamma, digamma' = trigamma (pi^2 / 6 at 1); a third derivative raises."""
    x = T([1.0], device, grad=True)
    (d1,) = minitorch.autograd.grad(x.lgamma().sum(), (x,), create_graph=True)
    (d2,) = minitorch.autograd.grad(d1.sum(), (x,), create_graph=True)
    assert d1.item() == pytest.approx(-EULER, rel=1e-12)
    assert d2.item() == pytest.approx(math.pi ** 2 / 6, rel=1e-12)
    with pytest.raises(RuntimeError, match="derivative of _trigamma is not implemented"):
        minitorch.autograd.grad(d2.sum(), (x,))
    rng = np.random.default_rng(1)
    for op, lo, hi in (("lgamma", 0.2, 8), ("digamma", 0.2, 8), ("erfinv", -0.9, 0.9), ("erfc", -2, 2),
                       ("log10", 0.1, 5), ("exp2", -3, 3)):
        t = T(rng.uniform(lo, hi, 6), device, grad=True)
        assert gradcheck(lambda a: getattr(a, op)(), (t,)), op
    t = T(rng.uniform(-3.9, -3.1, 4), device, grad=True)  # negative: reflection in both
    assert gradcheck(lambda a: a.digamma(), (t,))


@pytest.mark.parametrize("device", DEVICES)
def test_log10_exp2_erfc(device):
    x = T([1e-3, 1.0, 10.0, 1234.5], device)
    np.testing.assert_allclose(x.log10().cpu().numpy(), np.log10([1e-3, 1.0, 10.0, 1234.5]), rtol=1e-15)
    assert T([-2.0, 0.0, 10.0], device).exp2().tolist() == [0.25, 1.0, 1024.0]
    e = T([-30.0, 0.0, 5.0, 10.0], device).erfc().cpu().numpy()
    np.testing.assert_allclose(e, [2.0, 1.0, math.erfc(5.0), math.erfc(10.0)], rtol=1e-13)
    assert e[3] > 0  # erfc keeps the tail that 1 - erf(x) rounds to 0
    assert minitorch.tensor([2, 3], device=device).exp2().dtype == minitorch.float32


@pytest.mark.parametrize("device", DEVICES)
def test_sign_tests(device):
    x = T([-0.0, 0.0, -1.0, 2.0, float("inf"), float("-inf"), float("nan")], device)
    assert x.signbit().tolist() == [True, False, True, False, False, True, False]
    assert x.isposinf().tolist() == [False, False, False, False, True, False, False]
    assert x.isneginf().tolist() == [False, False, False, False, False, True, False]
    i = minitorch.tensor([-3, 0, 4], device=device)
    assert i.signbit().tolist() == [True, False, False] and not i.isposinf().any().item()
    assert minitorch.tensor([200], dtype=minitorch.uint8, device=device).signbit().tolist() == [False]
    assert minitorch.tensor([True], device=device).isneginf().tolist() == [False]
    assert minitorch.sgn is minitorch.sign and minitorch.Tensor.fix is minitorch.Tensor.trunc
    assert T([-1.5, 2.7], device).fix().tolist() == [-1.0, 2.0]
    assert T([-1.5, 0.0, 2.7], device).sgn().tolist() == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_inputs(dtype, device):
    """16-bit inputs compute in float32 and round once, as every elementwise op."""
    dt = getattr(minitorch, dtype)
    x = np.array([0.25, 0.5, 2.0, 3.0])
    for op, ref in (("lgamma", np.vectorize(math.lgamma)), ("exp2", np.exp2), ("log10", np.log10)):
        got = getattr(minitorch.tensor(x, dtype=dt, device=device), op)()
        assert got.dtype == dt
        np.testing.assert_allclose(got.float().cpu().numpy(), ref(x), rtol=1e-2, atol=1e-2)
