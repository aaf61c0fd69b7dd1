"""The autograd engine: accumulation, retain_graph, grad modes, detach, leaves and
non-leaves, ``autograd.grad``, error messages, deep graphs and memory, on every device
(``cpu``, and ``cuda`` when available)."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from conftest import to_numpy as arr
from minitorch.autograd import enable_grad, no_grad, set_grad_enabled

PYTHON_DIR = Path(minitorch.__file__).resolve().parent.parent


def leaf(values, device: str) -> minitorch.Tensor:
    """A float64 leaf on ``device`` that requires grad."""
    return minitorch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True, device=device)


@pytest.fixture(autouse=True)
def _grad_mode_is_restored():
    """Every test starts and must end with grad mode on (a leaked no_grad would hide bugs)."""
    assert minitorch.is_grad_enabled()
    yield
    enabled = minitorch.is_grad_enabled()
    minitorch.autograd.grad_mode._C._set_grad_enabled(True)
    assert enabled, "the test left grad mode off"


def other_device(device: str) -> str:
    """The device that is not ``device``; skips the test when CUDA is not available."""
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    return "cpu" if device == "cuda" else "cuda"


X = np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 1.5]])


# ------------------------------------------------------------- accumulation ----

def test_simple_graph_gradient(device):
    x = leaf(X, device)
    y = x * x + x
    y.sum().backward()
    np.testing.assert_allclose(arr(x.grad), 2 * X + 1)
    assert x.grad.shape == x.shape
    assert x.grad.device == x.device
    assert x.grad.dtype == minitorch.float64
    assert not x.grad.requires_grad
    assert x.grad.grad_fn is None


def test_backward_twice_with_retain_graph_accumulates(device):
    x = leaf(X, device)
    y = (x * x + x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(arr(x.grad), 2 * X + 1)
    y.backward()
    np.testing.assert_allclose(arr(x.grad), 2 * (2 * X + 1))


def test_two_graphs_accumulate_into_one_grad(device):
    x = leaf(X, device)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(arr(x.grad), 3 + 2 * X)


def test_second_backward_without_retain_graph_raises(device):
    x = leaf(X, device)
    y = (x * x).sum()  # mul saves its inputs
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    # the failed call did not change the gradient of the first
    np.testing.assert_allclose(arr(x.grad), 2 * X)


@pytest.mark.parametrize("op", ["exp", "sigmoid", "div", "matmul", "max"])
def test_second_backward_raises_for_every_saving_op(device, op):
    x = leaf(X, device)
    f = {"exp": lambda t: t.exp(), "sigmoid": lambda t: t.sigmoid(), "div": lambda t: 1 / t,
         "matmul": lambda t: t @ t.T, "max": lambda t: t.max()}[op]
    y = f(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_second_backward_through_ops_that_save_nothing_works(device):
    # PyTorch allows it: add/sum/views keep nothing that backward frees.
    x = leaf(X, device)
    y = (x + 1).T.sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 2.0))


def test_setting_grad_to_none_resets(device):
    x = leaf(X, device)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 2.0))
    x.grad = None
    assert x.grad is None
    (x * 5).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 5.0))


def test_grad_can_be_assigned(device):
    x = leaf(X, device)
    x.grad = minitorch.ones(2, 3, dtype=minitorch.float64, device=device)
    (x * 2).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 3.0))


def test_grad_does_not_alias_the_gradient_argument(device):
    x = leaf(X, device)
    g = minitorch.tensor(np.ones((2, 3)), device=device)
    (x + 0).backward(g)
    (x + 0).backward(g)
    np.testing.assert_array_equal(arr(g), np.ones((2, 3)))
    np.testing.assert_array_equal(arr(x.grad), np.full((2, 3), 2.0))
    x.grad = None
    x.backward(g)  # a leaf's own backward
    g.detach()[0, 0] = 7.0
    np.testing.assert_array_equal(arr(x.grad), np.ones((2, 3)))


@pytest.mark.parametrize("fn", [
    lambda a, b: (a + b).sum(),
    lambda a, b: (a.clone() + b.clone()).sum(),
    lambda a, b: (a.view(4) + b.view(4)).sum(),
    lambda a, b: (a.T + b.T).sum(),
    lambda a, b: (a[None] + b[None]).sum(),
], ids=["add", "clone", "view", "T", "unsqueeze"])
def test_grads_of_two_leaves_do_not_share_memory(device, fn):
    # the engine hands one gradient tensor to both branches of an add; each .grad must own its memory
    a, b = leaf(np.zeros((2, 2)), device), leaf(np.zeros((2, 2)), device)
    fn(a, b).backward()
    assert a.grad._storage_id() != b.grad._storage_id()
    assert a.grad.is_contiguous() and b.grad.is_contiguous()
    with no_grad():
        a.grad.add_(5.0)
    np.testing.assert_array_equal(arr(b.grad), np.ones((2, 2)))


# ---------------------------------------------------------------- grad mode ----

def test_no_grad_context_manager(device):
    x = leaf(X, device)
    with no_grad():
        assert not minitorch.is_grad_enabled()
        y = x * 2 + x.exp()
        z = x[0].T @ x[1]
    assert minitorch.is_grad_enabled()
    for t in (y, z):
        assert not t.requires_grad
        assert t.grad_fn is None
        assert t.is_leaf
    np.testing.assert_allclose(arr(y), X * 2 + np.exp(X))
    assert (x * 2).requires_grad  # recording is back on


def test_no_grad_top_level_name(device):
    x = leaf(X, device)
    with minitorch.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad


def test_no_grad_decorator(device):
    @no_grad()
    def f(t):
        assert not minitorch.is_grad_enabled()
        return t * 2

    x = leaf(X, device)
    y = f(x)
    assert not y.requires_grad and y.grad_fn is None
    assert minitorch.is_grad_enabled()
    assert f.__name__ == "f"


def test_no_grad_restores_mode_after_exception():
    with pytest.raises(ZeroDivisionError):
        with no_grad():
            1 / 0
    assert minitorch.is_grad_enabled()

    @no_grad()
    def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        boom()
    assert minitorch.is_grad_enabled()


def test_enable_grad_inside_no_grad(device):
    x = leaf(X, device)
    with no_grad():
        with enable_grad():
            assert minitorch.is_grad_enabled()
            y = x * 2
        assert not minitorch.is_grad_enabled()
        z = x * 2
    assert y.requires_grad and y.grad_fn is not None and y.grad_fn.name() == "MulBackward0"
    assert not z.requires_grad
    y.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 2.0))


def test_enable_grad_decorator_inside_no_grad(device):
    @enable_grad()
    def f(t):
        return t * 3

    x = leaf(X, device)
    with no_grad():
        y = f(x)
        assert not minitorch.is_grad_enabled()
    assert y.requires_grad


def test_set_grad_enabled_acts_immediately(device):
    x = leaf(X, device)
    set_grad_enabled(False)
    try:
        assert not minitorch.is_grad_enabled()
        y = x * 2
    finally:
        set_grad_enabled(True)
    assert minitorch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_set_grad_enabled_as_context_manager(device):
    x = leaf(X, device)
    with set_grad_enabled(False):
        y = x * 2
    assert minitorch.is_grad_enabled()
    with set_grad_enabled(True):
        z = x * 2
    assert not y.requires_grad
    assert z.requires_grad
    with no_grad():
        with set_grad_enabled(True):
            w = x * 2
        assert not minitorch.is_grad_enabled()
    assert w.requires_grad


def test_inputs_without_requires_grad_record_nothing(device):
    a = minitorch.tensor(X, device=device)
    b = a * 2 + a.exp()
    assert not b.requires_grad and b.grad_fn is None and b.is_leaf


# ------------------------------------------------------------------- detach ----

def test_detach_shares_storage_and_has_no_grad(device):
    x = leaf(X, device)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad
    assert d.grad_fn is None
    assert d.is_leaf
    assert d.grad is None
    assert d._storage_id() == y._storage_id()
    assert d.data_ptr() == y.data_ptr()
    d[0, 0] = 100.0  # the write is seen through y
    assert y[0, 0].item() == 100.0
    # y is still in the graph
    y.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 2.0))


def test_detach_of_a_leaf_and_ops_after_it(device):
    x = leaf(X, device)
    d = x.detach()
    assert d._storage_id() == x._storage_id()
    out = d * x  # d is a constant here
    out.sum().backward()
    np.testing.assert_allclose(arr(x.grad), X)


def test_detach_stops_gradient(device):
    x = leaf(X, device)
    y = x * x
    z = (y.detach() * x).sum()  # d z / d x = y = x^2 (no flow through y)
    z.backward()
    np.testing.assert_allclose(arr(x.grad), X * X)


# -------------------------------------------------------- leaves and grad_fn ----

def test_is_leaf_and_requires_grad(device):
    x = leaf(X, device)
    c = minitorch.tensor(X, device=device)
    y = x * 2
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    assert c.is_leaf and not c.requires_grad
    assert not y.is_leaf and y.requires_grad
    assert (c * 2).is_leaf


def test_requires_grad_on_non_leaf_cannot_be_turned_off(device):
    y = leaf(X, device) * 2
    with pytest.raises(RuntimeError):
        y.requires_grad = False
    y.requires_grad = True  # a no-op, allowed


def test_requires_grad_flag_and_method(device):
    c = minitorch.tensor(X, device=device)
    assert c.requires_grad_() is c
    assert c.requires_grad
    c.requires_grad_(False)
    assert not c.requires_grad
    z = minitorch.zeros(2, 3, dtype=minitorch.float64, requires_grad=True, device=device)
    assert z.requires_grad and z.is_leaf


@pytest.mark.parametrize("fn, name", [
    (lambda x: x * 2, "MulBackward0"),
    (lambda x: x + 2, "AddBackward0"),
    (lambda x: x - x, "SubBackward0"),
    (lambda x: x / 2, "DivBackward0"),
    (lambda x: x ** 2, "PowBackward0"),
    (lambda x: -x, "NegBackward0"),
    (lambda x: x.exp(), "ExpBackward0"),
    (lambda x: x.abs().log(), "LogBackward0"),
    (lambda x: x.abs().sqrt(), "SqrtBackward0"),
    (lambda x: x.abs(), "AbsBackward0"),
    (lambda x: x.sigmoid(), "SigmoidBackward0"),
    (lambda x: x.relu(), "ReluBackward0"),
    (lambda x: x.tanh(), "TanhBackward0"),
    (lambda x: minitorch.maximum(x, x * 2), "MaximumBackward0"),
    (lambda x: minitorch.minimum(x, x * 2), "MinimumBackward0"),
    (lambda x: minitorch.where(x > 0, x, x * 2), "WhereBackward0"),
    (lambda x: x.sum(0), "SumBackward1"),
    (lambda x: x.max(), "MaxBackward1"),
    (lambda x: x.max(0).values, "MaxBackward0"),
    (lambda x: x.min(), "MinBackward1"),
    (lambda x: x.min(1).values, "MinBackward0"),
    (lambda x: x @ x.T, "MmBackward0"),
    (lambda x: x.view(6), "ViewBackward0"),
    (lambda x: x.permute(1, 0), "PermuteBackward0"),
    (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    (lambda x: x.expand(2, 2, 3), "ExpandBackward0"),
    (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x[None], "UnsqueezeBackward0"),
    (lambda x: x[0], "SelectBackward0"),
    (lambda x: x[:, 1:], "SliceBackward0"),
    (lambda x: x.clone(), "CloneBackward0"),
    (lambda x: x.T.contiguous(), "CloneBackward0"),
])
def test_grad_fn_names(device, fn, name):
    y = fn(leaf(X, device))
    assert y.grad_fn is not None
    assert y.grad_fn.name() == name
    assert f"grad_fn=<{name}>" in repr(y)
    assert name in repr(y.grad_fn)


def test_repr_shows_grad_fn_and_requires_grad(device):
    x = leaf([1.0, 2.0], device)
    assert "requires_grad=True" in repr(x)
    assert "grad_fn" not in repr(x)
    y = x * 2
    assert "grad_fn=<MulBackward0>" in repr(y)
    with no_grad():
        assert "grad" not in repr(x * 2)


def test_next_functions_describe_the_graph(device):
    x = leaf(X, device)
    c = minitorch.tensor(X, device=device)
    y = x * c
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert acc.name() == "AccumulateGrad" and nr == 0
    assert none is None
    z = y.exp()
    (prev, _), = z.grad_fn.next_functions
    assert prev.name() == "MulBackward0"


def test_contiguous_of_contiguous_is_the_same_tensor(device):
    x = leaf(X, device)
    assert x.contiguous() is x  # as in PyTorch: no copy, no node
    y = x.T.contiguous()
    assert y is not x and y.grad_fn.name() == "CloneBackward0"


def test_gradient_through_dtype_casts(device):
    x = leaf([1.0, 2.0], device)
    (x.float() * 2).sum().backward()  # ToCopyBackward0: the gradient comes back as float64
    assert x.grad.dtype == minitorch.float64
    np.testing.assert_array_equal(arr(x.grad), [2.0, 2.0])
    x32 = minitorch.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True, device=device)
    y64 = leaf([3.0, 4.0], device)
    (x32 * y64).sum().backward()  # promoted to float64; each grad in its leaf's dtype
    assert x32.grad.dtype == minitorch.float32 and y64.grad.dtype == minitorch.float64
    assert x32.grad.device == x32.device and y64.grad.device == y64.device
    np.testing.assert_array_equal(arr(x32.grad), [3.0, 4.0])
    np.testing.assert_array_equal(arr(y64.grad), [1.0, 2.0])


# ----------------------------------------------------------------- non-leaf ----

def test_non_leaf_grad_is_none_without_retain_grad(device):
    x = leaf(X, device)
    y = x * 2
    z = (y * y).sum()
    z.backward()
    assert y.grad is None
    assert not y.retains_grad
    np.testing.assert_allclose(arr(x.grad), 8 * X)


def test_retain_grad_keeps_non_leaf_grad(device):
    x = leaf(X, device)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    np.testing.assert_allclose(arr(y.grad), 4 * X)
    np.testing.assert_allclose(arr(x.grad), 8 * X)
    z.backward()  # accumulates too
    np.testing.assert_allclose(arr(y.grad), 8 * X)


def test_retain_grad_on_a_leaf_is_a_no_op(device):
    x = leaf(X, device)
    x.retain_grad()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), np.full(X.shape, 3.0))


def test_retain_grad_on_a_view(device):
    x = leaf(X, device)
    v = x.T
    v.retain_grad()
    (v * minitorch.tensor(X.T, device=device)).sum().backward()
    np.testing.assert_allclose(arr(v.grad), X.T)
    np.testing.assert_allclose(arr(x.grad), X)


# ------------------------------------------------------------ autograd.grad ----

def test_autograd_grad_returns_without_touching_dot_grad(device):
    x = leaf(X, device)
    w = leaf([1.0, 2.0, 3.0], device)
    out = (x * w).sum()
    gx, gw = minitorch.autograd.grad(out, [x, w])
    assert x.grad is None and w.grad is None
    np.testing.assert_allclose(arr(gx), np.broadcast_to([1.0, 2.0, 3.0], X.shape))
    np.testing.assert_allclose(arr(gw), X.sum(0))
    assert gx.shape == x.shape and gw.shape == w.shape
    assert gx.device == x.device and gw.device == w.device


def test_autograd_grad_single_input_and_retain_graph(device):
    x = leaf(X, device)
    y = (x * x).sum()
    (g,) = minitorch.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(arr(g), 2 * X)
    (g2,) = minitorch.autograd.grad(y, x)  # graph was retained
    np.testing.assert_allclose(arr(g2), 2 * X)
    with pytest.raises(RuntimeError, match="second time"):
        minitorch.autograd.grad(y, x)
    assert x.grad is None


def test_autograd_grad_of_intermediate_and_grad_outputs(device):
    x = leaf(X, device)
    y = x * 3
    z = y.exp()
    g = minitorch.tensor(np.full(X.shape, 2.0), device=device)
    (gy,) = minitorch.autograd.grad(z, y, grad_outputs=g)
    np.testing.assert_allclose(arr(gy), 2 * np.exp(3 * X))
    assert x.grad is None and y.grad is None


def test_autograd_grad_unused_input(device):
    x = leaf(X, device)
    unused = leaf([1.0], device)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        minitorch.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = minitorch.autograd.grad(y, [x, unused], allow_unused=True)
    assert gu is None
    np.testing.assert_array_equal(arr(gx), np.full(X.shape, 2.0))


def test_autograd_backward_function_with_several_roots(device):
    x = leaf(X, device)
    a = (x * 2).sum()
    b = x * x
    minitorch.autograd.backward([a, b], [None, minitorch.tensor(np.ones(X.shape), device=device)])
    np.testing.assert_allclose(arr(x.grad), 2 + 2 * X)


# ------------------------------------------------------------------- errors ----

def test_backward_on_non_scalar_needs_gradient(device):
    x = leaf(X, device)
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2).backward()
    assert x.grad is None


def test_backward_on_tensor_without_grad(device):
    c = minitorch.tensor(X, device=device)
    with pytest.raises(RuntimeError, match="does not require grad"):
        c.sum().backward()
    with no_grad():
        y = leaf(X, device).sum()
    with pytest.raises(RuntimeError):
        y.backward()


def test_requires_grad_on_integer_tensor(device):
    with pytest.raises(RuntimeError, match="floating point"):
        minitorch.tensor([1, 2, 3], requires_grad=True, device=device)
    t = minitorch.tensor(np.array([1, 2], dtype=np.int64), device=device)
    with pytest.raises(RuntimeError):
        t.requires_grad_()
    with pytest.raises(RuntimeError):
        t.requires_grad = True
    with pytest.raises(RuntimeError):
        minitorch.tensor([True, False], requires_grad=True, device=device)
    assert not t.requires_grad


def test_gradient_with_wrong_shape_raises(device):
    x = leaf(X, device)
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(minitorch.ones(3, 2, dtype=minitorch.float64, device=device))


@pytest.mark.parametrize("inplace", [
    lambda t: t.__iadd__(1),
    lambda t: t.add_(1),
    lambda t: t.sub_(1),
    lambda t: t.mul_(2),
    lambda t: t.div_(2),
    lambda t: t.fill_(0.0),
    lambda t: t.zero_(),
    lambda t: t.copy_(minitorch.tensor(np.zeros(X.shape), device=t.device)),
    lambda t: t.__setitem__(0, 5.0),
], ids=["iadd", "add_", "sub_", "mul_", "div_", "fill_", "zero_", "copy_", "setitem"])
def test_inplace_on_leaf_that_requires_grad(device, inplace):
    x = leaf(X, device)
    with pytest.raises(RuntimeError, match="leaf"):
        inplace(x)
    np.testing.assert_array_equal(arr(x), X)  # untouched
    with no_grad():
        out = inplace(x)
    assert out is None or out is x
    assert not np.array_equal(arr(x), X)  # changed in place
    assert x.requires_grad and x.is_leaf and x.grad_fn is None


def test_augmented_assignment_on_leaf_statement_form(device):
    x = leaf(X, device)
    with pytest.raises(RuntimeError, match="leaf"):
        x += 1
    with no_grad():
        x += 1
        x *= 2
    np.testing.assert_allclose(arr(x), (X + 1) * 2)
    assert x.requires_grad and x.is_leaf


# ------------------------------------------------- gradients through graphs ----

def test_backward_with_explicit_gradient(device):
    x = leaf(X, device)
    y = x * 3
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y.backward(gradient=minitorch.tensor(g, device=device))
    np.testing.assert_allclose(arr(x.grad), 3 * g)


@pytest.mark.parametrize("fn", [lambda t: t, lambda t: t + 0, lambda t: t.T, lambda t: t * 2],
                         ids=["leaf", "add", "T", "mul"])
def test_gradient_on_another_device_raises(device, fn):
    # as in PyTorch ("invalid gradient at index 0 - expected device cuda:0 but got cpu"):
    # never a .grad, or an autograd.grad result, on another device than its tensor
    other = other_device(device)
    x = leaf(X, device)
    g = minitorch.ones(*fn(x).shape, dtype=minitorch.float64, device=other)
    with pytest.raises(RuntimeError, match="device"):
        fn(x).backward(g)
    assert x.grad is None
    with pytest.raises(RuntimeError, match="device"):
        minitorch.autograd.grad(fn(x), x, grad_outputs=g)
    with pytest.raises(RuntimeError, match="device"):
        x.grad = minitorch.ones(*X.shape, dtype=minitorch.float64, device=other)
    assert x.grad is None


def test_backward_with_explicit_gradient_of_other_float_dtype(device):
    x = leaf(X, device)
    (x * 3).backward(minitorch.ones(2, 3, device=device))  # float32 gradient for a float64 output
    assert x.grad.dtype == minitorch.float64 and x.grad.device == x.device
    np.testing.assert_allclose(arr(x.grad), np.full(X.shape, 3.0))


def test_scalar_backward_of_one_element_tensor(device):
    x = leaf([2.0], device)
    (x * x).backward()  # shape (1,): a scalar in PyTorch's sense
    np.testing.assert_allclose(arr(x.grad), [4.0])


def test_broadcast_input_gradient_is_summed_to_its_shape(device):
    a_np = np.array([[1.0], [2.0], [3.0]])        # (3, 1)
    b_np = np.array([10.0, 20.0, 30.0, 40.0])     # (4,)
    a, b = leaf(a_np, device), leaf(b_np, device)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(arr(a.grad), np.full((3, 1), b_np.sum()))
    np.testing.assert_allclose(arr(b.grad), np.full(4, a_np.sum()))


def test_broadcast_scalar_tensor_gradient(device):
    s = leaf(2.0, device)
    x = leaf(X, device)
    (s * x).sum().backward()
    assert s.grad.shape == s.shape
    np.testing.assert_allclose(arr(s.grad).reshape(()), X.sum())


def test_one_tensor_feeding_several_ops(device):
    x = leaf(X, device)
    a = x.exp()
    b = x * 2
    c = x.sigmoid()
    out = (a + b * x + c * 3).sum()
    out.backward()
    s = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(arr(x.grad), np.exp(X) + 4 * X + 3 * s * (1 - s), rtol=1e-12)


def test_diamond_graph(device):
    x = leaf(X, device)
    y = x * 2
    z = y * y + y.exp()  # y used twice; x reached through one node on two paths
    z.sum().backward()
    np.testing.assert_allclose(arr(x.grad), 2 * (2 * (2 * X) + np.exp(2 * X)), rtol=1e-12)


def test_partially_required_inputs(device):
    x = leaf(X, device)
    c = minitorch.tensor(X * 10, device=device)
    (x * c + c).sum().backward()
    np.testing.assert_allclose(arr(x.grad), X * 10)
    assert c.grad is None


def test_gradient_through_views_of_one_leaf(device):
    x = leaf(np.arange(6.0).reshape(2, 3), device)
    (x[0] * 2 + x[1] * 3 + x.T[:, 0]).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), [[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]])


def test_unused_branch_gets_no_gradient(device):
    x = leaf(X, device)
    w = leaf(X, device)
    _ = w * 2  # never reaches the output
    (x * 2).sum().backward()
    assert w.grad is None


def _run_python(code: str, timeout: float = 600.0) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter, so a crash (stack overflow) is a test failure.
    The timeout only catches a hang: it is no speed check (the deep chain on emulated
    'cuda' under AddressSanitizer took over 60 s on a busy 2-core CI machine)."""
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.parametrize("step", ["y * 1.0000001", "y + 0"])
def test_deep_chain_backward_and_teardown(device, step):
    # The depth tests the engine and the graph's teardown (no recursion), which are the
    # same for every device: 100,000 nodes on the CPU; on cuda 10,000 keep the emulated
    # run (a fiber switch per launch, slower still under ASan) short.
    depth = 100_000 if device == "cpu" else 10_000
    code = f"""
        import numpy as np, minitorch
        x = minitorch.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True, device={device!r})
        y = x
        for _ in range({depth}):
            y = {step}
        y.sum().backward()
        assert x.grad.device == x.device
        print(repr(x.grad.cpu().numpy().tolist()))
        del y                      # tearing down a deep graph
        y = x
        for _ in range({depth}):
            y = {step}
        del y                      # and one that never ran backward
        print("done")
    """
    proc = _run_python(code)
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "done"
    grad = np.array(eval(lines[0]))
    want = 1.0000001 ** depth if "*" in step else 1.0
    np.testing.assert_allclose(grad, np.full(3, want), rtol=1e-9)


