"""Tensor.register_hook and register_post_accumulate_grad_hook: what backward calls, when,
with what, and what a hook's return value changes (PyTorch's rules)."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import minitorch
from conftest import DEVICES


def leaf(values, device="cpu"):
    return minitorch.tensor(values, dtype=minitorch.float64, device=device, requires_grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_leaf_hook_sees_the_gradient_and_can_replace_it(device):
    x = leaf([1.0, 2.0, 3.0], device)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))  # None: keeps the gradient
    x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0, 6.0]]
    assert x.grad.tolist() == [20.0, 40.0, 60.0]


@pytest.mark.parametrize("device", DEVICES)
def test_non_leaf_hook_changes_what_flows_on(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()) or g + 1)
    y.retain_grad()
    (y * y).sum().backward()
    assert seen == [[6.0, 12.0]]  # d(y^2)/dy = 2y
    assert y.grad.tolist() == [7.0, 13.0]  # .grad of a non-leaf shows the replaced gradient
    assert x.grad.tolist() == [21.0, 39.0]  # and so does everything upstream


def test_hooks_run_in_registration_order_and_chain():
    x = leaf([1.0])
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 3)
    x.sum().backward()
    assert x.grad.tolist() == [6.0]  # (1 + 1) * 3, not 1 * 3 + 1


def test_a_leaf_hook_lasts_across_graphs_and_remove_stops_it():
    x = leaf([2.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    for _ in range(3):
        (x * 5).sum().backward()
    assert len(calls) == 3
    handle.remove()
    handle.remove()  # a second remove does nothing
    (x * 5).sum().backward()
    assert len(calls) == 3 and x.grad.tolist() == [20.0]


def test_handle_as_context_manager():
    x = leaf([1.0])
    calls = []
    with x.register_hook(lambda g: calls.append(1)):
        x.sum().backward()
    x.sum().backward()
    assert calls == [1]


def test_hook_errors():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        minitorch.ones(2).register_hook(lambda g: g)
    x = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="expected a callable"):
        x.register_hook(3)
    x.register_hook(lambda g: minitorch.ones(3, dtype=minitorch.float64))
    with pytest.raises(RuntimeError, match=r"hook of a leaf tensor returned a gradient of shape \(3,\).*shape \(2,\)"):
        x.sum().backward()

    y = leaf([1.0]) * 2
    y.register_hook(lambda g: "not a tensor")
    with pytest.raises(TypeError, match="must return None or a Tensor, got str"):
        y.sum().backward()


def test_an_exception_in_a_hook_reaches_the_caller():
    x = leaf([1.0])

    def boom(g):
        raise KeyError("from the hook")

    x.register_hook(boom)
    with pytest.raises(KeyError, match="from the hook"):
        x.sum().backward()


@pytest.mark.parametrize("device", DEVICES)
def test_post_accumulate_grad_hook_sees_the_updated_grad(device):
    w = leaf([1.0, -1.0], device)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append((p is w, p.grad.tolist())))
    (w * 2).sum().backward()
    (w * 3).sum().backward()  # accumulates: the hook sees the running total
    assert seen == [(True, [2.0, 2.0]), (True, [5.0, 5.0])]


def test_post_accumulate_grad_hook_rules():
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (leaf([1.0]) * 2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        minitorch.ones(1).register_post_accumulate_grad_hook(lambda p: None)
    # autograd.grad accumulates nothing, so it calls no post-accumulate hook; a gradient
    # hook still sees (and may change) the gradient it returns.
    x = leaf([3.0])
    calls = []
    x.register_post_accumulate_grad_hook(lambda p: calls.append("post"))
    x.register_hook(lambda g: g * 2)
    (gx,) = minitorch.autograd.grad((x * x).sum(), [x])
    assert calls == [] and gx.tolist() == [12.0] and x.grad is None


def test_post_accumulate_hooks_fire_as_backward_reaches_each_layer():
    # Data-parallel training sends each gradient as soon as it is final: backward reaches
    # the last layer's parameters first.
    minitorch.manual_seed(0)
    net = minitorch.nn.Sequential(minitorch.nn.Linear(4, 3), minitorch.nn.ReLU(), minitorch.nn.Linear(3, 2))
    order = []
    for name, p in net.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: order.append(name))
    net(minitorch.randn(5, 4)).sum().backward()
    assert sorted(order) == sorted(n for n, _ in net.named_parameters())
    assert order.index("2.weight") < order.index("0.weight")


def test_handles_keep_nothing_alive():
    gc.collect()
    before = minitorch.live_tensor_count()
    x = leaf(np.ones(3))
    handle = x.register_hook(lambda g: g)
    y = x * 2
    handle2 = y.register_hook(lambda g: g)
    del x, y
    gc.collect()
    assert minitorch.live_tensor_count() == before
    handle.remove()
    handle2.remove()  # the tensor and node are gone: nothing to do, no error


def test_autograd_grad_runs_only_the_hooks_of_the_inputs_asked_about():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    calls = []
    x.register_hook(lambda g: calls.append("x"))
    w.register_hook(lambda g: calls.append("w"))
    minitorch.autograd.grad((x * w).sum(), [x])
    assert calls == ["x"]  # w's gradient is not computed, so its hook does not run (PyTorch's rule)


def test_a_non_leaf_hook_referring_to_its_tensor_does_not_leak():
    # Backward frees a node's hooks with its saved tensors, so a hook that closes over its
    # own tensor makes no cycle through C++ (where Python's collector cannot see it).
    gc.collect()
    before = minitorch.live_tensor_count()
    for _ in range(5):
        x = leaf([1.0, 2.0])
        h = x * 2
        h.register_hook(lambda g, h=h: g * 1)
        (h * h).sum().backward()
        del x, h
    gc.collect()
    assert minitorch.live_tensor_count() == before
