"""``minitorch.ao.nn`` (``torch.ao.nn``): the modules of the quantization workflows: fused float
modules (``intrinsic``), QAT modules (``qat``, ``intrinsic.qat``), quantized modules
(``quantized``, ``quantized.dynamic``, ``intrinsic.quantized``)."""
from . import intrinsic, qat, quantized  # noqa: F401