def test_deep_chain_in_process(device):
    x = leaf([1.0, 2.0], device)
    y = x
    for _ in range(20_000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), [1.0, 1.0])


# ------------------------------------------------------------------- memory ----

def _train(steps: int, x, t, w, b, lr=0.1):
    losses = []
    for _ in range(steps):
        loss = (((x @ w + b).sigmoid() - t) ** 2).mean()
        loss.backward()
        with no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        w.grad = None
        b.grad = None
        losses.append(loss.item())
    return losses


def test_training_loop_does_not_leak_tensors(device):
    r = np.random.default_rng(0)
    x = minitorch.tensor(r.normal(size=(16, 3)), device=device)
    t = minitorch.tensor((r.uniform(size=(16, 1)) > 0.5).astype(np.float64), device=device)
    w = leaf(r.normal(size=(3, 1)) * 0.1, device)
    b = leaf(np.zeros(1), device)
    _train(5, x, t, w, b)  # warm-up: anything cached once is made now
    gc.collect()
    before = minitorch._C.live_tensor_count()
    losses = _train(1000, x, t, w, b)
    gc.collect()
    after = minitorch._C.live_tensor_count()
    assert after - before <= 2, f"live tensors grew from {before} to {after} over 1000 steps"
    assert losses[-1] < losses[0]  # and it trained
    assert w.is_leaf and w.requires_grad and b.is_leaf and b.requires_grad


