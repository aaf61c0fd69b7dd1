"""``minitorch.amp``: automatic mixed precision. ``GradScaler`` scales the loss so that small
gradients survive a low-precision backward, then unscales the gradients, skips the steps
whose gradients overflowed and adapts the scale (docs/precision.md)."""
from .grad_scaler import GradScaler  # noqa: F401
