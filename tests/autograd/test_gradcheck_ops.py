"""Float64 ``gradcheck`` for every differentiable op, on contiguous, broadcast and
non-contiguous inputs, on every device (``cpu``, and ``cuda`` when available).

Every check compares the analytic Jacobian (backward) with central finite
differences, so a wrong backward formula, a gradient not summed back to a broadcast
input's shape, or one written into the wrong layout fails here.

Input layouts (``LAYOUTS``):

* ``contiguous``      – ``minitorch.tensor(arr, requires_grad=True, device=device)``
* ``transposed_leaf`` – a leaf whose memory is the reversed-dims array, permuted back
  (``.T``-style strides), then ``.requires_grad_()``
* ``strided_leaf``    – a leaf that is ``big[1::2, 1::2]`` of a bigger tensor (strides
  of 2 and a storage offset), then ``.requires_grad_()``
* ``view_of_leaf``    – a contiguous leaf ``base`` (reversed dims) that requires grad;
  the op sees ``base.permute(reversed)`` (a non-leaf, non-contiguous view)
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from conftest import CUDA_SKIP_REASON, to_numpy
from minitorch.testing import gradcheck

LAYOUTS = ["contiguous", "transposed_leaf", "strided_leaf", "view_of_leaf"]


def _identity(t):
    return t


def prepare(arr: np.ndarray, layout: str, device: str):
    """(leaf, get): ``leaf`` (on ``device``) is what gradcheck perturbs, ``get(leaf)`` is
    what the op sees.

    ``get(leaf)`` always holds exactly ``arr``'s values.
    """
    arr = np.asarray(arr, dtype=np.float64)
    rev = tuple(range(arr.ndim))[::-1]
    if layout == "contiguous":
        leaf = minitorch.tensor(arr, requires_grad=True, device=device)
        assert leaf.is_contiguous()
        get = _identity
    elif layout == "transposed_leaf":
        leaf = minitorch.tensor(np.ascontiguousarray(arr.transpose(rev)), device=device).permute(*rev)
        leaf.requires_grad_()
        get = _identity
    elif layout == "strided_leaf":
        big = np.full(tuple(2 * s + 1 for s in arr.shape), 1e6)
        idx = tuple(slice(1, None, 2) for _ in arr.shape)
        big[idx] = arr
        leaf = minitorch.tensor(big, device=device)[idx].requires_grad_()
        get = _identity
    elif layout == "view_of_leaf":
        leaf = minitorch.tensor(np.ascontiguousarray(arr.transpose(rev)), requires_grad=True, device=device)

        def get(t, rev=rev):
            return t.permute(*rev)
    else:
        raise ValueError(layout)
    assert leaf.is_leaf and leaf.requires_grad and leaf.dtype == minitorch.float64
    assert leaf.device == device
    seen = get(leaf)
    non1 = sum(s != 1 for s in arr.shape)
    if layout != "contiguous" and (non1 >= 2 or (layout == "strided_leaf" and arr.size >= 2)):
        assert not seen.is_contiguous(), (layout, arr.shape, seen.stride())
    np.testing.assert_array_equal(to_numpy(seen), arr)
    return leaf, get


def check(fn, arrays, layouts=None, *, device: str):
    """gradcheck of ``fn(*tensors)`` where tensor i holds ``arrays[i]`` in ``layouts[i]``
    on ``device``."""
    layouts = layouts or ["contiguous"] * len(arrays)
    prepared = [prepare(a, lay, device) for a, lay in zip(arrays, layouts)]
    leaves = tuple(p[0] for p in prepared)
    getters = [p[1] for p in prepared]

    def wrapped(*ts):
        out = fn(*(g(t) for g, t in zip(getters, ts)))
        assert out.device == device, f"the output is on {out.device}, not on {device}"
        return out

    assert gradcheck(wrapped, leaves)


def grad_of(t: minitorch.Tensor) -> np.ndarray:
    """``t.grad`` as a NumPy array, after checking it is on ``t``'s device."""
    assert t.grad is not None
    assert t.grad.device == t.device, f"the gradient is on {t.grad.device}, its tensor on {t.device}"
    return to_numpy(t.grad)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def away_from_zero(shape, seed=0, low=0.5, high=2.0):
    """Values with |x| in [low, high] and random signs (for abs, relu, division)."""
    r = rng(seed)
    return r.uniform(low, high, size=shape) * r.choice([-1.0, 1.0], size=shape)


# ---------------------------------------------------------------- unary ops ----

