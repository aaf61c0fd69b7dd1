"""``minitorch.ao.nn`` (``torch.ao.nn``): the modules of the quantization workflows."""
from . import intrinsic  # noqa: F401
