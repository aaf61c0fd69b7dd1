"""The OpInfo battery: every op of ``op_db.OP_DB`` (one per declared elementwise, C++ and
composite op) against NumPy, on every device.

- values on every declared dtype (contiguous), and on transposed, sliced (step) and
  expanded inputs in one dtype (float64 where declared): layouts x dtypes are not fully
  crossed, to keep the battery fast; the method form and the in-place form (same result,
  written into the same tensor, returns self; an error where PyTorch gives one) agree with
  the function on each;
- a TypeError on every dtype the op does not declare;
- aliases and operators agree with the function;
- float64 ``gradcheck`` for differentiable ops on every layout; outputs of
  non-differentiable ops have no ``grad_fn``.

A genuine bug in an op is an ``xfail(strict=True)`` case in ``op_db.py`` naming it.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import DEVICES
from minitorch.ops.declarations import ALL, FLOATING, FUNCTIONAL, GENERIC, MINITORCH
from minitorch.testing import gradcheck
from op_db import D, DEFAULT_TOL, OP_DB, Maker

LAYOUTS = ["transpose", "step", "expanded"]
NP_OF = {"float32": np.float32, "float64": np.float64, "float16": np.float32, "bfloat16": np.float32,
         "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
         "bool": np.bool_}
KIND = {"int64": "i", "int32": "i", "int16": "i", "int8": "i", "uint8": "u", "bool": "b"}
NARROW = ("int32", "int16", "int8", "uint8")
SEED = 0


def _kind(dtype):
    return KIND.get(dtype, "f")


def _layout_dtype(op):
    """The dtype the layouts and the other forms are checked in."""
    return next(d for d in ("float64", "int64", "bool") if d in op.dtypes)


# ------------------------------------------------------------- tensors ----

def _plain(arr, dtype, device):
    t = minitorch.tensor(np.asarray(arr).astype(NP_OF[dtype]), device=device)
    return t.to(getattr(minitorch, dtype)) if dtype in ("float16", "bfloat16") else t


def data_tensor(arr, dtype, layout, device):
    """``arr`` in ``dtype`` as a contiguous, transposed, sliced (step) or expanded tensor."""
    arr = np.asarray(arr)
    if layout == "transpose" and arr.ndim >= 2:
        rev = tuple(range(arr.ndim))[::-1]
        return _plain(np.ascontiguousarray(arr.transpose(rev)), dtype, device).permute(*rev)
    if layout == "step" and arr.ndim >= 1:
        idx = tuple(slice(1, None, 2) for _ in arr.shape)
        big = np.full(tuple(2 * s + 1 for s in arr.shape), True if arr.dtype == bool else 7, dtype=arr.dtype)
        big[idx] = arr
        return _plain(big, dtype, device)[idx]
    if layout == "expanded":
        d = next((i for i, s in enumerate(arr.shape) if s > 1), None)
        if d is not None:
            base = arr[tuple(slice(0, 1) if i == d else slice(None) for i in range(arr.ndim))]
            return _plain(base, dtype, device).expand(*arr.shape)
    return _plain(arr, dtype, device)


def values(t):
    """A tensor's values in NumPy: float64 for every floating dtype, int64 for every integer one
    (the references compute in the wide types)."""
    t = t.detach().cpu()
    if t.dtype.is_floating_point:
        t = t.double()
    arr = np.array(t.numpy(), copy=True)
    return arr.astype(np.int64) if arr.dtype.kind in "iu" else arr


def materialize(obj, dtype, layout, device):
    """(what the op gets, what the reference gets) for a sample argument."""
    if isinstance(obj, D):
        t = data_tensor(obj.arr, dtype, layout, device)
        return t, values(t)
    if isinstance(obj, np.ndarray):
        return minitorch.tensor(obj, device=device), obj
    if isinstance(obj, (list, tuple)):
        pairs = [materialize(o, dtype, layout, device) for o in obj]
        return type(obj)(p[0] for p in pairs), type(obj)(p[1] for p in pairs)
    return obj, obj


def prepare(sample, dtype, layout, device):
    args, args_np = materialize(sample.args, dtype, layout, device)
    kw = {k: materialize(v, dtype, layout, device) for k, v in sample.kwargs.items()}
    return args, {k: v[0] for k, v in kw.items()}, (args_np, {k: v[1] for k, v in kw.items()})


def call(op, args, kwargs):
    """The op's function form (the method where it has no function)."""
    if op.namespace == FUNCTIONAL:
        return getattr(F, op.name)(*args, **kwargs)
    if op.namespace == "linalg":
        return getattr(minitorch.linalg, op.name)(*args, **kwargs)
    if op.decl.function:
        return getattr(minitorch, op.name)(*args, **kwargs)
    return getattr(args[0], op.name)(*args[1:], **kwargs)


