"""In-place forms ``x.op_(...)`` of out-of-place ops: ``exp_``, ``clamp_``, ``pow_``, ``eq_``...
and the random fills ``normal_`` / ``uniform_`` / ``random_`` / ``exponential_`` /
``geometric_`` / ``cauchy_`` / ``log_normal_``.

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
int64 tensor). A comparison written in place (``x.eq_(y)``: 1 or 0 in ``x``'s dtype) keeps
``x`` in the graph with a zero gradient, as PyTorch's ``EqBackward``.

ops/registry.py makes ``Tensor.<name>_`` with ``inplace_form`` for every op declared with
``inplace=GENERIC``, and ``Tensor.normal_``, ``Tensor.uniform_`` and the other random fills of
the functions here (ops/declarations.py). The fills draw from minitorch's generator of
``x``'s device (``manual_seed`` reproduces them) or from a ``generator`` given.
"""
from __future__ import annotations

import math

from .. import _C
from .._C import Tensor
from ..autograd import is_grad_enabled, no_grad
from .registry import generic_inplace_ops
from .sampling import _DIGITS, _check_random_range, _draws, _integer_range, _integers, _zero_gradient


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

# Comparisons: their bool result has no graph, but written into x inside one it keeps x there
# with a zero gradient for x and a tensor ``other`` (PyTorch's derivative of eq_ and the others).
_ZERO_GRADIENT = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})


def inplace_form(name: str):
    """The method ``name + "_"``: ``x.name(*args, **kwargs)`` written into ``x``; returns ``x``."""
    op = name + "_"
    unary = _UNARY.get(name)

    def inplace(self, *args, **kwargs):
        if unary is not None and not args and not kwargs and getattr(type(self), name, None) is unary:
            return _C._unary_(self, name)
        # looked up at each call: a grader may have replaced the method
        operands = (*args, *kwargs.values())
        if name in _ZERO_GRADIENT:
            def compute(x):
                return _zero_gradient(getattr(x, name)(*args, **kwargs).to(x.dtype), x,
                                      *(a for a in operands if isinstance(a, Tensor)))
        else:
            def compute(x):
                return getattr(x, name)(*args, **kwargs)
        return write_into(self, op, compute, operands)

    inplace.__name__ = inplace.__qualname__ = op
    inplace.__doc__ = f"In-place :meth:`{name}`: ``x.{op}(...)`` writes ``x.{name}(...)`` into ``x`` and returns ``x``."
    return inplace


def _random_fill(t: Tensor, op: str, values, draw=None, integers: bool = False, bools: bool = False) -> Tensor:
    """``values(shape, dtype, device)`` written into ``t``; or, outside a graph on a contiguous
    float32 / float64 ``t``, ``draw = (kind, lo, hi)`` drawn straight into it (one launch, where
    drawing, scaling, shifting and copying took four). Floating ``t`` only, unless ``integers``
    (``random_``, ``geometric_``: integer tensors too) and ``bools`` (``random_``: bool too)."""
    in_graph = _in_graph(t, ())
    _check_writable(t, op, in_graph)
    if not (t.dtype.is_floating_point or (integers and (bools or t.dtype != _C.dtype.bool))):
        raise _C.DTypeError(f"{op}: expected a floating point tensor, got {t.dtype.name}")
    if in_graph:  # copy_ records it: the old values get a zero gradient, as in PyTorch
        return t.copy_(values(tuple(t.shape), t.dtype, t.device))
    if draw is not None and t.is_contiguous() and t.dtype in (_C.dtype.float32, _C.dtype.float64):
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


def _uniforms(t: Tensor, shape: tuple, device, generator) -> Tensor:
    """Uniforms in [0, 1) of ``shape``: float64 for a float64 or integer ``t``, else float32."""
    dtype = _C.dtype.float32 if t.dtype.is_floating_point and t.dtype != _C.dtype.float64 else _C.dtype.float64
    return _draws("uniform", shape, dtype, device, generator)


