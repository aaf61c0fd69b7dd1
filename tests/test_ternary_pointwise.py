"""lerp, addcmul, addcdiv and their in-place forms: one C++ kernel each (ops/ternary.cpp,
the `ternary` kernel). Values against NumPy (float64 reference) with broadcasting, strided
views, size-0/1 dims and every dtype each op takes; Python-number and tensor weights;
in-place writes and aliasing; float64 gradcheck; PyTorch's errors; and the launch count.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from conftest import CUDA_SKIP_REASON, DEVICES, noncontiguous, random_array, seeds, to_numpy
from minitorch.profiler import ProfilerActivity, profile
from minitorch.testing import gradcheck

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]
TOL = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}


def np_lerp(a, b, w):
    a, b, w = (np.asarray(x, dtype=np.float64) for x in (a, b, w))
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def np_addcmul(a, b, c, value=1):
    return a.astype(np.float64) + value * b.astype(np.float64) * c.astype(np.float64)


def np_addcdiv(a, b, c, value=1):
    return a.astype(np.float64) + value * b.astype(np.float64) / c.astype(np.float64)


def make(arr, dtype, device, layout="contiguous"):
    dense = layout == "contiguous" or np.ndim(arr) == 0  # a 0-dim tensor has no other layout
    t = minitorch.tensor(arr, device=device) if dense else noncontiguous(arr, device, layout)
    return t.to(getattr(minitorch, dtype))


def check(got, want, dtype):
    tol = TOL.get(dtype, 0)
    np.testing.assert_allclose(to_numpy(got.float() if dtype == "bfloat16" else got).astype(np.float64), want,
                               rtol=tol, atol=tol * 4)


def rounded(arr, dtype):
    """arr's values as the dtype holds them (the inputs the kernel really sees)."""
    return to_numpy(minitorch.tensor(arr).to(getattr(minitorch, dtype)).float()).astype(np.float64)


three_shapes = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=4, min_side=0, max_side=4)


@pytest.mark.parametrize("layout", ["contiguous", "step", "transpose"])
@given(shapes=three_shapes, seed=seeds, value=st.sampled_from([1, -0.5, 2.0, 0]))
def test_values_broadcast_and_layouts(device, layout, shapes, seed, value):
    sa, sb, sc = shapes.input_shapes
    a, b, c = (random_array(seed + k, s, np.float64, -2, 2) for k, s in enumerate((sa, sb, sc)))
    c_div = np.where(np.abs(c) < 0.1, 0.5, c)
    w = random_array(seed + 7, sc, np.float64, -0.5, 1.5)
    ta, tb = make(a, "float64", device, layout), make(b, "float64", device, layout)
    check(minitorch.lerp(ta, tb, make(w, "float64", device, layout)), np_lerp(a, b, w), "float64")
    check(ta.lerp(tb, 0.3), np_lerp(a, b, 0.3), "float64")
    check(ta.addcmul(tb, make(c, "float64", device, layout), value=value), np_addcmul(a, b, c, value), "float64")
    check(minitorch.addcdiv(ta, tb, make(c_div, "float64", device, layout), value=value),
          np_addcdiv(a, b, c_div, value), "float64")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["lerp", "lerp_number", "addcmul", "addcdiv"])
