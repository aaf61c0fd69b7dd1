"""``nn.Parameter``: a tensor that a Module registers as learnable; and
``nn.UninitializedParameter``, a parameter whose shape is not known yet (the lazy modules')."""
from __future__ import annotations

from .. import _C
from ..autograd import no_grad


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

    __str__ = __repr__  # print(p) says so too, as PyTorch's

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


class UninitializedParameter(Parameter):
    """A parameter with no shape yet: what a lazy module (``nn.LazyLinear``...) holds until its
    first input tells it the sizes. ``materialize(shape)`` gives it memory of that shape (not
    initialised) and makes it a plain :class:`Parameter`, the same object, so an optimizer
    that already holds it keeps working. Until then its shape cannot be read.

    >>> w = nn.UninitializedParameter()
    >>> w.materialize((2, 3))
    >>> type(w).__name__, tuple(w.shape)
    ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        super().__init__(_C._empty((0,), dtype, device), requires_grad)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Allocates ``shape`` (on ``device``, of ``dtype``: by default the ones it was made
        with) and turns this object into a ``Parameter``."""
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        with no_grad():
            self.data = _C._empty(shape, self.dtype if dtype is None else dtype,
                                  self.device if device is None else device)
        self.__class__ = self.cls_to_become

    def _no_shape(self, *args, **kwargs):
        raise RuntimeError("Can't access the shape of an uninitialized parameter. This error usually happens in "
                           "`load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    shape = property(_no_shape)
    size = numel = dim = _no_shape

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]
