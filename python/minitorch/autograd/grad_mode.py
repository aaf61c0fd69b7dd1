"""Switching gradient recording off and on: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``.

Each works as a context manager and as a decorator, as in PyTorch::

    with minitorch.no_grad():
        w -= lr * w.grad          # an update that must not be recorded

    @minitorch.no_grad()
    def evaluate(model, x): ...
"""
from __future__ import annotations

import functools

from .. import _C


class _GradMode:
    """Base: sets grad mode to ``self.mode`` inside, restores the previous mode after."""

    mode = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _C.is_grad_enabled()
            _C._set_grad_enabled(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _C._set_grad_enabled(prev)

        return wrapper


class no_grad(_GradMode):  # noqa: N801  (PyTorch's name)
    """Ops inside record no graph: results have ``requires_grad=False``."""

    mode = False


class enable_grad(_GradMode):  # noqa: N801
    """Turns recording back on inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """``set_grad_enabled(False)`` acts at once (like PyTorch), and also works with ``with``."""

    def __init__(self, mode: bool):
        self._prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)  # as a decorator it acts only inside fn
        return super().__call__(fn)


def is_grad_enabled() -> bool:
    """True when ops record gradients (the default)."""
    return _C.is_grad_enabled()


_inference_mode = [False]  # whether an inference_mode(True) block is active (is_inference_mode_enabled)


class inference_mode(_GradMode):  # noqa: N801
    """``inference_mode()`` (or ``inference_mode(True)``): ops inside record no graph, as
    under ``no_grad``; ``inference_mode(False)`` turns recording on and inference mode off
    (PyTorch's ``InferenceMode(false)`` sets grad mode to ``not mode`` too). A context
    manager and a decorator, with or without the parentheses (``@minitorch.inference_mode``).

    Unlike PyTorch, tensors made inside are ordinary tensors: minitorch keeps no inference
    flag on a tensor (``Tensor.is_inference()`` is always False), so using them later in
    autograd is not refused. This is ``no_grad`` plus ``is_inference_mode_enabled()``.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        if not callable(mode):
            raise TypeError(f"inference_mode(): argument 'mode' must be a bool, not {type(mode).__name__}")
        return cls()(mode)  # @inference_mode without parentheses

    def __init__(self, mode: bool = True):
        self.mode = not mode   # the grad mode inside
        self.inference = mode

    def __enter__(self):
        self._prev_inference = _inference_mode[0]
        _inference_mode[0] = self.inference
        return super().__enter__()

    def __exit__(self, *exc):
        _inference_mode[0] = self._prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        inference = self.inference

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(inference):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode()`` block (and not inside an ``inference_mode(False)``
    nested in it)."""
    return _inference_mode[0]
