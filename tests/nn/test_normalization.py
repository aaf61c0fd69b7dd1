"""LayerNorm, GroupNorm and BatchNorm1d/2d/3d: values and running statistics against NumPy
formulas on every device, float64 gradcheck, errors, reprs and state_dict keys as in
PyTorch, and (when PyTorch is installed) outputs, gradients and running stats against it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from conftest import CUDA_SKIP_REASON, TORCH_SKIP_REASON, seeds
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def rand(shape, seed=0, low=-3.0, high=3.0, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(dtype)


def leaf(shape, seed, device, low=-2.0, high=2.0):
    return minitorch.tensor(rand(shape, seed, low, high), device=device, requires_grad=True)


def tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


def np_normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


# ---------------------------------------------------------------- LayerNorm ----

@settings(max_examples=20)
@given(lead=st.lists(st.integers(1, 4), min_size=0, max_size=2), norm=st.lists(st.integers(1, 5), min_size=1,
       max_size=2), seed=seeds, dtype=st.sampled_from([np.float32, np.float64]), affine=st.booleans())
def test_layer_norm_matches_numpy(device, lead, norm, seed, dtype, affine):
    shape = tuple(lead) + tuple(norm)
    x = rand(shape, seed, dtype=dtype)
    w, b = rand(norm, seed + 1, dtype=dtype), rand(norm, seed + 2, dtype=dtype)
    ln = nn.LayerNorm(tuple(norm), eps=1e-3, elementwise_affine=affine).to(device, minitorch.tensor(x).dtype)
    if affine:
        ln.load_state_dict({"weight": minitorch.tensor(w), "bias": minitorch.tensor(b)})
    out = ln(minitorch.tensor(x, device=device))
    axes = tuple(range(len(shape) - len(norm), len(shape)))
    want = np_normalize(x.astype(np.float64), axes, 1e-3)
    if affine:
        want = want * w + b
    assert out.device.type == device and out.shape == shape
    np.testing.assert_allclose(to_np(out), want.astype(dtype), **tol(dtype))


def test_layer_norm_defaults_and_state(device):
    ln = nn.LayerNorm(4, device=device)
    assert ln.normalized_shape == (4,) and ln.eps == 1e-5 and ln.elementwise_affine
    np.testing.assert_array_equal(to_np(ln.weight), np.ones(4, np.float32))
    np.testing.assert_array_equal(to_np(ln.bias), np.zeros(4, np.float32))
    assert ln.weight.device.type == device
    assert list(ln.state_dict()) == ["weight", "bias"]
    assert list(nn.LayerNorm(4, bias=False).state_dict()) == ["weight"]
    plain = nn.LayerNorm([2, 3], elementwise_affine=False)
    assert list(plain.state_dict()) == [] and plain.weight is None and plain.bias is None
    assert list(plain._parameters) == ["weight", "bias"]  # registered as None, as in PyTorch
    assert repr(ln) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    assert repr(nn.LayerNorm([3, 4], elementwise_affine=False)) == "LayerNorm((3, 4), eps=1e-05, elementwise_affine=False)"


@pytest.mark.parametrize("shape,norm", [((3, 4), (4,)), ((2, 3, 4), (3, 4)), ((5,), (5,)), ((2, 1, 3), (1, 3))])
def test_gradcheck_layer_norm(device, shape, norm):
    x, w, b = leaf(shape, 0, device), leaf(norm, 1, device), leaf(norm, 2, device)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, norm, w, b), (x, w, b))
    assert gradcheck(lambda x: F.layer_norm(x, norm, eps=0.1), (x,))


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"layer_norm: given normalized_shape=\(4,\).*shape \(2, 3\)"):
        nn.LayerNorm(4)(minitorch.zeros(2, 3))
    with pytest.raises(ValueError, match="layer_norm"):
        F.layer_norm(minitorch.zeros(3), (2, 3))
    with pytest.raises(ValueError, match="layer_norm: expected weight of shape"):
        F.layer_norm(minitorch.zeros(2, 3), (3,), minitorch.ones(4))
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.LayerNorm(None)


# ---------------------------------------------------------------- GroupNorm ----

@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((2, 4, 2, 3), 2), ((1, 4), 4), ((3, 6, 1, 1), 1),
                                          ((2, 6, 5), 6)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_group_norm_matches_numpy(device, shape, groups, dtype):
    x = rand(shape, 3, dtype=dtype)
    c = shape[1]
    gn = nn.GroupNorm(groups, c).to(device, minitorch.tensor(x).dtype)
    w, b = rand((c,), 4, dtype=dtype), rand((c,), 5, dtype=dtype)
    gn.load_state_dict({"weight": minitorch.tensor(w), "bias": minitorch.tensor(b)})
    out = gn(minitorch.tensor(x, device=device))
    grouped = x.astype(np.float64).reshape(shape[0], groups, -1)
    want = np_normalize(grouped, (2,), 1e-5).reshape(shape)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    want = want * w.reshape(bshape) + b.reshape(bshape)
    np.testing.assert_allclose(to_np(out), want.astype(dtype), **tol(dtype))


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_group_norm_is_one_fused_kernel_with_the_affine():
    from minitorch.profiler import ProfilerActivity, profile
    x = minitorch.randn(4, 8, 5, 5, device="cuda", requires_grad=True)
    gn = nn.GroupNorm(2, 8).to("cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = gn(x)
    forward = [k.name for e in prof.events() for k in e.kernels]
    # statistics, normalization, * weight and + bias in one kernel (ops/group_norm.cpp)
    assert len(forward) == 1 and "group_norm" in forward[0], forward
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.sum().backward()
    backward = [k.name for e in prof.events() for k in e.kernels]
    assert sum("group_norm" in k for k in backward) == 3 and len(backward) <= 6, backward


@pytest.mark.parametrize("shape", [(0, 4, 3), (2, 4, 0)])
def test_group_norm_of_empty_input(device, shape):
    out = F.group_norm(minitorch.zeros(*shape, device=device), 2)
    assert tuple(out.shape) == shape


def test_gradcheck_group_norm(device):
    x, w, b = leaf((2, 4, 3), 6, device), leaf((4,), 7, device), leaf((4,), 8, device)
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    assert gradcheck(lambda x: F.group_norm(x, 1, eps=0.1), (leaf((3, 2, 2, 2), 9, device),))


def test_group_norm_errors_repr_state():
    with pytest.raises(ValueError, match="num_channels.*divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="GroupNorm: expected input with 4 channels"):
        nn.GroupNorm(2, 4)(minitorch.zeros(2, 6))
    with pytest.raises(ValueError, match="group_norm: the 6 channels"):
        F.group_norm(minitorch.zeros(2, 6), 4)
    with pytest.raises(ValueError, match="group_norm: expected an input of shape"):
        F.group_norm(minitorch.zeros(6), 2)
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True)"
    assert list(nn.GroupNorm(2, 4).state_dict()) == ["weight", "bias"]
    plain = nn.GroupNorm(2, 4, affine=False)
    assert list(plain.state_dict()) == [] and plain.weight is None and list(plain._parameters) == ["weight", "bias"]


# ---------------------------------------------------------------- BatchNorm ----

def np_batch_stats(x):
    axes = (0,) + tuple(range(2, x.ndim))
    n = x.size // x.shape[1]
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    return mean, var, var * n / (n - 1)


def bshape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (5, 3)), (nn.BatchNorm1d, (4, 3, 2)),
                                       (nn.BatchNorm2d, (2, 3, 2, 3)), (nn.BatchNorm3d, (2, 2, 1, 2, 2))])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_batch_norm_training_and_running_stats(device, cls, shape, momentum):
    c = shape[1]
    bn = cls(c, momentum=momentum).to(device).double()
    w, b = rand((c,), 1), rand((c,), 2)
    bn.load_state_dict({**bn.state_dict(), "weight": minitorch.tensor(w), "bias": minitorch.tensor(b)})
    rm, rv = np.zeros(c), np.ones(c)
    batches = [rand(shape, 10 + i, low=-1 + i, high=2 + 2 * i) for i in range(3)]
    for i, x in enumerate(batches):
        out = bn(minitorch.tensor(x, device=device))
        mean, var, unbiased = np_batch_stats(x)
        want = (x - mean.reshape(bshape(x))) / np.sqrt(var.reshape(bshape(x)) + 1e-5)
        np.testing.assert_allclose(to_np(out), want * w.reshape(bshape(x)) + b.reshape(bshape(x)), rtol=1e-10,
                                   atol=1e-12)
        m = 1.0 / (i + 1) if momentum is None else momentum
        rm, rv = (1 - m) * rm + m * mean, (1 - m) * rv + m * unbiased
        np.testing.assert_allclose(to_np(bn.running_mean), rm, rtol=1e-12)
        np.testing.assert_allclose(to_np(bn.running_var), rv, rtol=1e-12)
        assert bn.num_batches_tracked.item() == i + 1
    assert bn.num_batches_tracked.dtype == minitorch.int64 and bn.num_batches_tracked.shape == ()
    assert bn.running_mean.device.type == device
    if momentum is None:  # the cumulative average of the batch means
        np.testing.assert_allclose(to_np(bn.running_mean), np.mean([np_batch_stats(x)[0] for x in batches], 0))
    # eval(): the running statistics, and no update
    bn.eval()
    x = rand(shape, 20)
    out = bn(minitorch.tensor(x, device=device))
    want = (x - rm.reshape(bshape(x))) / np.sqrt(rv.reshape(bshape(x)) + 1e-5)
    np.testing.assert_allclose(to_np(out), want * w.reshape(bshape(x)) + b.reshape(bshape(x)), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(to_np(bn.running_mean), rm, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 3


def test_batch_norm_float32_defaults(device):
    bn = nn.BatchNorm2d(3, device=device)
    np.testing.assert_array_equal(to_np(bn.weight), np.ones(3, np.float32))
    np.testing.assert_array_equal(to_np(bn.bias), np.zeros(3, np.float32))
    np.testing.assert_array_equal(to_np(bn.running_var), np.ones(3, np.float32))
    x = rand((4, 3, 2, 2), 0, dtype=np.float32)
    out = bn(minitorch.tensor(x, device=device))
    mean, var, unbiased = np_batch_stats(x.astype(np.float64))
    want = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    np.testing.assert_allclose(to_np(out), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(bn.running_var), 0.9 + 0.1 * unbiased, rtol=1e-5)
    assert out.dtype == minitorch.float32 and bn.running_mean.dtype == minitorch.float32


def test_batch_norm_without_running_stats_or_affine(device):
    bn = nn.BatchNorm1d(3, affine=False, track_running_stats=False).to(device)
    assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
    assert bn.weight is None and bn.bias is None
    assert list(bn.state_dict()) == [] and list(bn.parameters()) == []
    x = rand((4, 3), 5)
    mean, var, _ = np_batch_stats(x)
    for mode in (True, False):  # no running stats: batch statistics in eval() too
        out = bn.train(mode)(minitorch.tensor(x, device=device))
        np.testing.assert_allclose(to_np(out), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10)
    bn = nn.BatchNorm1d(3, affine=False)
    assert list(bn.state_dict()) == ["running_mean", "running_var", "num_batches_tracked"]


def test_batch_norm_state_dict_reset_and_dtypes(device):
    bn = nn.BatchNorm1d(3).to(device)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    bn(minitorch.tensor(rand((4, 3), 0, dtype=np.float32), device=device))
    bn.double()
    assert bn.running_mean.dtype == minitorch.float64 and bn.num_batches_tracked.dtype == minitorch.int64
    assert bn.num_batches_tracked.item() == 1
    bn.reset_running_stats()
    np.testing.assert_array_equal(to_np(bn.running_mean), np.zeros(3))
    np.testing.assert_array_equal(to_np(bn.running_var), np.ones(3))
    assert bn.num_batches_tracked.item() == 0
    copy = nn.BatchNorm1d(3).double()
    bn(minitorch.tensor(rand((4, 3), 1), device=device))
    copy.load_state_dict(bn.state_dict())
    np.testing.assert_array_equal(to_np(copy.running_var), to_np(bn.running_var))
    assert copy.num_batches_tracked.item() == 1


def test_batch_norm_reprs():
    assert repr(nn.BatchNorm1d(3)) == "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
    assert repr(nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False)) == \
        "BatchNorm2d(3, eps=1e-05, momentum=None, affine=False, track_running_stats=False)"


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=r"batch_norm: expected more than 1 value per channel when training.*\(1, 3\)"):
        nn.BatchNorm1d(3)(minitorch.zeros(1, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm2d(3)(minitorch.zeros(1, 3, 1, 1))
    nn.BatchNorm1d(3).eval()(minitorch.zeros(1, 3))  # fine with running statistics
    with pytest.raises(ValueError, match=r"BatchNorm1d: expected 2D or 3D input \(got 4D input"):
        nn.BatchNorm1d(3)(minitorch.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4D input \(got 3D input"):
        nn.BatchNorm2d(3)(minitorch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="BatchNorm1d: expected input with 3 channels"):
        nn.BatchNorm1d(3)(minitorch.zeros(2, 4))
    with pytest.raises(ValueError, match="batch_norm: running_mean should contain 4 elements"):
        F.batch_norm(minitorch.zeros(2, 4), minitorch.zeros(3), minitorch.ones(3))
    with pytest.raises(ValueError, match="batch_norm: running_mean and running_var must be given"):
        F.batch_norm(minitorch.zeros(2, 4), None, None)
    with pytest.raises(ValueError, match="num_features"):
        nn.BatchNorm1d(0)


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 2), (2, 2, 2, 2)])
def test_gradcheck_batch_norm(device, shape):
    c = shape[1]
    x, w, b = leaf(shape, 11, device), leaf((c,), 12, device), leaf((c,), 13, device)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))
    rm = minitorch.tensor(rand((c,), 14), device=device)
    rv = minitorch.tensor(rand((c,), 15, 0.5, 2), device=device)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False), (x, w, b))


def test_batch_norm_gradient_through_module(device):
    bn = nn.BatchNorm1d(3).double().to(device)
    x = leaf((5, 3), 16, device)
    g = rand((5, 3), 17)
    bn(x).backward(minitorch.tensor(g, device=device))
    xn = to_np(x)
    mean, var, _ = np_batch_stats(xn)
    xhat = (xn - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(to_np(bn.weight.grad), (g * xhat).sum(0), rtol=1e-10)
    np.testing.assert_allclose(to_np(bn.bias.grad), g.sum(0), rtol=1e-10)
    want_dx = (g - g.mean(0) - xhat * (g * xhat).mean(0)) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(to_np(x.grad), want_dx, rtol=1e-8, atol=1e-12)


# ---------------------------------------------------------------- PyTorch ----

def _torch():
    return pytest.importorskip("torch", reason=TORCH_SKIP_REASON)


def _copy_from_torch(ours, theirs):
    ours.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


@pytest.mark.parametrize("make", [
    lambda m: m.LayerNorm(4), lambda m: m.LayerNorm((3, 4), eps=1e-3), lambda m: m.LayerNorm(4, elementwise_affine=False),
    lambda m: m.GroupNorm(2, 4), lambda m: m.GroupNorm(1, 4, affine=False),
], ids=["ln", "ln2", "ln_noaffine", "gn", "gn_noaffine"])
def test_layer_and_group_norm_match_torch(device, make):
    torch = _torch()
    theirs = make(torch.nn).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-2, 2)
    ours = make(nn).double().to(device)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    _copy_from_torch(ours, theirs)
    x = rand((2, 4, 3, 4), 30)
    g = rand((2, 4, 3, 4), 31)
    xm, xt = minitorch.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, out_t = ours(xm), theirs(xt)
    out.backward(minitorch.tensor(g, device=device))
    out_t.backward(torch.tensor(g))
    np.testing.assert_allclose(to_np(out), out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_np(xm.grad), xt.grad.numpy(), rtol=1e-8, atol=1e-10)
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), rtol=1e-8, atol=1e-10, err_msg=n)


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (3, 3, 2, 4))])
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_matches_torch(device, cls, shape, momentum, dtype):
    torch = _torch()
    theirs = getattr(torch.nn, cls)(3, momentum=momentum)
    ours = getattr(nn, cls)(3, momentum=momentum).to(device)
    if dtype == np.float64:
        theirs.double()
        ours.double()
    with torch.no_grad():
        theirs.weight.uniform_(0.5, 2)
        theirs.bias.uniform_(-1, 1)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    _copy_from_torch(ours, theirs)
    t = tol(dtype)
    for step in range(3):
        x = rand(shape, 40 + step, low=-1, high=1 + step, dtype=dtype)
        g = rand(shape, 50 + step, dtype=dtype)
        xm, xt = minitorch.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, out_t = ours(xm), theirs(xt)
        out.backward(minitorch.tensor(g, device=device))
        out_t.backward(torch.tensor(g))
        np.testing.assert_allclose(to_np(out), out_t.detach().numpy(), **t)
        np.testing.assert_allclose(to_np(xm.grad), xt.grad.numpy(), **t)
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(to_np(ours.state_dict()[k]), v.numpy(), **t, err_msg=k)
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(to_np(p.grad), tp.grad.numpy(), **t, err_msg=n)
    ours.eval()
    theirs.eval()
    x = rand(shape, 60, dtype=dtype)
    np.testing.assert_allclose(to_np(ours(minitorch.tensor(x, device=device))),
                               theirs(torch.tensor(x)).detach().numpy(), **t)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_layer_norm_statistics_are_the_same_on_cpu_and_cuda():
    # Both devices sum a row in LayerNormAcc (double; minitorch/layer_norm_math.h): a float32 row
    # far from zero gets the same normalized values on the CPU and on cuda, and NumPy's in float64.
    rng = np.random.default_rng(0)
    x = (1e4 + rng.standard_normal((4, 3000))).astype(np.float32)
    want = (x - x.astype(np.float64).mean(1, keepdims=True)) / np.sqrt(x.astype(np.float64).var(1, keepdims=True) + 1e-5)
    outs = [minitorch.nn.functional.layer_norm(minitorch.tensor(x, device=d), (3000,)).cpu().numpy()
            for d in ("cpu", "cuda")]
    np.testing.assert_allclose(outs[0], want, rtol=0, atol=2e-3)  # x's own float32 rounding of 1e4 + noise
    np.testing.assert_allclose(outs[1], outs[0], rtol=0, atol=1e-6)
