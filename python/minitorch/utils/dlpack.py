"""``minitorch.utils.dlpack``: PyTorch's ``torch.utils.dlpack`` names (``to_dlpack``,
``from_dlpack``) for exchanging tensors with other libraries through DLPack capsules."""
from .._dlpack import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
