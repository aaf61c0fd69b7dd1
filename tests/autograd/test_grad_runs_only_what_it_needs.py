"""``autograd.grad(outputs, inputs)`` runs only the nodes between the outputs and the inputs,
as PyTorch's engine does: the nodes beyond a non-leaf input neither compute (no launches)
nor free what they saved, so a later ``backward`` through them still works, and their
hooks do not fire."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON


def test_nodes_beyond_a_non_leaf_input_keep_their_saved_tensors(device):
    leaf = minitorch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    z = leaf * leaf  # MulBackward saves leaf twice
    (g,) = minitorch.autograd.grad((z * 3).sum(), z)
    np.testing.assert_array_equal(g.cpu().numpy(), [3.0, 3.0, 3.0])
    assert leaf.grad is None
    (z * 2).sum().backward()  # z's node did not run above, so it has not freed anything
    np.testing.assert_array_equal(leaf.grad.cpu().numpy(), [4.0, 8.0, 12.0])


def test_an_input_behind_another_input_still_gets_its_gradient(device):
    leaf = minitorch.tensor([1.0, -2.0], device=device, requires_grad=True)
    h = leaf.exp()
    y = (h * h).sum()
    gh, gleaf = minitorch.autograd.grad(y, [h, leaf])
    np.testing.assert_allclose(gh.cpu().numpy(), 2 * np.exp([1.0, -2.0]), rtol=1e-6)
    np.testing.assert_allclose(gleaf.cpu().numpy(), 2 * np.exp([2.0, -4.0]), rtol=1e-6)


def test_hooks_beyond_the_inputs_do_not_fire(device):
    leaf = minitorch.ones(3, device=device, requires_grad=True)
    a = leaf * 2
    b = a + 1
    seen = []
    a.register_hook(lambda g: seen.append("a"))
    b.register_hook(lambda g: seen.append("b"))
    minitorch.autograd.grad((b * b).sum(), b)
    assert "a" not in seen  # a lies beyond the input


def test_create_graph_through_a_non_leaf_input(device):
    """A gradient penalty: the gradient with respect to an intermediate, differentiated again."""
    w = minitorch.tensor([0.5, -1.5], device=device, dtype=minitorch.float64, requires_grad=True)
    x = w * 3
    y = (x ** 3).sum()
    (gx,) = minitorch.autograd.grad(y, x, create_graph=True)  # 3 x^2
    (gx ** 2).sum().backward()  # d/dw sum(9 x^4) = 36 x^3 * 3
    np.testing.assert_allclose(w.grad.cpu().numpy(), 108 * (3 * np.array([0.5, -1.5])) ** 3, rtol=1e-12)


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_no_launch_for_the_nodes_beyond_the_input():
    from minitorch.profiler import ProfilerActivity, profile

    leaf = minitorch.randn(32, 32, device="cuda", requires_grad=True)
    h = (leaf @ leaf).tanh()
    y = (h * 2).sum()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        minitorch.autograd.grad(y, h)
    ran = {e.name for e in prof.events() if e.kernels}
    assert not ran & {"TanhBackward0", "MmBackward0"}, ran