def test_graph_is_freed_when_output_dies(device):
    x = leaf(X, device)
    gc.collect()
    before = minitorch._C.live_tensor_count()
    for _ in range(50):
        y = (x * x).exp().sum()
        del y
    gc.collect()
    assert minitorch._C.live_tensor_count() - before <= 1


def test_backward_frees_saved_tensors(device):
    x = leaf(X, device)
    gc.collect()
    before = minitorch._C.live_tensor_count()
    y = (x * x).exp().sigmoid().sum()
    during = minitorch._C.live_tensor_count()
    y.backward()
    gc.collect()
    after_backward = minitorch._C.live_tensor_count()
    assert after_backward < during  # saved tensors released though y is alive
    del y
    x.grad = None
    gc.collect()
    assert minitorch._C.live_tensor_count() <= before


# ------------------------------------------------- in-place after save (versions) ----

MODIFIED = "modified by an inplace operation"


def test_in_place_writes_bump_the_version_of_every_view(device):
    x = minitorch.zeros(2, 3, device=device)
    v = x[0]
    assert x._version == 0
    x += 1
    v.fill_(2.0)
    x[1] = 5.0
    x.copy_(minitorch.ones(2, 3, device=device))
    assert x._version == v._version == 4
    assert (x + 1)._version == 0  # a new result is a new memory


