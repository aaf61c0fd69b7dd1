"""``repr(tensor)`` in PyTorch's format (and ``_shape_str``, a shape as messages print it).

    tensor([[1.0000, 0.5000],
            [0.2500, 0.1250]], dtype=minitorch.float64, requires_grad=True)

Floats that are all whole numbers print as ``1.``; a wide range of magnitudes
switches to scientific notation; tensors over 1000 elements print their edges only.
``minitorch.set_printoptions`` changes these (PyTorch's options and profiles).
"""
from __future__ import annotations

import numpy as np

from . import _C

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
SCI_MODE = None  # None: chosen from the values; True / False: always / never scientific notation

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """How ``repr(tensor)`` prints, PyTorch's options: ``precision`` (digits after the point,
    default 4), ``threshold`` (more elements than this print only the ``edgeitems`` first and
    last of each dim, default 1000 and 3), ``linewidth`` (characters per line before a row
    wraps, default 80), ``sci_mode`` (True / False: always / never scientific notation; None:
    chosen from the values). ``profile`` first sets the four numbers to a preset: "default",
    "short" (precision 2, edgeitems 2) or "full" (no summarizing); the other arguments given
    then override it. As in PyTorch, every call sets ``sci_mode`` (None unless given).

    >>> minitorch.set_printoptions(precision=2)
    >>> minitorch.tensor([1.23456])
    tensor([1.23])
    >>> minitorch.set_printoptions(profile="default")
    """
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {', '.join(map(repr, _PROFILES))}, "
                             f"got {profile!r}")
        preset = _PROFILES[profile]
        PRECISION, THRESHOLD = preset["precision"], preset["threshold"]
        EDGEITEMS, LINEWIDTH = preset["edgeitems"], preset["linewidth"]
    for name, value in (("precision", precision), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise TypeError(f"set_printoptions(): {name} must be a non-negative int, got {value!r}")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise TypeError(f"set_printoptions(): threshold must be a number, got {threshold!r}")
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions(): sci_mode must be None, True or False, got {sci_mode!r}")
    PRECISION = PRECISION if precision is None else precision
    THRESHOLD = THRESHOLD if threshold is None else threshold
    EDGEITEMS = EDGEITEMS if edgeitems is None else edgeitems
    LINEWIDTH = LINEWIDTH if linewidth is None else linewidth
    SCI_MODE = sci_mode


def get_printoptions() -> dict:
    """The current print options, as :func:`set_printoptions` takes them."""
    return dict(precision=PRECISION, threshold=THRESHOLD, edgeitems=EDGEITEMS, linewidth=LINEWIDTH,
                sci_mode=SCI_MODE)


def _shape_str(shape) -> str:
    """``(2, 3)``, ``(3,)``, ``()``: a shape as error messages print it."""
    shape = tuple(shape)
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _formatter(values: np.ndarray, dtype):
    """A function number -> text, all of one width, chosen from the values shown."""
    if dtype == _C.dtype.bool:
        strs = lambda v: "True" if v else "False"  # noqa: E731
        width = max((len(strs(v)) for v in values.flat), default=0)
        return lambda v: strs(v).rjust(width)
    if not dtype.is_floating_point:  # int64 and the narrow integers
        width = max((len(str(int(v))) for v in values.flat), default=0)
        return lambda v: str(int(v)).rjust(width)
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    whole = finite.size and np.all(finite == np.round(finite))
    if SCI_MODE is not None:
        sci = SCI_MODE
    elif whole:
        sci = nonzero.size and nonzero.max() > 1e8
    else:
        with np.errstate(over="ignore"):  # max / min of float32 values may overflow: inf, still > 1000
            sci = nonzero.size and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8
                                    or nonzero.min() < 1e-4)
    if sci:
        fmt = lambda v: f"{v:.{PRECISION}e}"  # noqa: E731
    else:
        fmt = (lambda v: f"{v:.0f}.") if whole else (lambda v: f"{v:.{PRECISION}f}")  # noqa: E731

    def one(v):
        if np.isnan(v):
            return "nan"
        if np.isinf(v):
            return "inf" if v > 0 else "-inf"
        return fmt(v)

    # Width from the finite values (PyTorch prints [nan, inf, 1.], not [nan, inf,  1.]).
    widths = [len(one(v)) for v in finite.flat] or [len(one(v)) for v in values.flat]
    width = max(widths, default=0)
    return lambda v: one(v).rjust(width)


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The edge elements of every dim (what gets printed around the '...')."""
    for d in range(arr.ndim):
        if arr.shape[d] > 2 * EDGEITEMS:
            arr = np.concatenate(
                [np.take(arr, range(EDGEITEMS), axis=d), np.take(arr, range(arr.shape[d] - EDGEITEMS, arr.shape[d]), axis=d)],
                axis=d,
            )
    return arr


def _body(arr: np.ndarray, fmt, indent: int, summarize: bool) -> str:
    """Text of arr (the whole tensor: long dims are cut to their edges here)."""
    if arr.ndim == 0:
        return fmt(arr.item())
    cut = summarize and arr.shape[0] > 2 * EDGEITEMS
    if arr.ndim == 1:
        if cut:
            head = [fmt(v) for v in arr[:EDGEITEMS].tolist()]
            items = head + ["...".rjust(len(head[0]) if head else 0)] + [fmt(v) for v in arr[-EDGEITEMS:].tolist()]
        else:
            items = [fmt(v) for v in arr.tolist()]
        # Wrap long rows at the line width, as PyTorch does.
        per_line = max(1, (LINEWIDTH - indent) // (len(items[0]) + 2)) if items else 1
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if cut:
        rows = ([_body(arr[i], fmt, indent + 1, summarize) for i in range(EDGEITEMS)] + ["..."]
                + [_body(arr[i], fmt, indent + 1, summarize) for i in range(arr.shape[0] - EDGEITEMS, arr.shape[0])])
    else:
        rows = [_body(arr[i], fmt, indent + 1, summarize) for i in range(arr.shape[0])]
    sep = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t) -> str:
    # 16-bit values are shown through float32, which holds each of them exactly.
    arr = (t.detach().cpu().float() if t.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else t.detach().cpu()).numpy()
    summarize = arr.size > THRESHOLD
    shown = _summarized(arr) if summarize else arr
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if arr.size == 0:
        body = "[]"
        if arr.shape != (0,):
            suffixes.append(f"size={tuple(arr.shape)}")
    else:
        body = _body(arr, _formatter(shown, t.dtype), len("tensor("), summarize)
    if t.dtype not in (_C._get_default_dtype(), _C.dtype.int64, _C.dtype.bool):
        suffixes.append(f"dtype={t.dtype!r}")
    elif t.dtype == _C.dtype.bool and arr.size == 0 or (t.dtype == _C.dtype.int64 and arr.size == 0):
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffixes) + ")"