UNARY = {
    "neg": (lambda x: -x, "any"),
    "neg_fn": (lambda x: minitorch.neg(x), "any"),
    "exp": (lambda x: x.exp(), "any"),
    "log": (lambda x: x.log(), "positive"),
    "sqrt": (lambda x: x.sqrt(), "positive"),
    "abs": (lambda x: x.abs(), "nonzero"),
    "abs_builtin": (lambda x: abs(x), "nonzero"),
    "sigmoid": (lambda x: x.sigmoid(), "any"),
    "relu": (lambda x: x.relu(), "nonzero"),
    "tanh": (lambda x: x.tanh(), "any"),
    "fn_exp": (lambda x: minitorch.exp(x), "any"),
    "fn_log": (lambda x: minitorch.log(x), "positive"),
    "fn_sqrt": (lambda x: minitorch.sqrt(x), "positive"),
    "fn_sigmoid": (lambda x: minitorch.sigmoid(x), "any"),
    "fn_tanh": (lambda x: minitorch.tanh(x), "any"),
    "fn_relu": (lambda x: minitorch.relu(x), "nonzero"),
    "fn_abs": (lambda x: minitorch.abs(x), "nonzero"),
}


def unary_input(domain: str, shape, seed=0) -> np.ndarray:
    if domain == "positive":
        return rng(seed).uniform(0.5, 3.0, size=shape)
    if domain == "nonzero":
        return away_from_zero(shape, seed)
    return rng(seed).uniform(-2.0, 2.0, size=shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(device, name, layout):
    fn, domain = UNARY[name]
    check(fn, [unary_input(domain, (3, 4))], [layout], device=device)


@pytest.mark.parametrize("shape", [(), (5,), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("name", ["neg", "exp", "log", "sqrt", "abs", "sigmoid", "relu", "tanh"])
def test_unary_other_ranks(device, name, shape):
    fn, domain = UNARY[name]
    check(fn, [unary_input(domain, shape, seed=1)], device=device)


def test_relu_gradient_is_zero_on_negative_side(device):
    x = minitorch.tensor(np.array([-2.0, -0.5, 0.5, 2.0]), requires_grad=True, device=device)
    x.relu().sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 0.0, 1.0, 1.0])


def test_abs_gradient_is_sign(device):
    x = minitorch.tensor(np.array([-2.0, -0.5, 0.5, 2.0]), requires_grad=True, device=device)
    x.abs().sum().backward()
    np.testing.assert_array_equal(grad_of(x), [-1.0, -1.0, 1.0, 1.0])


# --------------------------------------------------------------- binary ops ----

def _maxmin_pair(shape_a, shape_b, seed=0):
    """a and b whose broadcast elements are never equal (at least 0.08 apart) and
    whose order varies: a on a grid of 0.2, b on the same grid shifted by 0.1."""
    r = rng(seed)
    a = r.integers(0, 10, size=shape_a) * 0.2 + r.uniform(-0.01, 0.01, size=shape_a)
    b = r.integers(0, 10, size=shape_b) * 0.2 + 0.1 + r.uniform(-0.01, 0.01, size=shape_b)
    diff = np.abs(a - b)  # broadcasts
    assert diff.min() > 0.05
    return a, b


def binary_inputs(name: str, shape_a, shape_b, seed=0):
    r = rng(seed)
    if name in ("maximum", "minimum", "max_other", "min_other"):
        return _maxmin_pair(shape_a, shape_b, seed)
    a = r.uniform(-2.0, 2.0, size=shape_a)
    b = r.uniform(-2.0, 2.0, size=shape_b)
    if name == "div":
        b = away_from_zero(shape_b, seed + 1)
    if name == "pow":
        a = r.uniform(0.5, 2.0, size=shape_a)  # positive base: a ** b and its log are smooth
    return a, b


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
    "maximum": lambda a, b: minitorch.maximum(a, b),
    "minimum": lambda a, b: minitorch.minimum(a, b),
    "max_other": lambda a, b: a.max(b),
    "min_other": lambda a, b: a.min(b),
    "add_method": lambda a, b: a.add(b),
    "sub_fn": lambda a, b: minitorch.sub(a, b),
    "mul_fn": lambda a, b: minitorch.mul(a, b),
    "div_fn": lambda a, b: minitorch.div(a, b),
    "pow_fn": lambda a, b: minitorch.pow(a, b),
}
_BINARY_DOMAIN = {"add_method": "add", "sub_fn": "sub", "mul_fn": "mul", "div_fn": "div", "pow_fn": "pow"}

BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 1), (4,)),
    ((4,), (3, 4)),
    ((3, 4), ()),
    ((), (3, 4)),
    ((2, 1, 3), (4, 1)),
]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasting(device, name, shapes):
    a, b = binary_inputs(_BINARY_DOMAIN.get(name, name), *shapes)
    check(BINARY[name], [a, b], device=device)


@pytest.mark.parametrize("layouts", [("transposed_leaf", "contiguous"), ("contiguous", "strided_leaf"),
                                     ("view_of_leaf", "transposed_leaf"), ("strided_leaf", "view_of_leaf")],
                         ids=lambda l: "-".join(l))
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "maximum", "minimum"])
def test_binary_noncontiguous(device, name, layouts):
    a, b = binary_inputs(name, (3, 4), (3, 4), seed=2)
    check(BINARY[name], [a, b], list(layouts), device=device)


@pytest.mark.parametrize("name", ["add", "mul", "div", "pow", "maximum"])
def test_binary_noncontiguous_broadcast(device, name):
    # a strided (3, 4) against a (3, 1) column; a transposed (2, 3) against a (4, 2, 1) view
    a, b = binary_inputs(name, (3, 4), (3, 1), seed=3)
    check(BINARY[name], [a, b], ["strided_leaf", "contiguous"], device=device)
    a, b = binary_inputs(name, (2, 3), (4, 2, 1), seed=4)
    check(BINARY[name], [a, b], ["transposed_leaf", "view_of_leaf"], device=device)


def _sum_to(g: np.ndarray, shape) -> np.ndarray:
    """NumPy reference for summing a broadcast gradient back to ``shape``."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(d for d, s in enumerate(shape) if s == 1 and g.shape[d] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


pair_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0,
                                                max_side=3).map(lambda b: b.input_shapes)


@settings(max_examples=40, deadline=None)
@given(shapes=pair_shapes, seed=st.integers(0, 2**32 - 1))
def test_broadcast_gradients_vs_numpy(device, shapes, seed):
    """Random broadcastable shapes (size-0 and size-1 dims included): the gradients of
    sum(a * b + a / c) are NumPy's sums over the broadcast dims."""
    sa, sb = shapes
    r = rng(seed)
    a_np, b_np = r.uniform(-2, 2, size=sa), r.uniform(-2, 2, size=sb)
    c_np = away_from_zero(sb, seed)
    a, b, c = (minitorch.tensor(v, requires_grad=True, device=device) for v in (a_np, b_np, c_np))
    out = a * b + a / c
    out_shape = np.broadcast_shapes(sa, sb)
    assert tuple(out.shape) == out_shape
    out.sum().backward()
    ones = np.ones(out_shape)
    for t, want in ((a, _sum_to(ones * b_np + ones / c_np, sa)), (b, _sum_to(ones * a_np, sb)),
                    (c, _sum_to(-ones * a_np / c_np ** 2, sb))):
        assert t.grad is not None and tuple(t.grad.shape) == t.shape
        np.testing.assert_allclose(grad_of(t), want, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1,
                                                max_side=3).map(lambda b: b.input_shapes),
       seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["add", "sub", "mul", "div", "pow"]))
def test_binary_gradcheck_random_broadcasts(device, shapes, seed, name):
    a, b = binary_inputs(name, *shapes, seed=seed)
    if name == "div":
        b = away_from_zero(shapes[1], seed)
    check(BINARY[name], [a, b], device=device)


def test_same_tensor_on_both_sides(device):
    x = away_from_zero((3, 4), seed=5)
    check(lambda t: t * t, [x], device=device)
    check(lambda t: t / t.exp(), [x], device=device)
    check(lambda t: t - t.T.T * 0.5, [x], device=device)