def test_every_floating_dtype(device, dtype, op):
    shape = (3, 5)
    a, b, c = (random_array(k, shape, np.float32, -2, 2) for k in range(3))
    c = np.where(np.abs(c) < 0.2, 0.7, c)
    w = random_array(9, (5,), np.float32, 0, 1)
    ra, rb, rc, rw = (rounded(x, dtype) for x in (a, b, c, w))
    ta, tb, tc, tw = (make(x, dtype, device) for x in (a, b, c, w))
    if op == "lerp":
        got, want = ta.lerp(tb, tw), np_lerp(ra, rb, rw)
    elif op == "lerp_number":
        got, want = ta.lerp(tb, 0.3), np_lerp(ra, rb, 0.3)  # 0.3 kept in float32 beside 16-bit tensors
    elif op == "addcmul":
        got, want = ta.addcmul(tb, tc, value=0.3), np_addcmul(ra, rb, rc, 0.3)
    else:
        got, want = ta.addcdiv(tb, tc, value=-2), np_addcdiv(ra, rb, rc, -2)
    assert got.dtype == getattr(minitorch, dtype) and got.device.type == device
    check(got, want, dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_addcmul_integers_exact(device, dtype):
    a, b, c = (random_array(k, (4, 3), dtype, 0, 6) for k in range(3))
    got = make(a, dtype, device).addcmul(make(b, dtype, device), make(c, dtype, device), value=2)
    assert got.dtype == getattr(minitorch, dtype)
    want = (a.astype(np.int64) + 2 * b.astype(np.int64) * c.astype(np.int64)).astype(dtype)  # wraps as PyTorch
    np.testing.assert_array_equal(to_numpy(got), want)
    # a float value truncates toward zero for integer tensors, as PyTorch's
    np.testing.assert_array_equal(to_numpy(make(a, dtype, device).addcmul(make(b, dtype, device),
                                                                          make(c, dtype, device), value=1.7)),
                                  (a.astype(np.int64) + b.astype(np.int64) * c.astype(np.int64)).astype(dtype))


def test_type_promotion(device):
    i = minitorch.tensor([1, 2, 3], device=device)
    f = minitorch.tensor([1.0, 2.0, 4.0], device=device)
    d = f.double()
    assert minitorch.addcmul(i, f, i).dtype == minitorch.float32
    assert minitorch.addcmul(f, d, f).dtype == minitorch.float64
    assert minitorch.addcmul(f, minitorch.tensor(2.0, dtype=minitorch.float64), f).dtype == minitorch.float32
    assert minitorch.addcdiv(i, f, f).dtype == minitorch.float32
    np.testing.assert_allclose(to_numpy(minitorch.addcdiv(f, i, f)), [2.0, 3.0, 4.75])
    bools = minitorch.tensor([True, False, True], device=device)
    np.testing.assert_allclose(to_numpy(minitorch.addcmul(f, bools, bools)), [2.0, 2.0, 5.0])


def test_lerp_weight_one_gives_end_and_nan_weight(device):
    a = minitorch.tensor([1.0e8, -3.0, 0.1], device=device)
    b = minitorch.tensor([1.0, 7.0, 1.0e-7], device=device)
    np.testing.assert_array_equal(to_numpy(a.lerp(b, 1.0)), to_numpy(b))
    np.testing.assert_array_equal(to_numpy(a.lerp(b, 0.0)), to_numpy(a))
    assert np.isnan(to_numpy(a.lerp(b, float("nan")))).all()


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 1, 2), (1,), (1, 1), ()])
def test_size_zero_and_one(device, shape):
    a = minitorch.ones(*shape, device=device)
    for out in (a.lerp(a, 0.5), a.addcmul(a, a), a.addcdiv(a, a), a.clone().lerp_(a, 0.5),
                a.clone().addcmul_(a, a), a.clone().addcdiv_(a, a)):
        assert tuple(out.shape) == shape
    np.testing.assert_array_equal(to_numpy(a.addcmul(a, a, value=2)), np.full(shape, 3.0, np.float32))


def test_host_numbers_and_zero_dim_tensors(device):
    """Numbers and 0-dim CPU tensors beside tensors of the device: the kernel reads them on
    the host (no copy to the GPU); tensors of another device with dims are refused."""
    a = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    b = minitorch.tensor([5.0, 6.0], device=device)
    w = minitorch.tensor(0.25)  # 0-dim, on the CPU
    np.testing.assert_allclose(to_numpy(a.lerp(b, w)), np_lerp(to_numpy(a), to_numpy(b), 0.25))
    two = minitorch.tensor(2.0)
    np.testing.assert_allclose(to_numpy(a.addcmul(two, b)), to_numpy(a) + 2 * to_numpy(b))
    np.testing.assert_allclose(to_numpy(a.addcdiv(b, two, value=3)), to_numpy(a) + 3 * to_numpy(b) / 2)
    np.testing.assert_allclose(to_numpy(two.addcmul(a, b)), 2 + to_numpy(a) * to_numpy(b))
    h = a.half()
    np.testing.assert_allclose(to_numpy(h.addcmul(two, b.half()).float()), to_numpy(a) + 2 * to_numpy(b), rtol=1e-3)
    x = a.clone()
    x.addcmul_(two, b, value=0.5)
    np.testing.assert_allclose(to_numpy(x), to_numpy(a) + to_numpy(b))
    if device == "cuda":
        with pytest.raises(RuntimeError, match="addcmul.*same device"):
            a.addcmul(b.cpu(), b)


