"""In-place forms ``x.op_(...)`` of out-of-place ops: ``exp_``, ``clamp_``, ``pow_``...
and the random fills ``normal_`` / ``uniform_``.

Each computes ``x.op(...)`` into a new tensor, then copies it into ``x`` (one extra
buffer), except the C++ ones that write ``x`` directly: ``add_ sub_ mul_ div_``, the
unary ops' forms (``relu_ exp_ sigmoid_``...: one kernel that reads and writes ``x``),
``masked_fill_``, ``clamp_`` (outside a graph; ops/pointwise.py, ops/indexing.py), and the
random fills of a contiguous float32 / float64 ``x`` outside a graph (drawn straight into it). The rules are PyTorch's,
as for the C++ in-place ops: a leaf that requires grad cannot be written in place with
gradients on; inside a graph (``h.relu_()`` in a forward) the op's gradient is recorded
and becomes ``x``'s history (autograd.h: "rebasing"), and anything that saved ``x``'s old
values for backward raises when backward reaches it; the result must have ``x``'s shape
and a dtype that casts back to ``x``'s without changing kind (no float results into an
int64 tensor).

ops/registry.py makes ``Tensor.<name>_`` with ``inplace_form`` for every op declared with
``inplace=GENERIC``, and ``Tensor.normal_`` / ``Tensor.uniform_`` of the functions here
(ops/declarations.py).
"""
from __future__ import annotations

from .. import _C
from .._C import Tensor
from ..autograd import is_grad_enabled, no_grad
from .registry import generic_inplace_ops


def _kind(dtype) -> int:
    """PyTorch's rule for writing a result into an existing tensor: bool (0) < integer (1) <
    floating point (2, float16 and bfloat16 included); a result casts only to its kind or higher."""
    if dtype.is_floating_point:
        return 2
    return 0 if dtype == _C.dtype.bool else 1


def _in_graph(t: Tensor, args) -> bool:
    """The write must be recorded: grad mode is on and ``t`` or a tensor argument requires grad."""
    return is_grad_enabled() and (t.requires_grad or any(isinstance(a, Tensor) and a.requires_grad for a in args))


def _check_writable(t: Tensor, op: str, in_graph: bool) -> None:
    """Raises RuntimeError when writing into ``t`` would write one memory location twice
    (an expanded tensor), or, inside a graph, break autograd (cpp autograd::check_rebase:
    a leaf that requires grad, a view, a tensor with live views)."""
    if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the written-to tensor refers to "
                           f"a single memory location (an expanded tensor of shape {tuple(t.shape)} and strides "
                           f"{t.stride()}); call .clone() before writing to it")
    if in_graph:
        _C._check_rebase(t, op)


def _check_result(t: Tensor, out: Tensor, op: str) -> None:
    """PyTorch's shape and dtype checks for a result written into ``t``."""
    if out.shape != t.shape:
        raise _C.InputError(f"{op}: output with shape {tuple(t.shape)} doesn't match the broadcast shape "
                            f"{tuple(out.shape)}")
    if _kind(out.dtype) > _kind(t.dtype):
        raise _C.DTypeError(f"{op}: result type {out.dtype.name} can't be cast to the desired output type {t.dtype.name}")


def _write(t: Tensor, out: Tensor, op: str) -> Tensor:
    """Copies ``out`` into ``t`` (no gradient recorded) after the result checks."""
    _check_result(t, out, op)
    with no_grad():
        return t.copy_(out)


def write_into(t: Tensor, op: str, compute, args=()) -> Tensor:
    """``t`` <- ``compute(t)`` with PyTorch's in-place rules; returns ``t``. ``args``: the
    other operands (a tensor among them that requires grad puts the write in the graph).

    Inside a graph the result is computed, with its gradient recorded, from a copy of ``t``
    (an op in ``compute`` may save its input for backward, and the write must not change
    that), written into ``t``, and its node becomes ``t``'s history (autograd.h)."""
    in_graph = _in_graph(t, args)
    _check_writable(t, op, in_graph)
    if in_graph:
        out = compute(t.clone())
        _check_result(t, out, op)
        _C._rebase_history(t, out, op)
        return t
    with no_grad():
        out = compute(t)
    return _write(t, out, op)


# The C++ unary ops (relu, exp, sigmoid...): their in-place form is one kernel reading and
# writing x (_C._unary_), as long as the method is still minitorch's own.
_UNARY = {n: getattr(Tensor, n) for n in _C._unary_op_names if hasattr(Tensor, n)}


def inplace_form(name: str):
    """The method ``name + "_"``: ``x.name(*args, **kwargs)`` written into ``x``; returns ``x``."""
    op = name + "_"
    unary = _UNARY.get(name)

    def inplace(self, *args, **kwargs):
        if unary is not None and not args and not kwargs and getattr(type(self), name, None) is unary:
            return _C._unary_(self, name)
        # looked up at each call: a grader may have replaced the method
        return write_into(self, op, lambda x: getattr(x, name)(*args, **kwargs), (*args, *kwargs.values()))

    inplace.__name__ = inplace.__qualname__ = op
    inplace.__doc__ = f"In-place :meth:`{name}`: ``x.{op}(...)`` writes ``x.{name}(...)`` into ``x`` and returns ``x``."
    return inplace


def _random_fill(t: Tensor, op: str, values, draw) -> Tensor:
    """``values(shape, dtype, device)`` written into ``t``; or, outside a graph on a contiguous
    float32 / float64 ``t``, ``draw = (kind, lo, hi)`` drawn straight into it (one launch, where
    drawing, scaling, shifting and copying took four)."""
    in_graph = _in_graph(t, ())
    _check_writable(t, op, in_graph)
    if not t.dtype.is_floating_point:
        raise _C.DTypeError(f"{op}: expected a floating point tensor, got {t.dtype.name}")
    if in_graph:  # copy_ records it: the old values get a zero gradient, as in PyTorch
        return t.copy_(values(tuple(t.shape), t.dtype, t.device))
    if t.is_contiguous() and t.dtype in (_C.dtype.float32, _C.dtype.float64):
        _C._random_(t, *draw)
        return t
    return _write(t, values(tuple(t.shape), t.dtype, t.device), op)


def normal_(self, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fills ``self`` with samples from a normal distribution; reproducible after ``manual_seed``."""
    if std < 0:
        raise _C.InputError(f"normal_: expects std >= 0.0, but found std {std}")
    return _random_fill(self, "normal_", lambda *a: _C._randn(*a) * std + mean, ("normal", mean, std))


def uniform_(self, from_: float = 0.0, to: float = 1.0) -> Tensor:
    """Fills ``self`` with samples from ``[from_, to)``; reproducible after ``manual_seed``."""
    if from_ > to:
        raise _C.InputError(f"uniform_: expects to return a [from, to) range, but found from={from_} > to={to}")
    return _random_fill(self, "uniform_", lambda *a: _C._rand(*a) * (to - from_) + from_, ("uniform", from_, to))


# The ops whose in-place form is inplace_form's: those declared with inplace=GENERIC in
# ops/declarations.py (add_ sub_ mul_ div_ fill_ zero_ copy_ are C++).
INPLACE_OPS = generic_inplace_ops()