def _number(op: str, what: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{op}(): argument '{what}' must be float, not {type(v).__name__}")
    return float(v)


def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fills ``self`` with draws from the exponential distribution of rate ``lambd`` (density
    ``lambd * exp(-lambd * x)``, mean ``1 / lambd``): ``-log(1 - u) / lambd``."""
    lambd = _number("exponential_", "lambd", lambd)
    if not lambd > 0:
        raise _C.InputError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _random_fill(self, "exponential_", lambda shape, dtype, device: (
        _uniforms(self, shape, device, generator).neg().log1p().neg() / lambd).to(dtype))


def geometric_(self, p: float, *, generator=None) -> Tensor:
    """Fills ``self`` with the number of Bernoulli(``p``) trials up to the first success (1, 2,
    ...): ``ceil(log(1 - u) / log(1 - p))``; integer tensors too."""
    p = _number("geometric_", "p", p)
    if not 0 < p < 1:
        raise _C.InputError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _random_fill(self, "geometric_", lambda shape, dtype, device: (
        _uniforms(self, shape, device, generator).neg().log1p() / math.log1p(-p)).ceil().clamp_min(1).to(dtype),
        integers=True)


def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fills ``self`` with draws from the Cauchy distribution of location ``median`` and scale
    ``sigma``: ``median + sigma * tan(pi * (u - 1/2))``."""
    median, sigma = _number("cauchy_", "median", median), _number("cauchy_", "sigma", sigma)
    if not sigma > 0:
        raise _C.InputError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    if not self.dtype.is_floating_point:
        raise _C.DTypeError(f"cauchy_: Cauchy distribution is a continuous probability distribution. dtype must be "
                            f"a floating point but you specified {self.dtype.name}")
    return _random_fill(self, "cauchy_", lambda shape, dtype, device: (
        ((_uniforms(self, shape, device, generator) - 0.5) * math.pi).tan() * sigma + median).to(dtype))


def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fills ``self`` with ``exp(z)``, ``z`` normal of mean ``mean`` and standard deviation
    ``std`` (the parameters of the underlying normal, not of the result)."""
    mean, std = _number("log_normal_", "mean", mean), _number("log_normal_", "std", std)
    if not std > 0:
        raise _C.InputError(f"log_normal_ expects std > 0.0, but found std={std}")
    dtype = _C.dtype.float64 if self.dtype == _C.dtype.float64 else _C.dtype.float32
    return _random_fill(self, "log_normal_", lambda shape, dt, device: (
        _draws("normal", shape, dtype, device, generator) * std + mean).exp().to(dt))


def _random_bounds(args: tuple, kwargs: dict) -> tuple:
    """PyTorch's three forms of random_: ``()``, ``(to)`` and ``(from, to)`` (``to`` may be None:
    up to the dtype's largest); returns (from, to or None, whether a range was given)."""
    names = ("from", "to")
    unknown = set(kwargs) - set(names)
    if unknown or len(args) > 2:
        raise TypeError(f"random_() takes (), (to) or (from, to), got {len(args)} positional arguments and "
                        f"keywords {sorted(kwargs)}")
    if len(args) == 1 and "to" not in kwargs and "from" not in kwargs:
        low, high = 0, args[0]
        if high is None:
            raise TypeError("random_(): argument 'to' must be int, not NoneType")
    elif not args and not kwargs:
        return 0, None, False
    else:
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            if k in given:
                raise TypeError(f"random_() got multiple values for argument '{k}'")
            given[k] = v
        if "to" not in given:
            raise TypeError("random_() missing argument 'to': random_(from, to) or random_(to)")
        low, high = given.get("from", 0), given["to"]
    for what, v in (("from", low), ("to", high)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError(f"random_(): argument '{what}' must be int, not {type(v).__name__}")
    return low, high, True


def _to_float_and_back(v: int, dtype) -> int:
    """``v`` rounded to ``dtype`` and back to an int (PyTorch's static_cast<scalar_t>); ``v``
    itself beyond the dtype's range (the bounds check refuses it next)."""
    rounded = _C._full((), float(v), dtype, None).item()
    return int(rounded) if math.isfinite(rounded) else v


def _update_from(low: int, dtype) -> int:
    """PyTorch's update_from: moves ``from`` right to a value whose successor survives the
    rounding to ``dtype``, so no draw rounds below ``from``."""
    plus_1 = _to_float_and_back(low + 1, dtype)
    if plus_1 < low:
        return plus_1 + (1 << (abs(low + 1).bit_length() - 1 - _DIGITS[dtype.name] + 1))
    return low


def _update_to(high: int, dtype) -> int:
    """PyTorch's update_to: moves ``to`` left so that no draw rounds up to ``to``."""
    minus_1 = _to_float_and_back(high - 1, dtype)
    if minus_1 >= high:
        return minus_1 - (1 << (abs(high - 1).bit_length() - 1 - _DIGITS[dtype.name] + 1))
    return high


def random_(self, *args, generator=None, **kwargs) -> Tensor:
    """Fills ``self`` with integers drawn uniformly: ``random_()`` from ``[0, 2**mantissa]``
    for a floating dtype (every integer there is exact: 2**24 for float32) or ``[0, max]`` for
    an integer one (``[0, 1]`` for bool); ``random_(to)`` from ``[0, to)``; ``random_(from, to)``
    from ``[from, to)``, ``to=None`` meaning up to the dtype's largest. Bounds beyond the dtype
    raise, as PyTorch's.

    >>> x = minitorch.zeros(1000, dtype=minitorch.int64).random_(3, 10)
    >>> x.min().item() >= 3 and x.max().item() < 10
    True
    """
    low, high, given = _random_bounds(args, kwargs)
    dtype = self.dtype
    int64_min, int64_max = -(2 ** 63), 2 ** 63 - 1
    if not given:
        low, high_incl = _integer_range(dtype)
    elif high is not None:
        if not low < high:
            raise _C.InputError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        if dtype.is_floating_point:
            low, high = _update_from(low, dtype), _update_to(high, dtype)
            if not low < high:
                raise _C.InputError(f"random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                    f"but got from={low} >= to={high}")
        high_incl = high - 1
    elif low == int64_min:
        high_incl = int64_max
    else:
        high_incl = min(_integer_range(dtype)[1], int64_max)
        if dtype.is_floating_point:
            low = _update_from(low, dtype)
            if not low < high_incl:
                raise _C.InputError(f"random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                    f"casted to dtype, but got from={low} > to_inc={high_incl}")
    if not (given and high is None and low == int64_min):
        _check_random_range("random_", low, high_incl, dtype)
    return _random_fill(self, "random_", lambda shape, dt, device: _integers(shape, low, high_incl, device,
                                                                             generator).to(dt),
                        integers=True, bools=True)


# The ops whose in-place form is inplace_form's: those declared with inplace=GENERIC in
# ops/declarations.py (add_ sub_ mul_ div_ fill_ zero_ copy_ are C++).
INPLACE_OPS = generic_inplace_ops()
