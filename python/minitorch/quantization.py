"""``minitorch.quantization`` is ``minitorch.ao.quantization`` (PyTorch keeps the old name
``torch.quantization`` for ``torch.ao.quantization``): importing it gives that module."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("minitorch.ao.quantization")
