"""``minitorch.ao`` (``torch.ao``, "architecture optimization"): quantization workflows and
their modules."""
from . import quantization  # noqa: F401  (first: the modules of ao.nn import its observers)
from . import nn  # noqa: F401,E402
