"""minitorch.autocast: PyTorch's op lists (lower precision, float32, the rest promoted) on
"cuda" (float16) and "cpu" (bfloat16), nesting, the decorator, threads, what is not cast,
and mixed-precision training with a GradScaler."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import CUDA_SKIP_REASON, DEVICES
from minitorch import nn
from minitorch.amp import GradScaler

F16, BF16, F32, F64 = minitorch.float16, minitorch.bfloat16, minitorch.float32, minitorch.float64
LOW = {"cuda": F16, "cpu": BF16}


@pytest.mark.parametrize("device", DEVICES)
def test_lower_precision_ops(device):
    low = LOW[device]
    x, w, b = minitorch.randn(4, 8, device=device), minitorch.randn(3, 8, device=device), minitorch.randn(3, device=device)
    img, k = minitorch.randn(2, 1, 6, 6, device=device), minitorch.randn(2, 1, 3, 3, device=device)
    q = minitorch.randn(2, 5, 4, device=device)
    with minitorch.autocast(device):
        assert F.linear(x, w, b).dtype == low and (x @ w.t()).dtype == low and x.matmul(w.t()).dtype == low
        assert minitorch.matmul(x, w.t()).dtype == low and x.mm(w.t()).dtype == low
        assert minitorch.bmm(q, q.transpose(1, 2)).dtype == low and minitorch.einsum("ij,kj->ik", x, w).dtype == low
        assert F.conv2d(img, k).dtype == low and nn.Linear(8, 2).to(device)(x).dtype == low
        assert F.scaled_dot_product_attention(q, q, q).dtype == low
        y = F.linear(x, w)
        assert (y + b).dtype == F32  # not listed: promoted as usual
        assert F.cross_entropy(y, minitorch.tensor([0, 1, 2, 0], device=device)).dtype == F32  # losses: float32
        assert F.mse_loss(y, y.detach()).dtype == F32
    assert F.linear(x, w).dtype == F32  # outside: as before


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_float32_ops_on_cuda():
    x = minitorch.randn(4, 8, device="cuda").half()
    with minitorch.autocast("cuda"):
        for y in (x.exp(), x.log(), x.sum(), x.sum(0), x.cumsum(1), x.pow(2), x ** 2, x.softmax(1), F.softmax(x, 1),
                  F.log_softmax(x, 1), F.layer_norm(x, (8,)), x.logsumexp(1), x.norm(), minitorch.exp(x)):
            assert y.dtype == F32, y
        assert x.sum(dtype=F16).dtype == F16  # an explicit dtype is kept
        assert x.tanh().dtype == F16 and x.relu().dtype == F16  # not listed: the input's dtype


def test_cpu_keeps_bfloat16_where_pytorch_does():
    x = minitorch.randn(4, 8).bfloat16()
    with minitorch.autocast("cpu"):
        assert x.exp().dtype == BF16 and x.sum().dtype == BF16 and F.softmax(x, 1).dtype == BF16
        assert F.cross_entropy(x, minitorch.tensor([0, 1, 2, 3])).dtype == F32


def test_what_is_not_cast():
    d = minitorch.randn(3, 3, dtype=F64)
    i = minitorch.ones(3, 3, dtype=minitorch.int64)
    with minitorch.autocast("cpu"):
        assert (d @ d).dtype == F64 and (i @ i).dtype == minitorch.int64  # float64 and ints stay
        if minitorch.cuda.is_available():
            c = minitorch.randn(3, 3, device="cuda")
            assert (c @ c).dtype == F32  # a cuda tensor in a cpu region


def test_nesting_decorator_and_threads():
    x = minitorch.randn(2, 2)
    with minitorch.autocast("cpu"):
        assert (x @ x).dtype == BF16 and minitorch.is_autocast_enabled("cpu")
        with minitorch.autocast("cpu", enabled=False):
            assert (x @ x).dtype == F32 and not minitorch.is_autocast_enabled("cpu")
        with minitorch.autocast("cpu", dtype=F16):
            assert (x @ x).dtype == F16 and minitorch.get_autocast_dtype("cpu") == F16
        assert (x @ x).dtype == BF16
        seen = []
        t = threading.Thread(target=lambda: seen.append((x @ x).dtype))
        t.start()
        t.join()
        assert seen == [F32]  # autocast is per thread
    assert not minitorch.is_autocast_enabled("cpu") and minitorch.get_autocast_dtype("cpu") == BF16
    # outside every region the ops are the plain ones again: autocast costs nothing there
    assert not hasattr(minitorch.Tensor.__matmul__, "_autocast_original")
    assert not hasattr(F.linear, "_autocast_original") and not hasattr(minitorch.Tensor.sum, "_autocast_original")

    @minitorch.autocast("cpu")
    def f(a):
        return a @ a

    assert f(x).dtype == BF16 and (x @ x).dtype == F32


def test_bad_arguments():
    with pytest.raises(ValueError, match="device_type"):
        minitorch.autocast("tpu")
    with pytest.warns(UserWarning, match="not supported"):
        a = minitorch.autocast("cpu", dtype=F64)
    with a:
        assert (minitorch.ones(2, 2) @ minitorch.ones(2, 2)).dtype == F32
    if not minitorch.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            minitorch.autocast("cuda")


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_reach_float32_parameters(device):
    minitorch.manual_seed(0)
    lin = nn.Linear(8, 3).to(device)
    x = minitorch.randn(5, 8, device=device)
    with minitorch.autocast(device):
        loss = F.cross_entropy(lin(x), minitorch.tensor([0, 1, 2, 0, 1], device=device))
    loss.backward()
    assert lin.weight.grad.dtype == F32 and lin.bias.grad.dtype == F32
    ref = nn.Linear(8, 3).to(device)
    ref.load_state_dict(lin.state_dict())
    F.cross_entropy(ref(x), minitorch.tensor([0, 1, 2, 0, 1], device=device)).backward()
    tol = 2**-7 if device == "cpu" else 2**-9  # bfloat16 / float16 products
    np.testing.assert_allclose(lin.weight.grad.cpu().numpy(), ref.weight.grad.cpu().numpy(), atol=4 * tol, rtol=4 * tol)


@pytest.mark.parametrize("device", DEVICES)
def test_mixed_precision_training_with_a_grad_scaler(device):
    """A small MLP on a separable problem: autocast + GradScaler reaches the float32 run's accuracy."""
    rng = np.random.default_rng(0)
    pts = rng.standard_normal((256, 10)).astype(np.float32)
    labels = (pts[:, :3].sum(1) > 0).astype(np.int64) + (pts[:, 3] > 1).astype(np.int64)
    x, y = minitorch.tensor(pts, device=device), minitorch.tensor(labels, device=device)

    def train(mixed: bool) -> float:
        minitorch.manual_seed(1)
        model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
        opt = minitorch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        scaler = GradScaler(device, enabled=mixed)
        for _ in range(60):
            opt.zero_grad()
            with minitorch.autocast(device, enabled=mixed):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        assert all(p.dtype == F32 for p in model.parameters())
        return float((model(x).argmax(1) == y).float().mean())

    full, mixed = train(False), train(True)
    assert full > 0.9 and mixed > full - 0.03, (full, mixed)


