"""``nn.Parameter``: a tensor that a Module registers as learnable."""
from __future__ import annotations

from .. import _C


class Parameter(_C.Tensor):
    """A leaf tensor with ``requires_grad=True`` that shares memory with ``data``.

    Assigning one to a Module attribute registers it, so it shows up in
    ``parameters()`` and ``state_dict()``.
    """

    def __init__(self, data=None, requires_grad: bool = True):
        if data is None:
            data = _C._empty((0,), None, None)
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Parameter: data must be a Tensor, got {type(data).__name__}")
        super().__init__(data, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    def __deepcopy__(self, memo):
        """``copy.deepcopy``: a new Parameter with copied values (and ``.grad``), as PyTorch's."""
        if id(self) in memo:
            return memo[id(self)]
        new = type(self)(_C.Tensor.__deepcopy__(self.detach(), {}), self.requires_grad)
        grad = self.grad
        if grad is not None:
            # A fresh memo: ``.grad`` is a temporary object, and its id() may be reused by the
            # ``.grad`` of a parameter copied later (which would then receive this copy).
            new.grad = _C.Tensor.__deepcopy__(grad, {})
        memo[id(self)] = new
        memo.setdefault(id(memo), []).append(self)  # keep the key alive while the memo lives, as copy does
        return new