@pytest.mark.parametrize("op", ["lerp", "addcmul", "addcdiv"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "step"])
def test_inplace_matches_out_of_place(device, op, dtype, layout):
    a, b, c = (random_array(k, (4, 6), np.float32, 0.5, 2) for k in range(3))
    ta = make(a, dtype, device, layout)
    tb, tc = make(b, dtype, device), make(c[0], dtype, device)  # c broadcast along dim 0
    args = (tb, tc) if op != "lerp" else (tb, tc * 0.5)
    kw = {} if op == "lerp" else {"value": 0.5}
    want = getattr(ta, op)(*args, **kw)
    out = getattr(ta, op + "_")(*args, **kw)
    assert out is ta and ta.dtype == getattr(minitorch, dtype)
    np.testing.assert_array_equal(to_numpy(ta.float()), to_numpy(want.float()))


def test_inplace_casts_into_self_and_refuses_what_pytorch_refuses(device):
    f = minitorch.tensor([1.0, 2.0, 3.0], device=device)
    d = f.double()
    x = f.clone()
    x.addcmul_(d, d)  # a float64 result into float32 self
    assert x.dtype == minitorch.float32
    np.testing.assert_allclose(to_numpy(x), [2.0, 6.0, 12.0])
    i = minitorch.tensor([1, 2, 3], device=device)
    x = f.clone()
    x.addcmul_(i, i)
    np.testing.assert_allclose(to_numpy(x), [2.0, 6.0, 12.0])
    with pytest.raises(TypeError, match="addcmul_: result type float32 can't be cast to the desired output type int64"):
        i.clone().addcmul_(f, f)
    with pytest.raises(ValueError, match="lerp_: output with shape"):
        f.clone().lerp_(f.reshape(3, 1), 0.5)
    with pytest.raises(RuntimeError, match="addcmul_.*more than one element"):
        minitorch.zeros(1, device=device).expand(3).addcmul_(f, f)


def test_inplace_aliasing(device):
    a0 = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 2.0, 0.25]], np.float32)
    a = minitorch.tensor(a0, device=device)
    a.addcmul_(a, a, value=0.5)  # every operand is self: read and write the same element
    np.testing.assert_allclose(to_numpy(a), a0 + 0.5 * a0 * a0, rtol=1e-6)
    a = minitorch.tensor(a0, device=device)
    a.addcdiv_(a, a)
    np.testing.assert_allclose(to_numpy(a), a0 + 1, rtol=1e-6)
    a = minitorch.tensor(a0, device=device)
    a.lerp_(a.t(), 0.25)  # overlapping, other elements: must read the old values
    np.testing.assert_allclose(to_numpy(a), np_lerp(a0, a0.T, 0.25), rtol=1e-6)
    a = minitorch.tensor(a0, device=device)
    a.addcmul_(a.t(), a[0])
    np.testing.assert_allclose(to_numpy(a), a0 + a0.T * a0[0], rtol=1e-6)


def test_inplace_bumps_the_version_and_saved_tensors_notice(device):
    w = minitorch.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = w * 1.0
    y = h.exp()  # saves its output
    y.addcmul_(h, h)
    assert y.grad_fn.name() == "AddcmulBackward0"
    v = minitorch.tensor([1.0, 2.0], device=device)
    before = v._version
    v.lerp_(v, 0.5)
    assert v._version == before + 1


def test_inplace_in_graph_gives_the_gradient(device):
    for op, kw in (("lerp", {}), ("addcmul", {"value": 0.5}), ("addcdiv", {"value": -2.0})):
        x0 = minitorch.tensor([0.5, 1.5, -1.0], device=device, dtype=minitorch.float64, requires_grad=True)
        t1 = minitorch.tensor([1.0, 2.0, 3.0], device=device, dtype=minitorch.float64, requires_grad=True)
        t2 = minitorch.tensor([0.25, -0.5, 2.0], device=device, dtype=minitorch.float64, requires_grad=True)
        x = x0 * 1.0
        getattr(x, op + "_")(t1, t2, **kw)
        x.sum().backward()
        grads = [g.grad.clone() for g in (x0, t1, t2)]
        for g in (x0, t1, t2):
            g.grad = None
        getattr(x0, op)(t1, t2, **kw).sum().backward()
        for g, want in zip((x0, t1, t2), grads):
            np.testing.assert_allclose(to_numpy(g.grad), to_numpy(want), rtol=1e-12)