SCALAR_FORMS = {
    "x+2": (lambda x: x + 2, "any"),
    "2+x": (lambda x: 2 + x, "any"),
    "x-2.5": (lambda x: x - 2.5, "any"),
    "2-x": (lambda x: 2 - x, "any"),
    "x*3": (lambda x: x * 3, "any"),
    "3*x": (lambda x: 3 * x, "any"),
    "x/3": (lambda x: x / 3, "any"),
    "3/x": (lambda x: 3 / x, "nonzero"),
    "x**2": (lambda x: x ** 2, "any"),
    "x**3": (lambda x: x ** 3, "any"),
    "x**0.5": (lambda x: x ** 0.5, "positive"),
    "x**-1.5": (lambda x: x ** -1.5, "positive"),
    "2**x": (lambda x: 2 ** x, "any"),
    "2.5**x": (lambda x: 2.5 ** x, "any"),
    "x.pow(2)": (lambda x: x.pow(2), "any"),
    "x.maximum(0.3)": (lambda x: x.maximum(0.3), "nonzero"),
    "x.minimum(-0.3)": (lambda x: x.minimum(-0.3), "nonzero"),
    "x+tensor0d": (lambda x: x + minitorch.tensor(1.5, dtype=minitorch.float64, device=x.device), "any"),
    "tensor0d/x": (lambda x: minitorch.tensor(2.0, dtype=minitorch.float64, device=x.device) / x, "nonzero"),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed_leaf", "view_of_leaf"])
@pytest.mark.parametrize("name", list(SCALAR_FORMS))
def test_scalar_forms(device, name, layout):
    fn, domain = SCALAR_FORMS[name]
    check(fn, [unary_input(domain, (3, 4), seed=6)], [layout], device=device)


def test_scalar_form_values(device):
    # gradcheck compares backward with the forward; pin a few exact gradients too.
    x = minitorch.tensor(np.array([1.0, 2.0, 4.0]), requires_grad=True, device=device)
    (2 - x).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [-1.0, -1.0, -1.0])
    x.grad = None
    (3 / x).sum().backward()
    np.testing.assert_allclose(grad_of(x), [-3.0, -0.75, -0.1875])
    x.grad = None
    (2 ** x).sum().backward()
    np.testing.assert_allclose(grad_of(x), np.log(2) * 2.0 ** np.array([1.0, 2.0, 4.0]))
    x.grad = None
    (x ** 2).sum().backward()
    np.testing.assert_allclose(grad_of(x), [2.0, 4.0, 8.0])


@pytest.mark.parametrize("layout", ["contiguous", "strided_leaf", "view_of_leaf"])
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (-1.0, None), (None, 0.5)], ids=str)
def test_clamp(device, bounds, layout):
    lo, hi = bounds
    # values at least 0.1 away from both bounds, some inside and some outside
    x = rng(7).choice([-1.9, -1.4, -0.8, -0.3, 0.2, 0.7, 0.9, 1.3, 1.8], size=(3, 4))
    x = x + rng(8).uniform(-0.02, 0.02, size=(3, 4))
    check(lambda t: t.clamp(lo, hi), [x], [layout], device=device)
    check(lambda t: minitorch.clamp(t, min=lo, max=hi), [x], [layout], device=device)


def test_pow_with_zero_exponent_has_zero_gradient(device):
    # d/dx x**0 is 0 everywhere, also at x == 0 (PyTorch masks 0 * 0**-1 = 0 * inf = nan)
    x = minitorch.tensor(np.array([0.0, 1.0, -2.0]), requires_grad=True, device=device)
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 0.0, 0.0])
    x.grad = None
    (x ** minitorch.zeros(3, dtype=minitorch.float64, device=device)).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 0.0, 0.0])


def test_clamp_gradient_values(device):
    x = minitorch.tensor(np.array([-2.0, -0.5, 0.5, 2.0]), requires_grad=True, device=device)
    x.clamp(-1.0, 1.0).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 1.0, 1.0, 0.0])


def test_maximum_ties_split_gradient(device):
    a = minitorch.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True, device=device)
    b = minitorch.tensor(np.array([1.0, 1.0, 4.0]), requires_grad=True, device=device)
    minitorch.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(grad_of(a), [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(grad_of(b), [0.5, 0.0, 1.0])


# -------------------------------------------------------------------- where ----

@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((3, 4), (3, 4), (4,)), ((3, 1), (4,), (3, 4)),
                                    ((3, 4), (), (3, 1))], ids=str)
def test_where(device, shapes):
    cshape, ashape, bshape = shapes
    cond = minitorch.tensor(rng(9).integers(0, 2, size=cshape).astype(bool), device=device)
    a = rng(10).uniform(-2, 2, size=ashape)
    b = rng(11).uniform(-2, 2, size=bshape)
    check(lambda x, y: minitorch.where(cond, x, y), [a, b], device=device)


@pytest.mark.parametrize("layouts", [("transposed_leaf", "strided_leaf"), ("view_of_leaf", "contiguous")],
                         ids=lambda l: "-".join(l))
def test_where_noncontiguous(device, layouts):
    cond = minitorch.tensor(rng(12).integers(0, 2, size=(3, 4)).astype(bool), device=device).T.T
    a = rng(13).uniform(-2, 2, size=(3, 4))
    b = rng(14).uniform(-2, 2, size=(3, 4))
    check(lambda x, y: minitorch.where(cond, x, y), [a, b], list(layouts), device=device)