def reference(op, sample_np):
    with np.errstate(all="ignore"):
        return op.ref(*sample_np[0], **sample_np[1])


# ------------------------------------------------------------ comparing ----

def _result_dtype(want, dtype):
    kind = np.asarray(want).dtype.kind
    if kind == "f":
        return dtype if dtype in FLOATING else "float32"
    return "bool" if kind == "b" else "int64"


def assert_same(op, dtype):
    def check(got, want):
        want = np.asarray(want)
        name = _result_dtype(want, dtype)
        assert isinstance(got, minitorch.Tensor), type(got)
        if name == "int64" and dtype in NARROW and got.dtype == getattr(minitorch, dtype):
            # A narrow integer op computes in its own type and wraps around (PyTorch's rule);
            # reductions and indices give int64. tests/test_int_dtypes.py checks which is which.
            name, want = dtype, want.astype(NP_OF[dtype]).astype(np.int64)
        assert got.dtype == getattr(minitorch, name), f"dtype {got.dtype}, expected {name}"
        got_np = values(got)
        assert got_np.shape == want.shape, f"shape {got_np.shape}, expected {want.shape}"
        if want.dtype.kind == "f":
            tol = {**DEFAULT_TOL[name], **op.tol.get(name, {})}
            np.testing.assert_allclose(got_np, want, equal_nan=True, **tol)
        else:
            np.testing.assert_array_equal(got_np, want)
    return check


def compare(op, dtype, got, want, sample_np):
    same = assert_same(op, dtype)
    if op.check is not None:
        return op.check(got, want, sample_np, same)
    if isinstance(want, bool):
        assert got is want or (isinstance(got, bool) and got == want), (got, want)
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (type(got), len(want))
        for g, w in zip(got, want):
            same(g, w)
        return
    same(got, want)


def assert_identical(a, b, what):
    """Two forms of the op: the same dtype, shape and values, to the bit."""
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), what
        for x, y in zip(a, b):
            assert_identical(x, y, what)
        return
    if not isinstance(a, minitorch.Tensor):
        assert a == b, what
        return
    assert isinstance(b, minitorch.Tensor) and a.dtype == b.dtype, f"{what}: {b!r} vs {a!r}"
    np.testing.assert_array_equal(values(b), values(a), err_msg=what)


def _can_cast(src, dst):
    """PyTorch's rule for writing a result into a tensor in place."""
    if dst == minitorch.bool:
        return src == minitorch.bool
    if not dst.is_floating_point:
        return not src.is_floating_point
    return True


def _has_overlap(t):
    return any(st == 0 and s > 1 for s, st in zip(t.shape, t.stride()))


def check_inplace(op, sample, args, kwargs, out, dtype, layout, device):
    """``x.<op>_(...)`` writes what ``<op>`` returns into ``x`` and returns ``x``; where the
    result does not fit ``x`` (shape, dtype) or ``x`` overlaps itself, an error."""
    x = data_tensor(sample.args[0].arr, dtype, layout, device)
    method = getattr(x, op.name + "_")
    if op.inplace_dtypes is not None and dtype not in op.inplace_dtypes:
        with pytest.raises(RuntimeError):
            method(*args[1:], **kwargs)
        return
    if _has_overlap(x):
        with pytest.raises(RuntimeError):
            method(*args[1:], **kwargs)
        return
    if not isinstance(out, minitorch.Tensor):
        return
    if tuple(out.shape) != tuple(x.shape):
        with pytest.raises((RuntimeError, ValueError)):
            method(*args[1:], **kwargs)
        return
    if not _can_cast(out.dtype, x.dtype):
        with pytest.raises(TypeError):
            method(*args[1:], **kwargs)
        return
    before = x.data_ptr()
    r = method(*args[1:], **kwargs)
    assert r is x, f"{op.name}_ does not return self"
    assert x.data_ptr() == before
    assert_identical(out.to(x.dtype), x, f"{op.name}_ vs {op.name}")


# ---------------------------------------------------------------- cases ----

