"""``minitorch.amp``: automatic mixed precision. ``autocast`` runs each op in the precision
that suits it (docs/precision.md); ``GradScaler`` scales the loss so that small gradients
survive a low-precision backward, then unscales the gradients, skips the steps whose
gradients overflowed and adapts the scale."""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