def test_where_with_one_side_constant(device):
    cond = minitorch.tensor(np.array([True, False, True]), device=device)
    x = minitorch.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True, device=device)
    other = minitorch.tensor(np.array([9.0, 9.0, 9.0]), device=device)
    minitorch.where(cond, x, other).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [1.0, 0.0, 1.0])
    x.grad = None
    minitorch.where(cond, other, x).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 1.0, 0.0])


# --------------------------------------------------------------- reductions ----

REDUCTIONS = {
    "sum()": lambda x: x.sum(),
    "sum(0)": lambda x: x.sum(0),
    "sum(-1)": lambda x: x.sum(-1),
    "sum((0,2))": lambda x: x.sum((0, 2)),
    "sum((0,1,2))": lambda x: x.sum((0, 1, 2)),
    "sum(1,keepdim)": lambda x: x.sum(1, keepdim=True),
    "sum((0,2),keepdim)": lambda x: x.sum((0, 2), keepdim=True),
    "minitorch.sum(x,1)": lambda x: minitorch.sum(x, 1),
    "mean()": lambda x: x.mean(),
    "mean(1)": lambda x: x.mean(1),
    "mean((0,2))": lambda x: x.mean((0, 2)),
    "mean(-1,keepdim)": lambda x: x.mean(-1, keepdim=True),
    "minitorch.mean(x,0)": lambda x: minitorch.mean(x, 0),
    "max()": lambda x: x.max(),
    "min()": lambda x: x.min(),
    "minitorch.max(x)": lambda x: minitorch.max(x),
    "max(0).values": lambda x: x.max(0).values,
    "max(1).values": lambda x: x.max(1).values,
    "max(-1,keepdim)[0]": lambda x: x.max(-1, keepdim=True)[0],
    "min(0).values": lambda x: x.min(0).values,
    "min(2).values": lambda x: x.min(2).values,
    "min(1,keepdim).values": lambda x: x.min(1, keepdim=True).values,
    "minitorch.min(x,1).values": lambda x: minitorch.min(x, 1).values,
}


def distinct_values(shape, seed):
    """A permutation of well-separated values, so max/min have no ties."""
    n = int(np.prod(shape))
    return (rng(seed).permutation(n) * 0.3 - 1.0 + rng(seed + 1).uniform(-0.01, 0.01, size=n)).reshape(shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions(device, name, layout):
    check(REDUCTIONS[name], [distinct_values((2, 3, 2), seed=15)], [layout], device=device)


@pytest.mark.parametrize("name", ["sum()", "sum(0)", "mean()", "max()", "min()", "max(0).values"])
def test_reductions_small_ranks(device, name):
    check(REDUCTIONS[name], [distinct_values((4,), seed=16)], device=device)
    if name in ("sum()", "mean()", "max()", "min()", "max(0).values"):
        check(REDUCTIONS[name], [np.array(1.5)], device=device)


def test_max_all_ties_share_gradient(device):
    x = minitorch.tensor(np.array([[1.0, 3.0], [3.0, 2.0]]), requires_grad=True, device=device)
    x.max().backward()
    np.testing.assert_array_equal(grad_of(x), [[0.0, 0.5], [0.5, 0.0]])


def test_max_dim_gradient_goes_to_argmax(device):
    x = minitorch.tensor(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]), requires_grad=True, device=device)
    values, indices = x.max(1)
    np.testing.assert_array_equal(to_numpy(indices), [1, 0])
    (values * minitorch.tensor(np.array([10.0, 100.0]), device=device)).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [[0.0, 10.0, 0.0], [100.0, 0.0, 0.0]])


def test_mean_gradient_values(device):
    x = minitorch.tensor(np.ones((2, 5)), requires_grad=True, device=device)
    x.mean(1).sum().backward()
    np.testing.assert_allclose(grad_of(x), np.full((2, 5), 0.2))


# ------------------------------------------------------------------- matmul ----

