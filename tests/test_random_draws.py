"""randperm, bernoulli / bernoulli_ and normal (ops/sampling.py) on every device: what they
return (a permutation; 0 and 1 in the input's dtype; samples of the given means and spreads,
checked by their statistics with wide margins), reproducibility after manual_seed and with a
Generator, dtypes, launch counts, and their errors."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, launches

needs_cuda = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


# ---------------------------------------------------------------- randperm ----

@pytest.mark.parametrize("device", DEVICES)
def test_randperm_is_a_permutation(device):
    for n in (0, 1, 2, 7, 1000):
        p = minitorch.randperm(n, device=device)
        assert p.dtype == minitorch.int64 and p.shape == (n,) and p.device.type == device
        assert sorted(p.tolist()) == list(range(n))
    for dtype in (minitorch.int32, minitorch.uint8, minitorch.float32, minitorch.float16):
        p = minitorch.randperm(200, dtype=dtype, device=device)
        assert p.dtype == dtype and sorted(int(v) for v in p.tolist()) == list(range(200))
    p = minitorch.randperm(5, dtype=minitorch.float64, device=device, requires_grad=True)
    assert p.requires_grad and p.is_leaf


@pytest.mark.parametrize("device", DEVICES)
def test_randperm_is_random_and_reproducible(device):
    minitorch.manual_seed(3)
    a = minitorch.randperm(50, device=device).tolist()
    b = minitorch.randperm(50, device=device).tolist()
    minitorch.manual_seed(3)
    assert minitorch.randperm(50, device=device).tolist() == a
    assert a != b and a != list(range(50))
    g = minitorch.Generator(7)
    c = minitorch.randperm(50, generator=g, device=device).tolist()
    assert minitorch.randperm(50, generator=minitorch.Generator(7), device=device).tolist() == c
    assert sorted(c) == list(range(50))
    # every element lands in every position about equally often
    first = [minitorch.randperm(4, device=device)[0].item() for _ in range(400)]
    assert all(60 <= first.count(k) <= 140 for k in range(4)), [first.count(k) for k in range(4)]


@needs_cuda
def test_randperm_launches():
    # the keys, then the sort: CUB's radix sort on a GPU, the readable bitonic + merge
    # passes in the emulator; no copy through the host
    ks = launches(lambda: minitorch.randperm(10000, device="cuda"))
    assert ks[0].startswith("random_kernel") and len(ks) <= 8, ks


def test_randperm_errors():
    with pytest.raises(ValueError, match="non-negative"):
        minitorch.randperm(-1)
    with pytest.raises(ValueError, match="too large for result tensor type"):
        minitorch.randperm(300, dtype=minitorch.uint8)
    with pytest.raises(ValueError, match="too large for result tensor type"):
        minitorch.randperm(3000, dtype=minitorch.float16)
    with pytest.raises(TypeError):
        minitorch.randperm(3, dtype=minitorch.bool)
    with pytest.raises(TypeError):
        minitorch.randperm(2.5)


# ---------------------------------------------------------------- bernoulli ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_bernoulli_values(dtype, device):
    dt = getattr(minitorch, dtype)
    n = 200_000
    for p in (0.0, 0.3, 1.0):
        x = minitorch.bernoulli(minitorch.full((n,), p, dtype=dt, device=device))
        assert x.dtype == dt and x.shape == (n,) and not x.requires_grad
        v = x.float().cpu().numpy()
        assert set(np.unique(v)) <= {0.0, 1.0}
        assert abs(v.mean() - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12, (p, v.mean())
    probs = minitorch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=dt, device=device)
    assert probs.bernoulli().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    x = minitorch.zeros(3, 1000, dtype=dt, device=device)
    v = minitorch.bernoulli(x, 0.25).float().cpu().numpy()
    assert abs(v.mean() - 0.25) < 0.04


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_in_place_and_reproducible(device):
    x = minitorch.empty(1000, device=device)
    assert x.bernoulli_(0.5) is x and set(np.unique(x.cpu().numpy())) <= {0.0, 1.0}
    p = minitorch.tensor([0.0, 1.0], device=device)
    y = minitorch.full((3, 2), 7, dtype=minitorch.int64, device=device)
    assert y.bernoulli_(p).tolist() == [[0, 1]] * 3  # a tensor p broadcast to self; self keeps its dtype
    minitorch.manual_seed(5)
    a = minitorch.bernoulli(minitorch.full((64,), 0.5, device=device)).tolist()
    minitorch.manual_seed(5)
    assert minitorch.bernoulli(minitorch.full((64,), 0.5, device=device)).tolist() == a
    g1, g2 = minitorch.Generator(9), minitorch.Generator(9)
    probs = minitorch.full((64,), 0.5, device=device)
    assert minitorch.bernoulli(probs, generator=g1).tolist() == minitorch.bernoulli(probs, generator=g2).tolist()


def test_bernoulli_errors():
    with pytest.raises(TypeError, match="floating point"):
        minitorch.bernoulli(minitorch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        minitorch.bernoulli(minitorch.tensor([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        minitorch.bernoulli(minitorch.tensor([float("nan")]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        minitorch.bernoulli(minitorch.zeros(2), 2.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        minitorch.zeros(2).bernoulli_(minitorch.tensor([-0.5, 0.5]))
    with pytest.raises(TypeError):
        minitorch.bernoulli([0.5])
    leaf = minitorch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.bernoulli_(0.5)


# ---------------------------------------------------------------- normal ----

@pytest.mark.parametrize("device", DEVICES)
def test_normal_forms(device):
    n = 100_000
    mean = minitorch.tensor([[-3.0], [0.0], [5.0]], device=device)   # (3, 1)
    std = minitorch.full((n,), 2.0, device=device)                    # broadcast: (3, n)
    x = minitorch.normal(mean, std)
    assert x.shape == (3, n) and x.dtype == minitorch.float32 and x.device.type == device
    v = x.cpu().numpy()
    np.testing.assert_allclose(v.mean(axis=1), [-3.0, 0.0, 5.0], atol=0.05)
    np.testing.assert_allclose(v.std(axis=1), [2.0, 2.0, 2.0], rtol=0.03)
    y = minitorch.normal(1.0, std)
    assert y.shape == (n,) and abs(y.mean().item() - 1.0) < 0.05
    z = minitorch.normal(mean.double(), 0.5)
    assert z.shape == (3, 1) and z.dtype == minitorch.float64
    w = minitorch.normal(2.0, 3.0, (400, 250), device=device)
    assert w.shape == (400, 250) and w.device.type == device
    assert abs(w.mean().item() - 2.0) < 0.05 and abs(w.std().item() - 3.0) < 0.05
    assert minitorch.normal(0.0, 1.0, size=(2,), dtype=minitorch.float64).dtype == minitorch.float64
    assert (minitorch.normal(mean, minitorch.zeros(1, device=device)) == mean).all().item()
    r = minitorch.normal(0.0, 1.0, (3,), device=device, requires_grad=True)
    assert r.requires_grad and r.is_leaf


@pytest.mark.parametrize("device", DEVICES)
def test_normal_and_bernoulli_have_zero_gradients_and_are_reproducible(device):
    m = minitorch.zeros(4, device=device, requires_grad=True)
    s = minitorch.ones(1, device=device, requires_grad=True)
    p = minitorch.full((2, 4), 0.5, device=device, requires_grad=True)
    # PyTorch defines these gradients as zeros (no reparameterization): a backward through
    # a sample runs and gives zeros of each parameter's shape
    (minitorch.normal(m, s).sum() + minitorch.bernoulli(p).sum() + minitorch.bernoulli(p, 0.2).sum()).backward()
    assert m.grad.tolist() == [0.0] * 4 and s.grad.tolist() == [0.0] and p.grad.abs().sum().item() == 0
    assert not minitorch.normal(m.detach(), 1.0).requires_grad
    minitorch.manual_seed(11)
    a = minitorch.normal(m, 1.0).tolist()
    minitorch.manual_seed(11)
    assert minitorch.normal(m, 1.0).tolist() == a
    assert (minitorch.normal(0.0, 1.0, (5,), generator=minitorch.Generator(2)).tolist()
            == minitorch.normal(0.0, 1.0, (5,), generator=minitorch.Generator(2)).tolist())


def test_normal_errors():
    with pytest.raises(ValueError, match="std >= 0.0"):
        minitorch.normal(0.0, -1.0, (2,))
    with pytest.raises(ValueError, match="std >= 0.0"):
        minitorch.normal(minitorch.zeros(2), minitorch.tensor([1.0, -1.0]))
    with pytest.raises(TypeError, match="size"):
        minitorch.normal(0.0, 1.0)
    with pytest.raises(TypeError, match="size"):
        minitorch.normal(minitorch.zeros(2), 1.0, (2,))
    with pytest.raises(TypeError, match="floating point"):
        minitorch.normal(minitorch.tensor([1, 2]), 1.0)
    with pytest.raises(TypeError):
        minitorch.normal("0", 1.0, (2,))
    with pytest.raises(ValueError):
        minitorch.normal(minitorch.zeros(2), minitorch.ones(3))
