"""Custom ``minitorch.autograd.Function`` subclasses: correct ones checked with
gradcheck and mixed with built-in ops, and the errors a student's mistakes must give,
on every device (``cpu``, and ``cuda`` when available)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON
from conftest import to_numpy as arr
from minitorch.autograd import Function
from minitorch.testing import GradcheckError, gradcheck


def leaf(values, device: str) -> minitorch.Tensor:
    """A float64 leaf on ``device`` that requires grad."""
    return minitorch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True, device=device)


def rand(shape, seed=0, low=-1.0, high=1.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape)


class MySigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + (-x).exp())
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 - s)


class MyLinear(Function):
    """y = x @ w + b, with only the gradients that are needed."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w + b

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        gx = grad @ w.T if ctx.needs_input_grad[0] else None
        gw = x.T @ grad if ctx.needs_input_grad[1] else None
        gb = grad.sum(0) if ctx.needs_input_grad[2] else None
        return gx, gw, gb


class Scale(Function):
    """x * scale with a Python float argument."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


# ---------------------------------------------------------- correct functions ----

def test_my_sigmoid_values_and_gradcheck(device):
    x = leaf(rand((3, 4)), device)
    y = MySigmoid.apply(x)
    np.testing.assert_allclose(arr(y), 1 / (1 + np.exp(-arr(x))), rtol=1e-12)
    assert y.requires_grad
    assert gradcheck(MySigmoid.apply, (x,))


def test_my_sigmoid_matches_builtin_gradient(device):
    xv = rand((3, 4), seed=1)
    a, b = leaf(xv, device), leaf(xv, device)
    MySigmoid.apply(a).sum().backward()
    b.sigmoid().sum().backward()
    assert a.grad.device == a.device
    np.testing.assert_allclose(arr(a.grad), arr(b.grad), rtol=1e-12)


def test_grad_fn_name(device):
    x = leaf(rand((2, 2)), device)
    y = MySigmoid.apply(x)
    assert y.grad_fn.name() == "MySigmoidBackward"
    assert "grad_fn=<MySigmoidBackward>" in repr(y)
    assert not y.is_leaf
    assert MyLinear.apply(x, x, x[0]).grad_fn.name() == "MyLinearBackward"


def test_mixed_with_builtin_ops_before_and_after(device):
    def f(x, w):
        h = (x * 2 - 0.5).T          # built-ins before (non-contiguous view)
        s = MySigmoid.apply(h)        # custom
        return (s @ w).tanh().sum(0)  # built-ins after

    x = leaf(rand((4, 3), seed=2), device)
    w = leaf(rand((4, 2), seed=3), device)
    assert gradcheck(f, (x, w))


def test_my_linear_gradcheck(device):
    x = leaf(rand((3, 4), seed=4), device)
    w = leaf(rand((4, 2), seed=5), device)
    b = leaf(rand((2,), seed=6), device)
    y = MyLinear.apply(x, w, b)
    np.testing.assert_allclose(arr(y), arr(x) @ arr(w) + arr(b), rtol=1e-12)
    assert gradcheck(MyLinear.apply, (x, w, b))


def test_my_linear_in_a_network(device):
    def net(x, w1, b1, w2, b2):
        h = MySigmoid.apply(MyLinear.apply(x, w1, b1))
        return (MyLinear.apply(h, w2, b2) ** 2).mean()

    shapes = [(3, 4), (4, 3), (3,), (3, 2), (2,)]
    args = tuple(leaf(rand(shape, seed=7 + i), device) for i, shape in enumerate(shapes))
    assert gradcheck(net, args)


def test_my_linear_matches_builtin_ops(device):
    xv, wv, bv = rand((3, 4), seed=12), rand((4, 2), seed=13), rand((2,), seed=14)
    x1, w1, b1 = leaf(xv, device), leaf(wv, device), leaf(bv, device)
    x2, w2, b2 = leaf(xv, device), leaf(wv, device), leaf(bv, device)
    (MyLinear.apply(x1, w1, b1).sigmoid() * 3).sum().backward()
    ((x2 @ w2 + b2).sigmoid() * 3).sum().backward()
    for a, b in ((x1, x2), (w1, w2), (b1, b2)):
        np.testing.assert_allclose(arr(a.grad), arr(b.grad), rtol=1e-12)


def test_needs_input_grad_reflects_inputs(device):
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, w, b):
            seen["forward"] = ctx.needs_input_grad
            return x @ w + b

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = ctx.needs_input_grad
            return None, grad.sum(0).unsqueeze(0).expand(4, 2) * 0 + 1, None

    x = minitorch.tensor(rand((3, 4), seed=15), device=device)
    w = leaf(rand((4, 2), seed=16), device)
    b = minitorch.tensor(rand((2,), seed=17), device=device)
    Probe.apply(x, w, b).sum().backward()
    assert tuple(seen["forward"]) == (False, True, False)
    assert tuple(seen["backward"]) == (False, True, False)
    assert w.grad.device == w.device
    np.testing.assert_array_equal(arr(w.grad), np.ones((4, 2)))
    assert x.grad is None and b.grad is None


def test_only_needed_gradients_are_computed(device):
    calls = []

    class Lin(MyLinear):
        @staticmethod
        def backward(ctx, grad):
            calls.append(tuple(ctx.needs_input_grad))
            return MyLinear.backward(ctx, grad)

    x = minitorch.tensor(rand((3, 4), seed=18), device=device)
    w = leaf(rand((4, 2), seed=19), device)
    b = leaf(rand((2,), seed=20), device)
    Lin.apply(x, w, b).sum().backward()
    assert calls == [(False, True, True)]
    np.testing.assert_allclose(arr(w.grad), arr(x).T @ np.ones((3, 2)), rtol=1e-12)
    np.testing.assert_allclose(arr(b.grad), np.full(2, 3.0))


def test_non_tensor_argument_gets_none_gradient(device):
    x = leaf(rand((2, 3), seed=21), device)
    y = Scale.apply(x, 2.5)
    np.testing.assert_allclose(arr(y), 2.5 * arr(x))
    y.sum().backward()
    np.testing.assert_allclose(arr(x.grad), np.full((2, 3), 2.5))
    assert gradcheck(lambda t: Scale.apply(t, -1.5), (x,))


def test_non_tensor_argument_gradient_must_be_none_or_is_ignored(device):
    # backward returns one value per forward argument; for the float, None is right
    class ScaleBoth(Function):
        @staticmethod
        def forward(ctx, scale, x):
            ctx.scale = scale
            return x * scale

        @staticmethod
        def backward(ctx, grad):
            return None, grad * ctx.scale

    x = leaf([1.0, 2.0], device)
    ScaleBoth.apply(3.0, x).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), [3.0, 3.0])


def test_multiple_outputs(device):
    class SplitScale(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = leaf(rand((2, 3), seed=22), device)
    a, b = SplitScale.apply(x)
    assert a.grad_fn is b.grad_fn or a.grad_fn.name() == b.grad_fn.name() == "SplitScaleBackward"
    (a.sum() + (b * b).sum()).backward()
    np.testing.assert_allclose(arr(x.grad), 2 + 2 * 3 * (3 * arr(x)), rtol=1e-12)
    x.grad = None
    a2, _ = SplitScale.apply(x)  # one output unused: its gradient arrives as zeros
    a2.sum().backward()
    np.testing.assert_allclose(arr(x.grad), np.full((2, 3), 2.0))


def test_forward_runs_without_recording(device):
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen["enabled"] = minitorch.is_grad_enabled()
            seen["requires_grad"] = y.requires_grad
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = leaf([1.0], device)
    out = Probe.apply(x)
    assert seen == {"enabled": False, "requires_grad": False}
    assert out.grad_fn.name() == "ProbeBackward"
    assert minitorch.is_grad_enabled()


def test_returning_an_input_unchanged(device):
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 1

    x = leaf([1.0, 2.0], device)
    y = Identity.apply(x)
    assert x.is_leaf and x.grad_fn is None  # the input's history is not rewritten
    assert y.grad_fn.name() == "IdentityBackward"
    (y * 3).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), [3.0, 3.0])


def test_apply_under_no_grad(device):
    x = leaf(rand((2, 3), seed=23), device)
    with minitorch.no_grad():
        y = MySigmoid.apply(x)
    assert isinstance(y, minitorch.Tensor)
    assert y.grad_fn is None
    assert not y.requires_grad
    np.testing.assert_allclose(arr(y), 1 / (1 + np.exp(-arr(x))), rtol=1e-12)


def test_apply_on_inputs_without_grad(device):
    y = MySigmoid.apply(minitorch.tensor(np.zeros(3), device=device))
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_allclose(arr(y), np.full(3, 0.5))


def test_backward_twice_needs_retain_graph(device):
    x = leaf([0.1, 0.2], device)
    y = MySigmoid.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    s = 1 / (1 + np.exp(-np.array([0.1, 0.2])))
    np.testing.assert_allclose(arr(x.grad), 2 * s * (1 - s), rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_gradient_dtype_is_cast_to_input_dtype(device):
    class F32Grad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return (grad * 2).float()

    x = leaf([1.0, 2.0], device)
    F32Grad.apply(x).sum().backward()
    assert x.grad.dtype == minitorch.float64 and x.grad.device == x.device
    np.testing.assert_array_equal(arr(x.grad), [2.0, 2.0])


def test_function_graphs_do_not_leak(device):
    import gc

    x = leaf(np.ones((3, 3)), device)
    for _ in range(3):
        MySigmoid.apply(x).sum().backward()
    x.grad = None
    gc.collect()
    before = minitorch._C.live_tensor_count()
    for _ in range(200):
        MyLinear.apply(MySigmoid.apply(x * 2), x, x[0]).sum().backward()
        unused = MySigmoid.apply(x)  # a graph that never runs backward
        del unused
        x.grad = None
    gc.collect()
    assert minitorch._C.live_tensor_count() - before <= 2


def test_saved_output_graph_is_freed_without_the_garbage_collector(device):
    # MySigmoid saves its own output: the node must keep it without a reference cycle,
    # so dropping the output frees everything by reference counting alone.
    import gc

    x = leaf(np.ones((3, 3)), device)
    MySigmoid.apply(x).sum().backward()  # warm-up
    x.grad = None
    gc.collect()
    gc.disable()
    try:
        before = minitorch._C.live_tensor_count()
        for _ in range(50):
            y = MySigmoid.apply(x * 2)
            s = y.grad_fn  # the node stays alive through its output
            del y, s
        assert minitorch._C.live_tensor_count() - before <= 1
        y = MySigmoid.apply(x)
        y.sum().backward()
        del y
        x.grad = None
        assert minitorch._C.live_tensor_count() - before <= 1
    finally:
        gc.enable()


def test_save_for_backward_with_none_entries(device):
    class MaybeScale(Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(None, w, None)
            return x * w

        @staticmethod
        def backward(ctx, grad):
            a, w, c = ctx.saved_tensors
            assert a is None and c is None
            return grad * w, None

    x = leaf([1.0, 2.0], device)
    w = minitorch.tensor([3.0, 4.0], dtype=minitorch.float64, device=device)
    MaybeScale.apply(x, w).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), [3.0, 4.0])


def test_saved_tensors_outside_backward(device):
    # Readable while the graph holds them; PyTorch's error once backward freed them
    # or the graph is gone.
    ctxs = []

    class Keep(MySigmoid):
        @staticmethod
        def forward(ctx, x):
            ctxs.append(ctx)
            return MySigmoid.forward(ctx, x)

    x = leaf([0.0, 1.0], device)
    y = Keep.apply(x)
    (s,) = ctxs[0].saved_tensors
    np.testing.assert_allclose(arr(s), arr(y), rtol=1e-12)
    assert s.grad_fn is None  # an alias without history
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ctxs[0].saved_tensors
    Keep.apply(x)  # output dropped at once: its graph is gone
    with pytest.raises(RuntimeError, match="already been freed"):
        ctxs[1].saved_tensors


def test_retain_graph_keeps_saved_tensors(device):
    x = leaf([0.5], device)
    y = MySigmoid.apply(x)
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    s = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose(arr(x.grad), [2 * s * (1 - s)], rtol=1e-12)


def test_function_that_saves_nothing_can_backward_twice(device):
    # as for built-in ops that save nothing: only saved tensors are freed
    x = leaf([1.0, 2.0], device)
    y = Scale.apply(x, 2.0).sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(arr(x.grad), [4.0, 4.0])


# ------------------------------------------------------------------- errors ----

def test_wrong_number_of_gradients(device):
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, grad

    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, w):
            return x * w

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="incorrect number of gradients") as info:
        TooMany.apply(x).sum().backward()
    assert "TooManyBackward" in str(info.value) and "expected 1, got 2" in str(info.value)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooFew.apply(x, leaf([3.0, 4.0], device)).sum().backward()
    assert x.grad is None


def test_gradient_with_wrong_shape(device):
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad):
            return grad  # should be expanded to x's shape

    x = leaf(rand((2, 3), seed=24), device)
    with pytest.raises(RuntimeError, match="invalid gradient at index 0") as info:
        BadShape.apply(x).backward()
    assert "(2, 3)" in str(info.value)
    assert x.grad is None


def test_wrong_shape_at_later_index(device):
    class BadSecond(Function):
        @staticmethod
        def forward(ctx, x, w):
            return x * w

        @staticmethod
        def backward(ctx, grad):
            return grad, grad.sum()

    with pytest.raises(RuntimeError, match="invalid gradient at index 1"):
        BadSecond.apply(leaf([1.0, 2.0], device), leaf([3.0, 4.0], device)).sum().backward()


def test_gradient_on_another_device(device):
    # as in PyTorch ("invalid gradient at index 0 - expected device cuda:0 but got cpu"),
    # rather than a leaf whose .grad is on another device than the leaf
    if not minitorch.cuda.is_available():
        pytest.skip(CUDA_SKIP_REASON)
    other = "cpu" if device == "cuda" else "cuda"

    class OtherDevice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return (grad * 2).to(other)

    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="invalid gradient at index 0") as info:
        OtherDevice.apply(x).sum().backward()
    assert "device" in str(info.value)
    assert x.grad is None


def test_forward_returning_non_tensor(device):
    class NotATensor(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum().item()

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="NotATensor"):
        NotATensor.apply(leaf([1.0, 2.0], device))


def test_backward_returning_non_tensor(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return 2.0

    with pytest.raises(TypeError):
        Bad.apply(leaf([1.0], device)).sum().backward()


def test_save_for_backward_rejects_non_tensors(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3.0)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.raises(TypeError, match="save_for_backward"):
        Bad.apply(leaf([1.0], device))


def test_saved_tensor_changed_in_place_names_the_function(device):
    # The engine's version check, as for built-in ops: it names the Function's node.
    x = minitorch.tensor([1.0, 2.0], dtype=minitorch.float64, device=device)
    w = leaf([3.0, 4.0], device)
    y = MyLinear.apply(x.unsqueeze(0), w.unsqueeze(1), w[0:1])
    x.mul_(2.0)  # x needs no grad: allowed, but backward would read the new values
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        y.sum().backward()
    assert "MyLinearBackward" in str(info.value) and "expected version 0" in str(info.value)
    assert w.grad is None


def test_missing_forward_or_backward(device):
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError):
        NoBackward.apply(leaf([1.0], device)).sum().backward()


def test_gradcheck_catches_a_wrong_backward(device):
    class WrongSigmoid(MySigmoid):
        @staticmethod
        def backward(ctx, grad):
            (s,) = ctx.saved_tensors
            return grad * s  # missing (1 - s)

    x = leaf(rand((2, 3), seed=25), device)
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongSigmoid.apply, (x,))
    assert gradcheck(WrongSigmoid.apply, (x,), raise_exception=False) is False


def test_gradcheck_of_identity_and_of_functions_returning_an_input(device):
    # PyTorch's gradcheck accepts these; the output may be the (grad-requiring) input itself
    x = leaf(rand((2, 3), seed=26), device)
    assert gradcheck(lambda t: t, (x,))
    assert gradcheck(lambda t: t.contiguous(), (x,))
    assert gradcheck(lambda t, u: (t, u * 2), (x, leaf(rand((2,), seed=27), device)))
    # several outputs whose graphs save the inputs (on cuda each output needs a fresh graph)
    y = leaf(rand((2, 3), seed=28), device)
    assert gradcheck(lambda t, u: (t + u, t * u, t.matmul(u.t())), (x, y))


def test_gradcheck_wants_float64_and_a_grad_input():
    # argument checks made in Python before anything is computed: one device is enough
    with pytest.raises(TypeError, match="float64"):
        gradcheck(MySigmoid.apply, (minitorch.tensor(np.zeros(2, dtype=np.float32), requires_grad=True),))
    with pytest.raises(ValueError):
        gradcheck(MySigmoid.apply, (minitorch.tensor(np.zeros(2)),))