MATMUL_SHAPES = [
    ((4,), (4,)),            # 1-D @ 1-D -> 0-dim
    ((3, 4), (4,)),          # 2-D @ 1-D
    ((4,), (4, 2)),          # 1-D @ 2-D
    ((3, 4), (4, 2)),        # 2-D @ 2-D
    ((2, 3, 4), (2, 4, 2)),  # batched
    ((2, 1, 3, 4), (5, 4, 2)),  # broadcast batch dims
    ((3, 4), (2, 4, 2)),     # 2-D broadcast against a batch
    ((2, 3, 4), (4, 2)),
    ((2, 3, 4), (4,)),       # batched @ 1-D
    ((4,), (2, 4, 3)),       # 1-D @ batched
    ((1, 3), (3, 1)),        # size-1 dims
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(device, shapes):
    a = rng(17).uniform(-1, 1, size=shapes[0])
    b = rng(18).uniform(-1, 1, size=shapes[1])
    check(lambda x, y: x @ y, [a, b], device=device)


@pytest.mark.parametrize("form", ["operator", "method", "function"])
def test_matmul_spellings(device, form):
    fn = {"operator": lambda x, y: x @ y, "method": lambda x, y: x.matmul(y),
          "function": lambda x, y: minitorch.matmul(x, y)}[form]
    check(fn, [rng(19).uniform(-1, 1, size=(3, 4)), rng(20).uniform(-1, 1, size=(4, 2))], device=device)


@pytest.mark.parametrize("layouts", [("transposed_leaf", "contiguous"), ("contiguous", "transposed_leaf"),
                                     ("strided_leaf", "view_of_leaf"), ("view_of_leaf", "strided_leaf")],
                         ids=lambda l: "-".join(l))
@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((2, 3, 4), (4, 2)), ((4,), (4, 3)), ((2, 1, 3, 2), (2, 2, 2))],
                         ids=str)
def test_matmul_noncontiguous(device, shapes, layouts):
    a = rng(21).uniform(-1, 1, size=shapes[0])
    b = rng(22).uniform(-1, 1, size=shapes[1])
    check(lambda x, y: x @ y, [a, b], list(layouts), device=device)


def test_matmul_with_itself_transposed(device):
    check(lambda x: x @ x.T, [rng(23).uniform(-1, 1, size=(3, 4))], device=device)
    check(lambda x: x.T @ x, [rng(24).uniform(-1, 1, size=(3, 4))], device=device)


def test_matmul_with_constant_operand(device):
    w = minitorch.tensor(rng(25).uniform(-1, 1, size=(4, 2)), device=device)
    check(lambda x: x @ w, [rng(26).uniform(-1, 1, size=(3, 4))], device=device)
    check(lambda x: w.T @ x, [rng(27).uniform(-1, 1, size=(4, 3))], device=device)


# -------------------------------------------------------- views and indexing ----

