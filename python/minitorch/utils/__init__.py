"""``minitorch.utils``: tools around models (``summary``, ``roofline``), and ``minitorch.utils.data``
(PyTorch's path to ``DataLoader``, ``Dataset``...: the same objects as ``minitorch.data``)."""
from . import checkpoint, data, dlpack, memory, roofline
from .summary import LayerInfo, Summary, summary

__all__ = ["LayerInfo", "Summary", "summary"]