@pytest.mark.parametrize("op", ["lerp", "lerp_number", "addcmul", "addcdiv"])
def test_gradcheck(device, op):
    rng = np.random.default_rng(3)

    def leaf(shape, lo=-1.0, hi=1.0):
        return minitorch.tensor(rng.uniform(lo, hi, shape), device=device, dtype=minitorch.float64,
                                requires_grad=True)

    a, b = leaf((3, 4)), leaf((4,))
    c = leaf((3, 1), 0.5, 1.5)
    if op == "lerp":
        fn, inputs = (lambda a, b, c: minitorch.lerp(a, b, c)), (a, b, leaf((3, 1), -0.2, 1.2))
    elif op == "lerp_number":
        fn, inputs = (lambda a, b: a.lerp(b, 0.7)), (a, b)
    elif op == "addcmul":
        fn, inputs = (lambda a, b, c: a.addcmul(b, c, value=-1.5)), (a, b, c)
    else:
        fn, inputs = (lambda a, b, c: a.addcdiv(b, c, value=0.75)), (a, b, c)
    assert gradcheck(fn, inputs)

    def first_grads(*xs):  # the backward formulas are ops too: their gradients (create_graph)
        with minitorch.autograd.enable_grad():  # (gradcheck evaluates under no_grad)
            y = fn(*xs)
            return tuple(minitorch.autograd.grad((y * y).sum(), xs, create_graph=True))

    assert gradcheck(first_grads, inputs)


def test_backward_node_names(device):
    x = minitorch.ones(2, device=device, requires_grad=True)
    assert x.lerp(x, 0.5).grad_fn.name() == "LerpBackward1"
    assert x.addcmul(x, x).grad_fn.name() == "AddcmulBackward0"
    assert x.addcdiv(x, x).grad_fn.name() == "AddcdivBackward0"


def test_errors(device):
    f = minitorch.ones(3, device=device)
    i = minitorch.ones(3, dtype=minitorch.int64, device=device)
    with pytest.raises(TypeError, match="lerp"):
        minitorch.lerp(i, i, 0.5)
    with pytest.raises(TypeError, match="lerp: expected dtype float32 for `end` but got dtype float64"):
        f.lerp(f.double(), 0.5)
    with pytest.raises(TypeError, match="lerp: expected dtype float32 for `weight` but got dtype float64"):
        f.lerp(f, minitorch.tensor(0.5, dtype=minitorch.float64))
    with pytest.raises(TypeError, match="lerp.*weight"):
        f.lerp(f, "half")
    with pytest.raises(TypeError, match="lerp.*end"):
        f.lerp(1.0, 0.5)
    with pytest.raises(RuntimeError, match="addcdiv: Integer division with addcdiv is no longer supported"):
        f.addcdiv(i, i)
    with pytest.raises(TypeError, match="addcmul: not implemented for bool"):
        b = minitorch.ones(3, dtype=minitorch.bool, device=device)
        b.addcmul(b, b)
    with pytest.raises(TypeError, match="addcmul.*tensor2.*must be a Tensor"):
        f.addcmul(f, 2.0)
    with pytest.raises(TypeError):
        f.addcmul(f, f, 2.0)  # value is keyword-only
    with pytest.raises(TypeError, match="addcmul.*value.*number"):
        f.addcmul(f, f, value="x")
    with pytest.raises(ValueError, match="addcmul: shapes .* cannot be broadcast"):
        f.addcmul(f, minitorch.ones(2, device=device))
    with pytest.raises(RuntimeError, match="lerp_"):
        minitorch.ones(2, device=device, requires_grad=True).lerp_(minitorch.ones(2, device=device), 0.5)


# ---- one kernel per call ----

CASES = [
    ("lerp", lambda a, b, c: a.lerp(b, c)),
    ("lerp_", lambda a, b, c: a.lerp_(b, 0.1)),
    ("addcmul", lambda a, b, c: a.addcmul(b, c, value=0.5)),
    ("addcmul_", lambda a, b, c: a.addcmul_(b, c, value=0.5)),
    ("addcdiv", lambda a, b, c: a.addcdiv(b, c, value=0.5)),
    ("addcdiv_", lambda a, b, c: a.addcdiv_(b, c, value=0.5)),
]


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_one_launch_on_cuda(name, fn, dtype):
    a, b, c = (minitorch.rand(1000, device="cuda", dtype=getattr(minitorch, dtype)) + 0.5 for _ in range(3))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(a, b, c)
    ks = [k for e in prof.events() for k in e.kernels]
    assert len(ks) == 1 and "ternary" in ks[0].name, [k.name for k in ks]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_one_kernel_call_on_the_cpu(name, fn):
    """The CPU profiler has no launches; its FLOPs and bytes count every kernel call: one
    ternary call is 3 FLOPs per element and touches out, a, b, c once (no temporaries)."""
    n = 1000
    a, b, c = (minitorch.rand(n) + 0.5 for _ in range(3))
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        fn(a, b, c)
    (event,) = prof.events()
    assert event.flops == 3 * n
    assert event.bytes == (4 * n * 4 if name != "lerp_" else 3 * n * 4 + 4)  # lerp_'s weight: one float32
