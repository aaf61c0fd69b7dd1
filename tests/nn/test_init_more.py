"""nn.init's trunc_normal_, orthogonal_, eye_, dirac_ and sparse_ (python/minitorch/nn/init.py)
on every device: bounds and moments of the truncated normal (checked against its formulas,
with wide margins), orthogonality, the identity convolution, sparsity per column, 16-bit
parameters, reproducibility, and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitorch
from conftest import DEVICES

init = minitorch.nn.init


def truncated_moments(mean, std, a, b):
    """Mean and standard deviation of N(mean, std) kept to [a, b]."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    m = (pdf(alpha) - pdf(beta)) / z
    var = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - m * m
    return mean + std * m, std * math.sqrt(var)


@pytest.mark.parametrize("device", DEVICES)
def test_trunc_normal(device):
    for mean, std, a, b in [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04), (1.0, 2.0, 0.5, 6.0)]:
        w = minitorch.empty(400, 500, device=device)
        assert init.trunc_normal_(w, mean, std, a, b) is w
        v = w.cpu().numpy().astype(np.float64)
        assert v.min() >= a and v.max() <= b
        m, s = truncated_moments(mean, std, a, b)
        assert abs(v.mean() - m) < 0.01 * std and abs(v.std() - s) < 0.01 * std, (mean, std, a, b, v.mean(), v.std())
    h = minitorch.empty(64, 64, dtype=minitorch.float16, device=device)
    init.trunc_normal_(h, std=0.02, a=-0.04, b=0.04)  # a and b are absolute bounds (PyTorch's)
    assert h.dtype == minitorch.float16 and h.abs().max().item() <= float(np.float16(0.04))
    p = minitorch.nn.Parameter(minitorch.empty(8, 8, device=device))
    init.trunc_normal_(p)  # a leaf that requires grad: written under no_grad
    assert p.requires_grad and p.grad_fn is None
    g = [init.trunc_normal_(minitorch.empty(5), generator=minitorch.Generator(4)).tolist() for _ in range(2)]
    assert g[0] == g[1]


@pytest.mark.parametrize("device", DEVICES)
def test_orthogonal(device):
    for shape in [(6, 4), (4, 6), (5, 5), (6, 2, 3), (1, 7)]:
        w = minitorch.empty(*shape, device=device)
        assert init.orthogonal_(w, gain=2.0) is w
        f = w.reshape(shape[0], -1).cpu().numpy().astype(np.float64)
        gram = f.T @ f if f.shape[0] >= f.shape[1] else f @ f.T
        np.testing.assert_allclose(gram, 4 * np.eye(gram.shape[0]), atol=1e-5)
    assert init.orthogonal_(minitorch.empty(0, 3)).shape == (0, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_eye_and_dirac(device):
    assert init.eye_(minitorch.empty(2, 3, device=device)).tolist() == [[1, 0, 0], [0, 1, 0]]
    w = init.dirac_(minitorch.empty(4, 2, 3, 3, device=device), groups=2)
    x = minitorch.randn(2, 4, 5, 5, device=device)
    y = minitorch.nn.functional.conv2d(x, w, padding=1, groups=2)
    np.testing.assert_allclose(y.cpu().numpy(), x.cpu().numpy(), atol=1e-6)
    w1 = init.dirac_(minitorch.empty(3, 5, 4, device=device))  # more inputs than outputs: the first 3 pass
    x1 = minitorch.randn(1, 5, 7, device=device)
    y1 = minitorch.nn.functional.conv1d(x1, w1, padding=2)[..., :7]
    np.testing.assert_allclose(y1.cpu().numpy(), x1[:, :3].cpu().numpy(), atol=1e-6)
    w3 = init.dirac_(minitorch.empty(2, 2, 3, 3, 3, device=device))
    assert w3.sum().item() == 2 and w3[1, 1, 1, 1, 1].item() == 1


@pytest.mark.parametrize("device", DEVICES)
def test_sparse(device):
    w = init.sparse_(minitorch.empty(10, 6, device=device), sparsity=0.3, std=0.5)
    zeros = (w == 0).sum(0).tolist()
    assert zeros == [3] * 6
    assert 0.2 < w[w != 0].std().item() < 1.0


def test_errors():
    with pytest.raises(ValueError, match="a < b"):
        init.trunc_normal_(minitorch.empty(3), a=1.0, b=-1.0)
    with pytest.raises(ValueError, match="std"):
        init.trunc_normal_(minitorch.empty(3), std=-1.0)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(minitorch.empty(3))
    with pytest.raises(ValueError, match="2-D"):
        init.eye_(minitorch.empty(2, 2, 2))
    with pytest.raises(ValueError, match="3, 4 or 5-D"):
        init.dirac_(minitorch.empty(2, 2))
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(minitorch.empty(3, 2, 3), groups=2)
    with pytest.raises(ValueError, match="sparsity"):
        init.sparse_(minitorch.empty(3, 3), 1.5)
    assert init.calculate_gain("selu") == 0.75 and init.calculate_gain("conv3d") == 1.0
