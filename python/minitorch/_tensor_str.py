"""``repr(tensor)`` in PyTorch's format (and ``_shape_str``, a shape as messages print it).

    tensor([[1.0000, 0.5000],
            [0.2500, 0.1250]], dtype=minitorch.float64, requires_grad=True)

Floats that are all whole numbers print as ``1.``; a wide range of magnitudes
switches to scientific notation; tensors over 1000 elements print their edges only.
"""
from __future__ import annotations

import numpy as np

from . import _C

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


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
    if finite.size and np.all(finite == np.round(finite)):
        sci = nonzero.size and nonzero.max() > 1e8
        fmt = (lambda v: f"{v:.{PRECISION}e}") if sci else (lambda v: f"{v:.0f}.")  # noqa: E731
    else:
        sci = nonzero.size and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8 or nonzero.min() < 1e-4)
        fmt = (lambda v: f"{v:.{PRECISION}e}") if sci else (lambda v: f"{v:.{PRECISION}f}")  # noqa: E731

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
            items = head + ["...".rjust(len(head[0]))] + [fmt(v) for v in arr[-EDGEITEMS:].tolist()]
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
