"""InstanceNorm1d/2d/3d, LocalResponseNorm, EmbeddingBag and F.gumbel_softmax: defaults,
reprs and state_dict keys as in PyTorch, running statistics, values on every device against
NumPy, float64 gradcheck through the modules, and the errors of wrong inputs. (The
functions' values on every dtype and layout are in the OpInfo battery.)"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def arr(shape, seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape)


def rand(shape, seed=0, device="cpu", requires_grad=False):
    return minitorch.tensor(arr(shape, seed), device=device, requires_grad=requires_grad)


# ------------------------------------------------------------ InstanceNorm ----

def test_instance_norm_defaults_repr_and_state_dict():
    m = nn.InstanceNorm2d(3)
    assert repr(m) == "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)"
    assert (m.affine, m.track_running_stats, m.weight, m.running_mean) == (False, False, None, None)
    assert list(m.state_dict().keys()) == [] and list(m.parameters()) == []
    m = nn.InstanceNorm1d(4, affine=True, track_running_stats=True)
    assert list(m.state_dict().keys()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    np.testing.assert_array_equal(to_np(m.weight), np.ones(4))


def test_instance_norm_normalises_each_plane(device):
    x = arr((2, 3, 4, 5), 1)
    got = to_np(nn.InstanceNorm2d(3)(minitorch.tensor(x, device=device)))
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-12)
    # unbatched (C, L) input is one sample
    x1 = arr((3, 6), 2)
    got = to_np(nn.InstanceNorm1d(3)(minitorch.tensor(x1, device=device)))
    np.testing.assert_allclose(got, (x1 - x1.mean(1, keepdims=True)) / np.sqrt(x1.var(1, keepdims=True) + 1e-5),
                               rtol=1e-10, atol=1e-12)


def test_instance_norm_running_stats(device):
    m = nn.InstanceNorm2d(2, track_running_stats=True, momentum=0.5).double().to(device)
    x = arr((3, 2, 2, 3), 3)
    m(minitorch.tensor(x, device=device))
    # the batch average of the planes' means and unbiased variances
    np.testing.assert_allclose(to_np(m.running_mean), 0.5 * x.mean((2, 3)).mean(0), rtol=1e-10)
    np.testing.assert_allclose(to_np(m.running_var), 0.5 + 0.5 * x.var((2, 3), ddof=1).mean(0), rtol=1e-10)
    assert int(m.num_batches_tracked.item()) == 0  # as in PyTorch: instance norm does not count
    m.eval()
    rm, rv = to_np(m.running_mean), to_np(m.running_var)
    got = to_np(m(minitorch.tensor(x, device=device)))
    np.testing.assert_allclose(got, (x - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5), rtol=1e-10)
    # without running statistics, eval() still uses the input's own
    m2 = nn.InstanceNorm2d(2).eval()
    got = to_np(m2(minitorch.tensor(x)))
    np.testing.assert_allclose(got.mean((2, 3)), 0.0, atol=1e-12)


def test_instance_norm_gradcheck(device):
    m = nn.InstanceNorm1d(2, affine=True).double().to(device)
    with minitorch.no_grad():
        m.weight.copy_(minitorch.tensor([1.5, -0.5], dtype=minitorch.float64, device=device))
    assert gradcheck(m, (rand((2, 2, 5), 4, device, True),))


def test_instance_norm_errors():
    with pytest.raises(ValueError, match=r"InstanceNorm2d: expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(rand((3, 4)))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 2"):
        nn.InstanceNorm1d(3, affine=True)(rand((4, 2, 5)))
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(3)(rand((4, 2, 5)))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(rand((2, 3, 1)))
    with pytest.raises(ValueError, match="running_mean and running_var to be defined when use_input_stats is false"):
        F.instance_norm(rand((2, 3, 4)), use_input_stats=False)


# ------------------------------------------------------- LocalResponseNorm ----

def test_local_response_norm(device):
    m = nn.LocalResponseNorm(3, alpha=0.3, beta=0.5, k=2.0)
    assert repr(m) == "LocalResponseNorm(3, alpha=0.3, beta=0.5, k=2.0)"
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    x = arr((1, 4, 2), 5)
    got = to_np(m(minitorch.tensor(x, device=device)))
    sq = np.pad(x * x, ((0, 0), (1, 1), (0, 0)))
    div = (2.0 + 0.3 * (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]) / 3) ** 0.5
    np.testing.assert_allclose(got, x / div, rtol=1e-10)
    assert gradcheck(m, (rand((1, 4, 2, 2), 6, device, True),))
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        m(rand((4, 2)))


# ------------------------------------------------------------- EmbeddingBag ----

def test_embedding_bag_module():
    bag = nn.EmbeddingBag(10, 3)
    assert repr(bag) == "EmbeddingBag(10, 3, mode=mean)"
    assert repr(nn.EmbeddingBag(5, 2, mode="max", padding_idx=-1)) == "EmbeddingBag(5, 2, mode=max, padding_idx=4)"
    assert list(bag.state_dict().keys()) == ["weight"] and tuple(bag.weight.shape) == (10, 3)
    padded = nn.EmbeddingBag(4, 2, padding_idx=1)
    np.testing.assert_array_equal(to_np(padded.weight[1]), [0.0, 0.0])
    w = minitorch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    frozen = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert frozen.weight.requires_grad is False
    out = frozen(minitorch.tensor([0, 2, 1]), minitorch.tensor([0, 1]))
    np.testing.assert_array_equal(to_np(out), [[1.0, 2.0], [8.0, 10.0]])


def test_embedding_bag_modes_and_empty_bags(device):
    w = arr((5, 3), 7)
    bag = nn.EmbeddingBag(5, 3, _weight=minitorch.tensor(w, device=device)).to(device)
    idx = minitorch.tensor([1, 2, 4, 0], device=device)
    off = minitorch.tensor([0, 3, 3], device=device)  # bags [1, 2, 4], [], [0]
    np.testing.assert_allclose(to_np(bag(idx, off)), np.stack([w[[1, 2, 4]].mean(0), np.zeros(3), w[0]]))
    bag.mode = "max"
    np.testing.assert_allclose(to_np(bag(idx, off)), np.stack([w[[1, 2, 4]].max(0), np.zeros(3), w[0]]))
    bag.mode, bag.include_last_offset = "sum", True
    psw = minitorch.tensor([1.0, -1.0, 2.0, 5.0], device=device, dtype=minitorch.float64)
    np.testing.assert_allclose(to_np(bag(idx, minitorch.tensor([0, 2, 4], device=device), psw)),
                               np.stack([w[1] - w[2], 2 * w[4] + 5 * w[0]]))


def test_embedding_bag_gradcheck(device):
    w = rand((5, 2), 8, device, True)
    idx = minitorch.tensor([[1, 2, 2], [0, 4, 3]], device=device)
    for mode in ("sum", "mean", "max"):
        assert gradcheck(lambda v: F.embedding_bag(idx, v, mode=mode), (w,))


def test_embedding_bag_errors():
    w = rand((5, 2))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(minitorch.tensor([[1, 2]]), w, minitorch.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(minitorch.tensor([1, 2]), w)
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor, but got Tensor of dimension 3"):
        F.embedding_bag(minitorch.tensor([[[1]]]), w)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(minitorch.tensor([[1, 2]]), w, per_sample_weights=rand((1, 2)))
    with pytest.raises(ValueError, match=r"If per_sample_weights \(\(3,\)\) is not None, then it must have the same "
                                         r"shape as the input \(\(2,\)\)"):
        F.embedding_bag(minitorch.tensor([1, 2]), w, minitorch.tensor([0]), mode="sum", per_sample_weights=rand(3))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(minitorch.tensor([[1, 2]]), w, mode="min")
    with pytest.raises(ValueError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(minitorch.tensor([1, 2]), w, minitorch.tensor([1]))
    with pytest.raises(IndexError, match="index 7 is out of range for 5 embeddings"):
        F.embedding_bag(minitorch.tensor([[1, 7]]), w)
    with pytest.raises(TypeError, match="Argument order"):
        F.embedding_bag(w, minitorch.tensor([[1, 2]]))


# ----------------------------------------------------------- gumbel_softmax ----

def test_gumbel_softmax_samples(device):
    minitorch.manual_seed(0)
    logits = minitorch.tensor(np.log([[0.6, 0.3, 0.1]] * 4000), device=device)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(to_np(soft).sum(1), 1.0, rtol=1e-6)
    hard = to_np(F.gumbel_softmax(logits, hard=True))
    assert set(np.unique(hard)) <= {0.0, 1.0} and (hard.sum(1) == 1).all()
    # the argmax of logits + Gumbel noise is a sample of softmax(logits)
    np.testing.assert_allclose(hard.mean(0), [0.6, 0.3, 0.1], atol=0.03)
    assert tuple(F.gumbel_softmax(rand((2, 3, 4), device=device), dim=1).shape) == (2, 3, 4)


def test_gumbel_softmax_straight_through_gradient(device):
    minitorch.manual_seed(1)
    x = rand((3, 4), 9, device, True)
    minitorch.manual_seed(2)
    y_hard = F.gumbel_softmax(x, hard=True)
    weights = minitorch.tensor(arr((3, 4), 10), device=device)
    (y_hard * weights).sum().backward()
    g_hard = to_np(x.grad)
    x.grad = None
    minitorch.manual_seed(2)
    (F.gumbel_softmax(x) * weights).sum().backward()
    np.testing.assert_allclose(g_hard, to_np(x.grad), rtol=1e-10)  # the soft sample's gradient
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(x, eps=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.gumbel_softmax(x)
