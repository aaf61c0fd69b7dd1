"""``minitorch.ao`` (``torch.ao``, "architecture optimization"): quantization workflows and
their modules."""
from . import nn  # noqa: F401
