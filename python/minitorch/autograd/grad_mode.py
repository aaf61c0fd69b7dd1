"""Switching gradient recording off and on: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

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
