"""minitorch.special (python/minitorch/special.py): PyTorch's torch.special names, as aliases
of the elementwise ops or short compositions, checked against the math module and the
identities that define them, on every device; a few against PyTorch in tests/golden_ops."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import DEVICES

S = minitorch.special


def T(v, device):
    return minitorch.tensor(v, dtype=minitorch.float64, device=device)


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


@pytest.mark.parametrize("device", DEVICES)
def test_normal_distribution_functions(device):
    x = [-30.0, -6.0, -1.0, 0.0, 0.5, 3.0]
    np.testing.assert_allclose(S.ndtr(T(x, device)).cpu().numpy(), [phi(v) for v in x], rtol=1e-13)
    p = [1e-10, 0.025, 0.5, 0.9, 1 - 1e-10]
    back = S.ndtr(S.ndtri(T(p, device))).cpu().numpy()
    np.testing.assert_allclose(back, p, rtol=1e-6)  # 2p - 1 rounds: ~1e-7 relative near p = 0
    assert S.ndtri(T([0.0, 1.0], device)).tolist() == [-math.inf, math.inf]
    tail = [1e-300, 1e-20, 1e-10, 1 - 1e-12]  # 2p is exact: the left tail keeps its digits
    q = S.ndtri(T(tail, device)).cpu().numpy()
    np.testing.assert_allclose([phi(v) for v in q[:3]], tail[:3], rtol=1e-12)
    assert q[0] == pytest.approx(-37.04710, abs=1e-4) and q[3] == pytest.approx(7.034483, abs=1e-5)
    f = S.ndtri(minitorch.tensor([1e-10, 1e-6], device=device))
    np.testing.assert_allclose(f.cpu().numpy(), [-6.361340902, -4.753424309], rtol=1e-6)
    x = T([1.0, 0.25], device, ).requires_grad_()
    S.ndtri(x * 0.5).sum().backward()  # d ndtri(p)/dp = 1 / phi(ndtri(p)): sqrt(2 pi) at p = 1/2
    assert x.grad[0].item() == pytest.approx(0.5 * math.sqrt(2 * math.pi), rel=1e-12)
    lx = [-200.0, -20.5, -19.5, -5.5, 0.0, 4.0]
    want = [-20000.0 - 0.5 * math.log(2 * math.pi) - math.log(200) + math.log1p(-1 / 200 ** 2 + 3 / 200 ** 4),
            math.log(phi(-20.5)), math.log(phi(-19.5)), math.log(phi(-5.5)), math.log(0.5), math.log(phi(4.0))]
    np.testing.assert_allclose(S.log_ndtr(T(lx, device)).cpu().numpy(), want, rtol=1e-10)
    right = S.log_ndtr(T([6.0, 10.0, 40.0], device)).cpu().numpy()  # log1p keeps what log(1 - tiny) drops
    np.testing.assert_allclose(right, [math.log1p(-phi(-6.0)), math.log1p(-phi(-10.0)), 0.0], rtol=1e-12)
    assert right[1] < 0
    f = S.log_ndtr(minitorch.tensor([-30.0, -15.0], device=device))  # float32: no underflow to -inf
    assert f.dtype == minitorch.float32
    np.testing.assert_allclose(f.cpu().numpy(), [math.log(phi(-30.0)), math.log(phi(-15.0))], rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_aliases_and_small_compositions(device):
    x = T([0.5, 1.0, 3.0], device)
    for name, base in (("expit", "sigmoid"), ("gammaln", "lgamma"), ("psi", "digamma"), ("erf", "erf"),
                       ("erfc", "erfc"), ("exp2", "exp2"), ("expm1", "expm1"), ("log1p", "log1p"), ("sinc", "sinc")):
        assert getattr(S, name)(x).tolist() == getattr(minitorch, base)(x).tolist(), name
    assert S.erfinv(T([0.5], device)).tolist() == minitorch.erfinv(T([0.5], device)).tolist()
    assert S.polygamma(0, x).tolist() == x.digamma().tolist()
    assert S.polygamma(1, T([1.0], device)).item() == pytest.approx(math.pi ** 2 / 6, rel=1e-12)
    assert S.entr(T([0.0, 0.5, -1.0, float("nan")], device)).cpu().numpy().tolist()[:3] == [
        0.0, -0.5 * math.log(0.5), -math.inf]
    assert math.isnan(S.entr(T([float("nan")], device)).item())
    # its derivative is -(1 + log x) everywhere, as PyTorch's: +inf at 0, NaN below it
    e = T([0.0, 0.5, -1.0, 2.0], device).requires_grad_()
    S.entr(e).sum().backward()
    g = e.grad.cpu().numpy()
    assert g[0] == math.inf and math.isnan(g[2])
    np.testing.assert_allclose(g[[1, 3]], [-(1 + math.log(0.5)), -(1 + math.log(2.0))], rtol=1e-15)
    mg = S.multigammaln(T([2.5, 4.0], device), 3).cpu().numpy()
    want = [3 * 2 / 4 * math.log(math.pi) + sum(math.lgamma(a - j / 2) for j in range(3)) for a in (2.5, 4.0)]
    np.testing.assert_allclose(mg, want, rtol=1e-13)
    assert S.xlog1py(T([0.0, 2.0], device), T([-1.0, 1.0], device)).tolist() == [0.0, 2 * math.log(2)]
    assert S.xlog1py(T([1.0], device), T([1e-20], device)).item() == 1e-20
    assert S.xlog1py(minitorch.tensor([1.0], device=device), 1e-10).item() == pytest.approx(1e-10, rel=1e-6)
    assert S.xlog1py(2.0, T([1.0], device)).tolist() == [2 * math.log(2)]
    half = minitorch.tensor([1.0], dtype=minitorch.float16, device=device)
    assert S.xlog1py(minitorch.tensor([1.0], device=device), half).dtype == minitorch.float32  # promoted
    assert S.xlog1py(half, minitorch.tensor([1.0], device=device)).dtype == minitorch.float32
    assert S.round(T([1.2345, -2.5], device), decimals=2).tolist() == [1.23, -2.5]
    assert S.round(T([0.5, 1.5], device)).tolist() == [0.0, 2.0]
    v = T([[1.0, 2.0], [3.0, 5.0]], device)
    assert S.logsumexp(v, 1).tolist() == minitorch.logsumexp(v, 1).tolist()
    assert S.softmax(v, 1).tolist() == minitorch.softmax(v, 1).tolist()


def test_errors():
    with pytest.raises(NotImplementedError, match="n = 2"):
        S.polygamma(2, minitorch.ones(2))
    with pytest.raises(ValueError):
        S.polygamma(-1, minitorch.ones(2))
    with pytest.raises(ValueError, match=r"\(p-1\)/2"):
        S.multigammaln(minitorch.tensor([0.5]), 3)
    with pytest.raises(TypeError):
        S.ndtr([0.5])