@pytest.mark.parametrize("how", ["iadd", "setitem", "copy_", "view_fill_"])
def test_changing_a_saved_input_in_place_fails_backward(device, how):
    w = leaf([1.0, 2.0, 3.0], device)
    x = minitorch.tensor([4.0, 5.0, 6.0], dtype=minitorch.float64, device=device)  # no grad: may be changed
    y = (x * w).sum()  # backward needs x: d(x*w)/dw = x
    {"iadd": lambda: x.add_(1.0), "setitem": lambda: x.__setitem__(0, 9.0),
     "copy_": lambda: x.copy_(minitorch.zeros(3, dtype=minitorch.float64, device=device)),
     "view_fill_": lambda: x[1:].fill_(0.0)}[how]()
    with pytest.raises(RuntimeError, match=f"{MODIFIED}.*MulBackward0.*expected version 0"):
        y.backward()
    assert w.grad is None


def test_optimizer_step_between_forward_and_backward_fails(device):
    # A classic mistake: the step changes the weights the graph saved.
    model = minitorch.nn.Linear(3, 2).to(device)
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
    x = minitorch.ones(4, 3, device=device)
    x.requires_grad_()
    loss = model(x).sum()
    for p in model.parameters():
        p.grad = minitorch.ones_like(p)
    opt.step()
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


