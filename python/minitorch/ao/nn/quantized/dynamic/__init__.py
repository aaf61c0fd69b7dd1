"""``minitorch.ao.nn.quantized.dynamic``: modules with int8 weights whose activations are
quantized per batch at run time (float in, float out); made by ``quantize_dynamic``."""
from .linear import Linear  # noqa: F401
from .rnn import LSTM  # noqa: F401

__all__ = ["Linear", "LSTM"]
