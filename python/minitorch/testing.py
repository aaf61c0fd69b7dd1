"""Checking results, for tests and for graders: ``assert_close`` and ``gradcheck``.

    minitorch.testing.assert_close(student_out, expected)        # diff report on failure
    minitorch.testing.gradcheck(MySigmoid.apply, (x,))            # x: float64, requires_grad
"""
from __future__ import annotations

import numpy as np

from . import _C
from ._tensor_str import _shape_str

# PyTorch's default tolerances per dtype: (rtol, atol).
_TOLERANCES = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "int64": (0.0, 0.0), "bool": (0.0, 0.0)}


def _to_numpy(x) -> np.ndarray:
    if isinstance(x, _C.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(actual, expected, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: str | None = None) -> None:
    """Raises AssertionError unless ``|actual - expected| <= atol + rtol * |expected|`` everywhere.

    Accepts tensors, NumPy arrays, lists and numbers. Default tolerances follow the
    dtype (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7, 1e-7; integers: exact).
    The message reports how many elements differ and the worst ones, with their index.
    """
    a, e = _to_numpy(actual), _to_numpy(expected)
    prefix = f"{msg}\n\n" if msg else ""
    if a.shape != e.shape:
        raise AssertionError(f"{prefix}The values for attribute 'shape' do not match: {_shape_str(a.shape)} != "
                             f"{_shape_str(e.shape)}.")
    if check_dtype and isinstance(actual, _C.Tensor) and isinstance(expected, _C.Tensor) and actual.dtype != expected.dtype:
        raise AssertionError(f"{prefix}The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    dt = a.dtype.name if a.dtype.name in _TOLERANCES else "float64"
    default_rtol, default_atol = _TOLERANCES[dt]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    n_bad, n = int((~close).sum()), close.size
    with np.errstate(invalid="ignore", divide="ignore"):
        abs_diff = np.abs(a64 - e64)
        rel_diff = abs_diff / np.abs(e64)
    abs_diff = np.where(close, 0.0, np.nan_to_num(abs_diff, nan=np.inf))
    rel_diff = np.where(close, 0.0, np.nan_to_num(rel_diff, nan=np.inf))
    ia = np.unravel_index(int(np.argmax(abs_diff)), a.shape) if a.ndim else ()
    ir = np.unravel_index(int(np.argmax(rel_diff)), a.shape) if a.ndim else ()
    raise AssertionError(
        f"{prefix}Tensor-likes are not close!\n\n"
        f"Mismatched elements: {n_bad} / {n} ({100.0 * n_bad / n:.1f}%)\n"
        f"Greatest absolute difference: {abs_diff[ia]} at index {tuple(int(i) for i in ia)} "
        f"(actual {a64[ia]}, expected {e64[ia]}; up to {atol} allowed)\n"
        f"Greatest relative difference: {rel_diff[ir]} at index {tuple(int(i) for i in ir)} (up to {rtol} allowed)"
    )


class GradcheckError(RuntimeError):
    """The analytic and numerical Jacobians disagree."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, tuple) else (out,)


def _output_values(fn, inputs, k) -> np.ndarray:
    from . import autograd

    with autograd.no_grad():
        return _outputs(fn, inputs)[k].detach().cpu().numpy().astype(np.float64).reshape(-1)


def _perturbable(x):
    """A NumPy array of ``x``'s values and a ``write_back()`` that makes ``x`` hold them.

    On the CPU the array *is* ``x``'s memory (write_back does nothing); on another
    device it is a host copy, and write_back copies it over ``x``'s storage.
    """
    base = x.detach()  # shares x's storage, so writes reach x without autograd seeing them
    if base.device.type == "cpu":
        return base.numpy(), lambda: None
    arr = base.cpu().numpy().copy()
    return arr, lambda: base.copy_(_C._from_numpy_copy(arr, base.dtype, None))


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compares every element of the analytic Jacobian (from backward) with central
    finite differences ``(f(x + eps) - f(x - eps)) / (2 eps)``.

    ``inputs`` is a tensor or a tuple; tensors with ``requires_grad=True`` are checked
    and must be float64 (float32 is too coarse for finite differences). Returns True,
    or raises :class:`GradcheckError` naming the worst element.
    """
    from . import autograd

    inputs = (inputs,) if isinstance(inputs, _C.Tensor) else tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input has requires_grad=True")
    for i in wrt:
        if inputs[i].dtype != _C.dtype.float64:
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs (x.double()) — "
                            "finite differences in float32 are too inaccurate")

    outputs = _outputs(fn, inputs)
    for k in range(len(outputs)):
        # A fresh graph per later output: perturbing a cuda input for the previous
        # output wrote into its memory, which the old graph would (rightly) refuse.
        out = (outputs if k == 0 else _outputs(fn, inputs))[k]
        out_np = out.detach().cpu().numpy().reshape(-1)
        # Analytic: one backward per output element, with a one-hot gradient.
        analytic = {i: np.zeros((out_np.size, inputs[i].numel())) for i in wrt}
        if out.requires_grad:
            for j in range(out_np.size):
                onehot = np.zeros(out_np.size)
                onehot[j] = 1.0
                g = _C._from_numpy_copy(onehot.reshape(tuple(out.shape)), out.dtype, out.device)
                grads = autograd.grad(out, [inputs[i] for i in wrt], grad_outputs=g, retain_graph=True,
                                      allow_unused=True)
                for i, gi in zip(wrt, grads):
                    if gi is not None:
                        analytic[i][j] = gi.cpu().numpy().reshape(-1)
        # Numerical: nudge each input element both ways, in the input's own memory.
        for i in wrt:
            numerical = np.zeros_like(analytic[i])
            arr, write_back = _perturbable(inputs[i])
            for e in range(arr.size):
                orig = arr.flat[e]
                arr.flat[e] = orig + eps
                write_back()
                plus = _output_values(fn, inputs, k)
                arr.flat[e] = orig - eps
                write_back()
                minus = _output_values(fn, inputs, k)
                arr.flat[e] = orig
                write_back()
                numerical[:, e] = (plus - minus) / (2 * eps)
            bad = np.abs(analytic[i] - numerical) > atol + rtol * np.abs(numerical)
            if bad.any():
                err = np.where(bad, np.abs(analytic[i] - numerical), -1.0)
                j, e = np.unravel_index(int(np.argmax(err)), err.shape)
                message = (
                    f"gradcheck: Jacobian mismatch for output {k} with respect to input {i} "
                    f"({int(bad.sum())} of {bad.size} elements differ); worst at output element {j}, "
                    f"input element {e}: analytic {analytic[i][j, e]:.6g}, numerical {numerical[j, e]:.6g}"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True
