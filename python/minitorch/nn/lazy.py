"""Lazy modules: layers whose input size is read off their first input (``nn.LazyLinear``,
``nn.LazyConv1d``, ``nn.LazyConv2d``, ``nn.LazyConv3d``), as PyTorch's ``LazyModuleMixin`` does.

Such a module holds :class:`UninitializedParameter` objects until its first call. A forward
pre-hook, registered first, then calls ``initialize_parameters(*inputs)``: it materializes
the parameters at their real shapes and initialises them as the eager layer would. The hook
removes itself and the module's class becomes ``cls_to_become`` (``LazyLinear`` ->
``Linear``), so from then on it is an ordinary layer in every way (repr, state_dict, type).

Before that, ``state_dict()`` holds the uninitialized parameters themselves, and
``load_state_dict`` of real tensors materializes them at the checkpoint's shapes (the class
changes at the next call, as in PyTorch).
"""
from __future__ import annotations

from .. import _C
from .module import _load_error
from .parameter import UninitializedParameter


def is_lazy(value) -> bool:
    """True for an :class:`UninitializedParameter` (a value whose shape is not known yet)."""
    return isinstance(value, UninitializedParameter)


def _infer_parameters(module, args) -> None:
    """The forward pre-hook of a lazy module: initialize, check, stop being lazy."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    # Found by identity rather than through a handle, so that a deep copy drops its own hook.
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for key in [k for k, hook in hooks.items() if hook is _infer_parameters]:
        del hooks[key]
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Put first among the bases of a layer (``class LazyLinear(LazyModuleMixin, Linear)``).
    The layer's ``__init__`` calls ``_make_lazy`` (its weight and bias become
    ``UninitializedParameter()``) and it defines ``_read_input_size(input)`` (set the size
    attribute, ``in_features``..., from the first input), ``_lazy_shape(name)`` (a parameter's
    shape, None where the input decides while it is unknown) and ``_sizes_from_parameters()``
    (set the size attribute from materialized parameters); ``_lazy_size`` names that
    attribute, 0 while the input size is unknown."""

    cls_to_become = None
    _lazy_size = ""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_forward_pre_hook(_infer_parameters)

    def _make_lazy(self, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(v) for v in list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, input, *args) -> None:
        """Reads the sizes off ``input``, materializes the parameters and initialises them as
        the eager layer does (a no-op once they are initialized)."""
        if not self.has_uninitialized_params():
            return
        if not isinstance(input, _C.Tensor):
            raise TypeError(f"{type(self).__name__}: expected a Tensor input, got {type(input).__name__}")
        self._read_input_size(input)
        for name, p in self._parameters.items():
            if is_lazy(p):
                p.materialize(self._lazy_shape(name))
        self.reset_parameters()

    def _read_input_size(self, input) -> None:
        raise NotImplementedError(f"_read_input_size is not implemented for {type(self).__name__}")

    def _lazy_shape(self, name: str) -> tuple:
        raise NotImplementedError(f"_lazy_shape is not implemented for {type(self).__name__}")

    def _sizes_from_parameters(self) -> None:
        raise NotImplementedError(f"_sizes_from_parameters is not implemented for {type(self).__name__}")

    def reset_parameters(self) -> None:
        # The eager layer's initialisation, once there is something to initialise.
        if not self.has_uninitialized_params() and getattr(self, self._lazy_size) != 0:
            super().reset_parameters()

    def _save_to_state_dict(self, destination, prefix: str) -> None:
        super()._save_to_state_dict(destination, prefix)
        for key, v in list(self._parameters.items()) + list(self._buffers.items()):
            if is_lazy(v):  # the parameter itself (PyTorch's), not an empty detached tensor
                destination[prefix + key] = v

    def _load_from_state_dict(self, state_dict, prefix: str, error_msgs: list) -> None:
        for key, mine in list(self._parameters.items()) + list(self._buffers.items()):
            name = prefix + key
            if mine is None or name not in state_dict:
                continue
            value = state_dict[name]
            if is_lazy(value) and is_lazy(mine):
                continue
            if is_lazy(mine) and isinstance(value, _C.Tensor):
                want = self._lazy_shape(key)
                if value.dim() != len(want) or any(w not in (None, s) for w, s in zip(want, value.shape)):
                    error_msgs.append(f"size mismatch for {name}: copying a param with shape {tuple(value.shape)} "
                                      f"from checkpoint, the shape in current model is "
                                      f"({', '.join('?' if w is None else str(w) for w in want)}) (?: any size).")
                    continue
                mine.materialize(value.shape)
            error = _load_error(name, value, mine)
            if error:
                error_msgs.append(error)
            else:
                mine.copy_(value.to(mine.device))
        if not self.has_uninitialized_params():
            self._sizes_from_parameters()