# name -> (fn, input shape, works on a non-contiguous input)
VIEWS = {
    "view(12)": (lambda x: x.view(12), (3, 4), False),
    "view(4,3)": (lambda x: x.view(4, 3), (3, 4), False),
    "view(-1,2)": (lambda x: x.view(-1, 2), (3, 4), False),
    "view_as": (lambda x: x.view_as(minitorch.zeros(2, 6, device=x.device)), (3, 4), False),
    "reshape(2,6)": (lambda x: x.reshape(2, 6), (3, 4), True),
    "reshape(-1)": (lambda x: x.reshape(-1), (3, 4), True),
    "reshape((4,3))": (lambda x: x.reshape((4, 3)), (3, 4), True),
    "permute(2,0,1)": (lambda x: x.permute(2, 0, 1), (2, 3, 2), True),
    "permute(1,0)": (lambda x: x.permute(1, 0), (3, 4), True),
    "transpose(0,1)": (lambda x: x.transpose(0, 1), (3, 4), True),
    "transpose(-1,-3)": (lambda x: x.transpose(-1, -3), (2, 3, 2), True),
    "t()": (lambda x: x.t(), (3, 4), True),
    "T": (lambda x: x.T, (3, 4), True),
    "T_3d": (lambda x: x.T, (2, 3, 2), True),
    "mT": (lambda x: x.mT, (2, 3, 2), True),
    "expand(3,4)": (lambda x: x.expand(3, 4), (3, 1), True),
    "expand(2,3,4)": (lambda x: x.expand(2, 3, 4), (1, 4), True),
    "expand(-1,4)": (lambda x: x.expand(-1, 4), (3, 1), True),
    "expand_as": (lambda x: x.expand_as(minitorch.zeros(2, 3, 4, device=x.device)), (3, 1), True),
    "unsqueeze(0)": (lambda x: x.unsqueeze(0), (3, 4), True),
    "unsqueeze(-1)": (lambda x: x.unsqueeze(-1), (3, 4), True),
    "unsqueeze(1)": (lambda x: x.unsqueeze(1), (3, 4), True),
    "squeeze()": (lambda x: x.squeeze(), (3, 1, 4), True),
    "squeeze(1)": (lambda x: x.squeeze(1), (3, 1, 4), True),
    "squeeze(0)-noop": (lambda x: x.squeeze(0), (3, 1, 4), True),
    "flatten()": (lambda x: x.flatten(), (2, 3, 2), True),
    "flatten(1)": (lambda x: x.flatten(1), (2, 3, 2), True),
    "flatten(0,1)": (lambda x: x.flatten(0, 1), (2, 3, 2), True),
    "x[1]": (lambda x: x[1], (3, 4), True),
    "x[-1]": (lambda x: x[-1], (3, 4), True),
    "x[1,2]": (lambda x: x[1, 2], (3, 4), True),
    "x[:,1]": (lambda x: x[:, 1], (3, 4), True),
    "x[:,1:3]": (lambda x: x[:, 1:3], (3, 4), True),
    "x[::2]": (lambda x: x[::2], (3, 4), True),
    "x[1::2,::3]": (lambda x: x[1::2, ::3], (3, 4), True),
    "x[-2:]": (lambda x: x[-2:], (3, 4), True),
    "x[...,None]": (lambda x: x[..., None], (3, 4), True),
    "x[None,:,2]": (lambda x: x[None, :, 2], (3, 4), True),
    "x[...,1]": (lambda x: x[..., 1], (2, 3, 2), True),
    "x[:]": (lambda x: x[:], (3, 4), True),
    "x[0][1:]": (lambda x: x[0][1:], (3, 4), True),
    "contiguous": (lambda x: x.contiguous(), (3, 4), True),
    "clone": (lambda x: x.clone(), (3, 4), True),
    "view_then_T": (lambda x: x.view(4, 3).T, (3, 4), False),
    "T_reshape": (lambda x: x.T.reshape(12), (3, 4), True),
    "T_contiguous_view": (lambda x: x.T.contiguous().view(2, 6), (3, 4), True),
    "slice_of_slice": (lambda x: x[:, 1:][::2, ::2], (3, 4), True),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views(device, name):
    fn, shape, _ = VIEWS[name]
    check(fn, [rng(28).uniform(-2, 2, size=shape)], device=device)


@pytest.mark.parametrize("layout", ["transposed_leaf", "strided_leaf", "view_of_leaf"])
@pytest.mark.parametrize("name", [n for n, v in VIEWS.items() if v[2]])
def test_views_noncontiguous(device, name, layout):
    fn, shape, _ = VIEWS[name]
    check(fn, [rng(29).uniform(-2, 2, size=shape)], [layout], device=device)


@pytest.mark.parametrize("name", ["view(12)", "view(4,3)"])
def test_view_of_noncontiguous_raises(device, name):
    # not a gradient test, but makes sure the cases skipped above are skipped for a reason
    fn, shape, _ = VIEWS[name]
    leaf, get = prepare(rng(30).uniform(-1, 1, size=shape), "transposed_leaf", device)
    with pytest.raises(RuntimeError):
        fn(get(leaf))


def test_views_then_math(device):
    # a view's gradient flows on into the ops after it, with repeated use of the base
    x = rng(31).uniform(0.5, 2, size=(3, 4))
    check(lambda t: (t[:, 1:3] * t[:, :2].exp()).sum(0) + t.T[0, 1:], [x], device=device)
    check(lambda t: t.unsqueeze(0).expand(2, 3, 4).sqrt() * t.view(3, 4, 1).transpose(0, 2)[0].T, [x], device=device)


def test_select_gradient_values(device):
    x = minitorch.tensor(np.zeros((3, 4)), requires_grad=True, device=device)
    (x[1] * minitorch.tensor(np.arange(4.0), device=device)).sum().backward()
    want = np.zeros((3, 4))
    want[1] = np.arange(4.0)
    np.testing.assert_array_equal(grad_of(x), want)


def test_strided_slice_gradient_values(device):
    x = minitorch.tensor(np.zeros((5, 3)), requires_grad=True, device=device)
    x[::2, 1:].sum().backward()
    want = np.zeros((5, 3))
    want[::2, 1:] = 1.0
    np.testing.assert_array_equal(grad_of(x), want)


# --------------------------------------------------------------- composites ----

def test_small_mlp(device):
    x = rng(32).uniform(-1, 1, size=(3, 4))
    w1 = rng(33).uniform(-1, 1, size=(4, 3))
    b1 = rng(34).uniform(-1, 1, size=(3,))
    w2 = rng(35).uniform(-1, 1, size=(3, 2))
    check(lambda x, w1, b1, w2: ((x @ w1 + b1).tanh() @ w2).sigmoid().mean(0), [x, w1, b1, w2],
          ["contiguous", "transposed_leaf", "contiguous", "strided_leaf"], device=device)


def test_softmax_like(device):
    x = rng(36).uniform(-1, 1, size=(3, 4))

    def softmax(t):
        e = (t - t.max(1, keepdim=True).values).exp()
        return e / e.sum(1, keepdim=True)

    check(softmax, [x], device=device)
    check(softmax, [x], ["view_of_leaf"], device=device)


def test_clamp_gradient_at_the_bounds_follows_the_subgradient_rule(device):
    # The rule (PyTorch's derivatives.yaml): the derivative is undefined at a bound, and
    # the subgradient 1 is used there, so the gradient is 1 where min <= x <= max, else 0
    # (0 for NaN). Stated here rather than compared with the installed PyTorch, whose
    # versions have differed at the bounds.
    vals = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, np.nan])
    for lo, hi in [(-1.0, 1.0), (0.0, None), (None, 1.0), (0.5, 0.5)]:
        x = minitorch.tensor(vals, requires_grad=True, device=device)
        x.clamp(lo, hi).sum().backward()
        with np.errstate(invalid="ignore"):
            inside = (vals >= (-np.inf if lo is None else lo)) & (vals <= (np.inf if hi is None else hi))
        np.testing.assert_array_equal(x.grad.cpu().numpy(), inside.astype(np.float64), err_msg=f"clamp({lo}, {hi})")