def test_changing_what_backward_does_not_read_is_fine(device):
    w = leaf([1.0, 2.0], device)
    y = (w * 3.0).sum() + (w + 1.0).sum()  # neither saves w
    with minitorch.no_grad():
        w.mul_(10.0)
    y.backward()
    np.testing.assert_array_equal(arr(w.grad), [4.0, 4.0])


def test_retained_graph_sees_a_later_change(device):
    w = leaf([1.0, 2.0], device)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    with minitorch.no_grad():
        w.sub_(1.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_custom_function_saved_tensor_changed_in_place(device):
    class Square(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    w = leaf([1.0, 2.0], device)
    y = Square.apply(w).sum()
    with minitorch.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match=f"{MODIFIED}.*SquareBackward.*expected version 0"):
        y.backward()


def test_returned_indices_changed_in_place_fail_backward(device):
    # max_pool2d(return_indices=True) and max(dim) hand their indices to the caller and
    # also use them in backward: changing them must not scatter gradients anywhere.
    F = minitorch.nn.functional
    x = minitorch.randn(1, 1, 4, 4, dtype=minitorch.float64, device=device, requires_grad=True)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    idx.add_(10**9)
    with pytest.raises(RuntimeError, match=f"{MODIFIED}.*MaxPool2D"):
        out.sum().backward()
    v, i = x.max(dim=2)
    i.zero_()
    with pytest.raises(RuntimeError, match=MODIFIED):
        v.sum().backward()


def test_linear_saves_only_what_backward_reads(device):
    # The weights may change after a forward whose input needs no grad... as long as
    # backward does not need them (dW reads only x); changing x does fail.
    lin = minitorch.nn.Linear(3, 2).to(device)
    x = minitorch.randn(4, 3, device=device)
    loss = lin(x).sum()
    with minitorch.no_grad():
        lin.weight.mul_(0.5)
    loss.backward()
    np.testing.assert_allclose(arr(lin.weight.grad), np.tile(arr(x).sum(0), (2, 1)), rtol=1e-5)
    loss = lin(x).sum()
    x.add_(1.0)
    with pytest.raises(RuntimeError, match=f"{MODIFIED}.*LinearBackward"):
        loss.backward()