def _param(op, *rest, test):
    what = rest[0] if rest else "*"
    marks = []
    reason = op.xfail_reason(test, what, "*")
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(op, *rest, id="-".join([op.id, *map(str, rest)]), marks=marks)


class _DeviceXfail:
    """A strict xfail for a bug on one device only (the case's marks cannot see the device):
    the body must fail, with the reason as the xfail's."""

    def __init__(self, op, test, what, device):
        self.reason = op.xfail_reason(test, what, device) if op.xfail_reason(test, what, "*") is None else None

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if self.reason is None:
            return False
        if kind is None:
            pytest.fail(f"[XPASS(strict)] {self.reason}")
        pytest.xfail(self.reason)


VALUE_CASES = [_param(op, dt, "contiguous", test="values") for op in OP_DB for dt in op.dtypes] + [
    _param(op, _layout_dtype(op), layout, test="layout") for op in OP_DB for layout in LAYOUTS]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("op", "dtype", "layout"), VALUE_CASES)
def test_values(op, dtype, layout, device):
    """Function vs NumPy; the method and in-place forms vs the function; inputs untouched."""
    with _DeviceXfail(op, "values" if layout == "contiguous" else "layout", dtype, device):
        _check_values(op, dtype, layout, device)


def _check_values(op, dtype, layout, device):
    for sample in op.samples(Maker(_kind(dtype), op.domain, SEED)):
        args, kwargs, sample_np = prepare(sample, dtype, layout, device)
        want = reference(op, sample_np)
        got = call(op, args, kwargs)
        try:
            compare(op, dtype, got, want, sample_np)
            # the method's self is the function's first argument; Tensor.where(condition, y)'s is where's input
            method_args = (args[1], args[0], *args[2:]) if op.name == "where" else args
            if op.decl.method and op.decl.function and isinstance(method_args[0], minitorch.Tensor):
                assert_identical(got, getattr(method_args[0], op.name)(*method_args[1:], **kwargs),
                                 f"Tensor.{op.name}")
            if op.decl.inplace and isinstance(sample.args[0], D):
                check_inplace(op, sample, args, kwargs, got, dtype, layout, device)
            for a, a_np in zip(args, sample_np[0]):
                if isinstance(a, minitorch.Tensor) and a.dtype.is_floating_point == (a_np.dtype.kind == "f"):
                    np.testing.assert_array_equal(values(a), a_np, err_msg="an input was modified")
        except AssertionError as e:
            raise AssertionError(f"{op.id} on {sample}: {e}") from e


