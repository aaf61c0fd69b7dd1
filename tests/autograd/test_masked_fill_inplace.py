"""x.masked_fill_(mask, value) writes x in one where launch (out = x), outside a graph and
inside one (the node, which keeps only the mask, becomes x's history, as hardtanh_ does);
views of a live base, values that need a gradient, and masks or values in x's own memory
take the general path. Checked against NumPy and against the out-of-place op's gradients,
with PyTorch's in-place rules, and by launch count."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, launches


def data(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32), rng.random(shape) < 0.4


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("value", [0.0, float("-inf"), "tensor"])
def test_matches_numpy_with_broadcast_masks_and_strided_self(device, value):
    x, m = data((4, 6))
    v = minitorch.tensor(2.5) if value == "tensor" else value
    want_v = 2.5 if value == "tensor" else value
    t = minitorch.tensor(x, device=device)
    assert t.masked_fill_(minitorch.tensor(m, device=device), v) is t
    np.testing.assert_array_equal(t.cpu().numpy(), np.where(m, want_v, x))
    # a row mask broadcast over the rows, into a transposed view
    t = minitorch.tensor(x, device=device)
    row = m[0]
    t.T.masked_fill_(minitorch.tensor(row[:, None], device=device), v)
    np.testing.assert_array_equal(t.cpu().numpy(), np.where(row[:, None].T, want_v, x))
    # an int tensor takes the value cast to its dtype
    i = minitorch.tensor(np.arange(24).reshape(4, 6), device=device)
    i.masked_fill_(minitorch.tensor(m, device=device), 7.9)
    np.testing.assert_array_equal(i.cpu().numpy(), np.where(m, 7, np.arange(24).reshape(4, 6)))


@pytest.mark.parametrize("device", DEVICES)
def test_inside_a_graph_the_node_becomes_the_history(device):
    x_np, m_np = data((3, 5), seed=1)
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    m = minitorch.tensor(m_np, device=device)
    h = x * 2
    h.masked_fill_(m, -1.0)
    assert h.grad_fn.name() == "MaskedFillBackward0"
    np.testing.assert_array_equal(h.detach().cpu().numpy(), np.where(m_np, -1.0, 2 * x_np))
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.where(m_np, 0.0, 8 * x_np), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_general_paths_keep_their_gradients(device):
    x_np, m_np = data((3, 5), seed=2)
    m = minitorch.tensor(m_np, device=device)
    # a value that needs a gradient: it gets the sum of g where the mask is set
    x = minitorch.tensor(x_np, device=device, requires_grad=True)
    val = minitorch.tensor(0.5, device=device, requires_grad=True)
    h = x * 1
    h.masked_fill_(m, val)
    h.sum().backward()
    assert val.grad.item() == m_np.sum()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), np.where(m_np, 0.0, 1.0))
    # a view of a live base: the base's history takes the write (CopySlices)
    x.grad = None
    base = x * 3
    base[1].masked_fill_(m[1], 0.0)
    base.sum().backward()
    want = np.full((3, 5), 3.0)
    want[1] = np.where(m_np[1], 0.0, 3.0)
    np.testing.assert_array_equal(x.grad.cpu().numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_mask_or_value_in_self_is_read_before_the_write(device):
    b = minitorch.tensor([[True, False], [True, True]], device=device)
    b.masked_fill_(b, False)  # the mask is self: every True goes
    assert not b.any().item()
    x_np = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    x = minitorch.tensor(x_np, device=device)
    x.masked_fill_(minitorch.tensor([[False, True, True], [True, True, True]], device=device), x[0, 0])
    np.testing.assert_array_equal(x.cpu().numpy(), [[1, 1, 1], [1, 1, 1]])
    # a transposed view of self as the mask (the flags must be the old ones)
    s = minitorch.tensor(np.array([[True, False], [False, False]]), device=device)
    s.masked_fill_(s.T.logical_not(), True)
    np.testing.assert_array_equal(s.cpu().numpy(), [[True, True], [True, True]])


@pytest.mark.parametrize("device", DEVICES)
def test_pytorch_in_place_rules(device):
    x = minitorch.randn(3, device=device, requires_grad=True)
    m = minitorch.tensor([True, False, True], device=device)
    with pytest.raises(RuntimeError, match="leaf"):
        x.masked_fill_(m, 0.0)
    y = x.exp()  # exp's backward reads its result: writing it first makes backward raise
    y.masked_fill_(m, 0.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    e = minitorch.randn(1, 3, device=device).expand(2, 3)
    with pytest.raises(RuntimeError, match="single memory location"):
        e.masked_fill_(minitorch.ones(2, 3, dtype=minitorch.bool, device=device), 0.0)
    with pytest.raises(TypeError, match="bool mask"):
        minitorch.zeros(3, device=device).masked_fill_(minitorch.ones(3, device=device), 0.0)
    with pytest.raises(ValueError, match="broadcast"):
        minitorch.zeros(3, device=device).masked_fill_(minitorch.ones(4, dtype=minitorch.bool, device=device), 0.0)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_one_launch_outside_and_inside_a_graph():
    x = minitorch.randn(64, 64, device="cuda")
    m = x > 0
    assert len(launches(lambda: x.masked_fill_(m, float("-inf")))) == 1
    w = minitorch.randn(64, 64, device="cuda", requires_grad=True)
    h = w * 1
    names = launches(lambda: h.masked_fill_(m, 0.0))
    assert len(names) == 1, names  # no clone of h, no copy back