def count_casts(fn):
    """How many `to` ops fn ran (the profiler's op names)."""
    from minitorch.profiler import profile

    with profile() as prof:
        fn()
    return sum(1 for e in prof.events() if e.name in ("to", "_to_copy", "copy"))


@pytest.mark.parametrize("device", DEVICES)
def test_a_weight_is_cast_once_per_region(device):
    """PyTorch's autocast cache: a layer used three times casts its weight and bias once;
    the gradients are those of the uncached casts, and the cache goes with the region."""
    minitorch.manual_seed(0)
    lin = nn.Linear(6, 6).to(device)
    x = minitorch.randn(4, 6, device=device)

    def forward(cache_enabled):
        with minitorch.autocast(device, cache_enabled=cache_enabled):
            out = lin(lin(lin(x)))
        return out.float().sum()

    grads = {}
    for cache in (True, False):
        lin.zero_grad()
        forward(cache).backward()
        grads[cache] = lin.weight.grad.cpu().numpy().copy()
    # The cached cast sums the three uses' gradients in 16 bits before its one cast back
    np.testing.assert_allclose(grads[True], grads[False], rtol=2**-5, atol=2**-5)
    cached, uncached = count_casts(lambda: forward(True)), count_casts(lambda: forward(False))
    # x is cast once in both; the uncached region casts weight and bias at each of 3 calls.
    assert uncached - cached == 2 * 2
    from minitorch.amp import autocast_mode
    assert getattr(autocast_mode._state, "cache", None) is None


def test_the_cache_sees_in_place_changes_and_no_grad():
    lin = nn.Linear(3, 3)
    x = minitorch.ones(2, 3)
    with minitorch.autocast("cpu"):
        a = lin(x)
        with minitorch.no_grad():
            lin.weight.add_(1.0)  # the cached bfloat16 weight is stale now
            c = lin(x)  # under no_grad: not cached (its cast records no graph)
        b = lin(x)
    assert c.grad_fn is None and b.grad_fn is not None
    np.testing.assert_allclose(b.detach().float().numpy(), a.detach().float().numpy() + 3.0, rtol=2**-7, atol=2**-6)
    b.float().sum().backward()
    assert lin.weight.grad is not None


def test_regions_reuse_their_op_wrappers(monkeypatch):
    """A training loop opens a region every step: the wrappers are made once and put back
    in place on each entry; outside any region the plain ops are back; an op replaced
    between regions gets a wrapper of its own."""
    plain = minitorch.matmul, F.linear, minitorch.Tensor.__matmul__
    with minitorch.autocast("cpu"):
        first = minitorch.matmul, F.linear, minitorch.Tensor.__matmul__
    assert (minitorch.matmul, F.linear, minitorch.Tensor.__matmul__) == plain
    with minitorch.autocast("cpu"):
        second = minitorch.matmul, F.linear, minitorch.Tensor.__matmul__
    assert all(a is b and a is not p for a, b, p in zip(first, second, plain))

    def my_matmul(a, b):
        return plain[0](a, b) * 2

    monkeypatch.setattr(minitorch, "matmul", my_matmul)
    x = minitorch.ones(2, 2)
    with minitorch.autocast("cpu"):
        assert minitorch.matmul is not first[0] and minitorch.matmul._autocast_original is my_matmul
        y = minitorch.matmul(x, x)
    assert y.dtype == minitorch.bfloat16 and y.float().tolist() == [[4.0, 4.0], [4.0, 4.0]]
    assert minitorch.matmul is my_matmul