def test_clamp_with_an_empty_range_passes_no_gradient(device):
    """min > max: every output is max and no x lies in [min, max], so no x gets a gradient
    (also one equal to max, which y == x alone would let through)."""
    x = minitorch.tensor(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]), requires_grad=True, device=device)
    y = x.clamp(1.0, 0.0)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), np.zeros(5))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), np.zeros(5))


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_clamp_saves_no_mask_in_forward():
    """clamp with grad launches only its own kernel forward (one: both bounds in a ternary
    kernel; the mask of the backward is computed there, from the saved input and output),
    and one backward (g where x == y)."""
    from minitorch.profiler import ProfilerActivity, profile
    x = minitorch.randn(8, 9, device="cuda", requires_grad=True)
    for bounds, forward in (((-1.0, 1.0), 1), ((0.0, None), 1)):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            y = x.clamp(*bounds)
        assert sum(len(e.kernels) for e in prof.events()) == forward
        g = minitorch.ones_like(y)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            y.backward(g)
        assert [(e.name, len(e.kernels)) for e in prof.events() if e.kernels] == [("ClampBackward1", 1)]
        x.grad = None


@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, -1, -2.5])
def test_pow_with_a_number_exponent_reads_it_on_the_host(device, p):
    """x ** p with p a number: the gradient p x^(p-1) computed with p known on the host (x ** 2
    is g * x * 2), equal to NumPy's at 0 too (x ** 0: 0; x ** 1: 1), and gradcheck."""
    vals = np.array([0.0, 0.5, 1.5, 3.0]) if p != int(p) or p < 0 else np.array([0.0, -1.5, 0.5, 3.0])
    if p < 0:
        vals = vals[1:]
    x = minitorch.tensor(vals, requires_grad=True, device=device)
    (x ** p).sum().backward()
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(p == 0, 0.0, p * vals ** (p - 1) if p != 1 else np.ones_like(vals))
    np.testing.assert_allclose(grad_of(x), want, rtol=1e-12)
    safe = minitorch.tensor(vals[vals != 0] if vals[0] == 0 else vals, requires_grad=True, device=device)
    assert gradcheck(lambda t: t ** p, (safe,))


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_number_pow_mean_and_whole_slices_launch_little():
    """x ** 2's backward is two kernels (was six: a where and b - 1 on the device), a full
    mean's backward one (was four: the count filled and copied), and x[:, :50] one slice
    node (the ':' of the whole dim makes none, as in PyTorch)."""
    from minitorch.profiler import ProfilerActivity, profile
    x = minitorch.randn(32, 100, device="cuda", requires_grad=True)

    def backward_kernels(y):
        g = minitorch.ones_like(y)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            y.backward(g)
        return {e.name: len(e.kernels) for e in prof.events() if e.kernels}

    assert backward_kernels(x ** 2)["PowBackward0"] == 2
    assert backward_kernels(x.mean())["MeanBackward0"] == 1
    y = x[:, :50]
    assert y.grad_fn.name() == "SliceBackward0" and y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    assert x[:].grad_fn is not None and x[:, :].shape == x.shape