UNSUPPORTED = [_param(op, test="unsupported") for op in OP_DB
               if op.namespace in (MINITORCH, "linalg") and set(ALL) - set(op.dtypes)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", UNSUPPORTED)
def test_unsupported_dtypes_raise(op, device):
    """Every dtype the op does not declare is a TypeError (PyTorch: not implemented for it)."""
    taken = []
    for dtype in sorted(set(ALL) - set(op.dtypes)):
        sample = next(iter(op.samples(Maker(_kind(dtype), op.domain, SEED))))
        args, kwargs, _ = prepare(sample, dtype, "contiguous", device)
        try:
            call(op, args, kwargs)
            taken.append(dtype)
        except TypeError:
            pass
    assert not taken, f"{op.id} takes {taken}, which it does not declare"


FORM_CASES = [_param(op, test="forms") for op in OP_DB
              if op.decl.aliases or op.decl.method_aliases or op.decl.operators]


def _operator_call(name, args, kwargs):
    x = args[0]
    if name in ("__neg__", "__abs__", "__invert__"):
        return getattr(x, name)()
    if name.startswith("__r") and name not in ("__rshift__",):
        if not isinstance(args[1], minitorch.Tensor):
            return None
        return getattr(args[1], name)(x)
    if name.startswith("__i"):
        y = x.clone()
        r = getattr(y, name)(*args[1:])
        assert r is y, f"{name} does not return self"
        return r
    return getattr(x, name)(*args[1:], **kwargs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", FORM_CASES)
def test_aliases_and_operators_agree(op, device):
    dtype = _layout_dtype(op)
    for sample in op.samples(Maker(_kind(dtype), op.domain, SEED)):
        args, kwargs, _ = prepare(sample, dtype, "contiguous", device)
        want = call(op, args, kwargs)
        for alias in op.decl.aliases:
            if op.decl.function:
                assert_identical(want, getattr(minitorch, alias)(*args, **kwargs), f"minitorch.{alias}")
            if op.decl.method:
                assert_identical(want, getattr(args[0], alias)(*args[1:], **kwargs), f"Tensor.{alias}")
        for alias in op.decl.method_aliases:
            assert_identical(want, getattr(args[0], alias)(*args[1:], **kwargs), f"Tensor.{alias}")
        for name in op.decl.operators:
            if name.startswith("__i") and (tuple(want.shape) != tuple(args[0].shape) or not _can_cast(
                    want.dtype, args[0].dtype)):
                continue  # test_values checks the error
            got = _operator_call(name, args, kwargs)
            if got is not None:
                assert_identical(want, got, f"Tensor.{name}")


def _grad_samples(op):
    """Non-empty float64 samples for gradcheck."""
    out = []
    for sample in op.samples(Maker("f", op.domain, SEED)):
        data = [a for a in _flat(sample.args) if isinstance(a, D)]
        if data and all(a.arr.size > 0 for a in data):
            out.append(sample)
    return out[:op.grad_samples]


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _flat(o)
    else:
        yield obj


def _leaf(arr, layout, device):
    """(leaf, get): gradcheck perturbs the leaf; the op sees get(leaf), in the layout."""
    t = data_tensor(arr, "float64", layout, device)
    if layout == "expanded" and _has_overlap(t):
        base = data_tensor(arr, "float64", "contiguous", device)
        d = next(i for i, s in enumerate(arr.shape) if s > 1)
        leaf = minitorch.tensor(values(base).take([0], axis=d), device=device).requires_grad_()
        return leaf, lambda v: v.expand(*arr.shape)
    return t.requires_grad_(), lambda v: v


GRAD_CASES = [_param(op, layout, test="grad") for op in OP_DB if op.decl.grad and "float64" in op.dtypes
              for layout in ["contiguous", *LAYOUTS]]


def _substitute(obj, data, device):
    """The sample argument ``obj`` with each D replaced by ``data(D)`` and indices as tensors."""
    if isinstance(obj, D):
        return data(obj)
    if isinstance(obj, np.ndarray):
        return minitorch.tensor(obj, device=device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_substitute(o, data, device) for o in obj)
    return obj


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("op", "layout"), GRAD_CASES)
def test_gradcheck(op, layout, device):
    for sample in _grad_samples(op):
        leaves, gets = [], []

        def new_leaf(d):
            leaf, get = _leaf(d.arr, layout, device)
            leaves.append(leaf)
            gets.append(get)

        def fn(*ts):
            it = iter(range(len(ts)))

            def use(_d):
                i = next(it)
                return gets[i](ts[i])

            args = _substitute(sample.args, use, device)
            kwargs = {k: _substitute(v, use, device) for k, v in sample.kwargs.items()}
            out = call(op, args, kwargs)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            floats = tuple(o for o in outs if isinstance(o, minitorch.Tensor) and o.dtype.is_floating_point)
            return floats if len(floats) != 1 else floats[0]

        _substitute(sample.args, new_leaf, device)
        for v in sample.kwargs.values():
            _substitute(v, new_leaf, device)
        try:
            assert gradcheck(fn, tuple(leaves))
        except Exception as e:
            raise AssertionError(f"{op.id} on {sample}: {type(e).__name__}: {e}") from e


AUTOGRAD_CASES = [_param(op, test="autograd") for op in OP_DB if "float64" in op.dtypes]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", AUTOGRAD_CASES)
def test_grad_fn_as_declared(op, device):
    """A differentiable op's float outputs require grad; a non-differentiable op's outputs
    have no grad_fn (PyTorch: isnan, comparisons, argmax...)."""
    for sample in _grad_samples(op)[:1]:
        def leaf(d):
            return data_tensor(d.arr, "float64", "contiguous", device).requires_grad_()

        args = _substitute(sample.args, leaf, device)
        kwargs = {k: _substitute(v, leaf, device) for k, v in sample.kwargs.items()}
        out = call(op, args, kwargs)
        for o in out if isinstance(out, (tuple, list)) else (out,):
            if not isinstance(o, minitorch.Tensor):
                continue
            if op.decl.grad and o.dtype.is_floating_point:
                assert o.requires_grad and o.grad_fn is not None, f"{op.id}: the output has no grad_fn"
            else:
                assert not o.requires_grad and o.grad_fn is None, f"{op.id}: a {o.dtype} output has a grad_fn"
