"""Custom autograd functions written in Python — the exercise students write most.

    class MySigmoid(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            s = 1 / (1 + (-x).exp())
            ctx.save_for_backward(s)
            return s

        @staticmethod
        def backward(ctx, grad):
            (s,) = ctx.saved_tensors
            return grad * s * (1 - s)

    y = MySigmoid.apply(x)      # mixes freely with built-in ops

``forward`` runs with recording off; ``apply`` then records one graph node whose
backward calls yours (from the C++ engine). ``backward`` returns one gradient per
argument of ``forward`` (``None`` for arguments that need none).
"""
from __future__ import annotations

from .. import _C
from .._tensor_str import _shape_str


class FunctionCtx:
    """What ``forward`` can leave for ``backward``."""

    def __init__(self):
        self._saved = None
        self._versions: tuple = ()
        self._released = False
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        """Keeps tensors for backward (freed after backward unless ``retain_graph``)."""
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), got {type(t).__name__}")
        # Detached aliases: saving an output with its grad_fn would make a reference cycle.
        self._saved = tuple(None if t is None else t.detach() for t in tensors)
        # Versions now, to catch an in-place change before backward (as built-in ops do).
        self._versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed); specify retain_graph=True if you need to"
            )
        for t, v in zip(self._saved or (), self._versions):
            if t is not None and t._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.dtype} of shape {_shape_str(t.shape)}], saved by save_for_backward, is at "
                    f"version {t._version}; expected version {v} instead"
                )
        return self._saved or ()

    def _release(self) -> None:
        self._saved = None
        self._released = True


class Function:
    """Base class for custom differentiable operations (see the module docstring)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("subclasses of Function must implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("subclasses of Function must implement backward(ctx, ...)")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        with_grad = _C.is_grad_enabled() and any(ctx.needs_input_grad)
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            result = cls.forward(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
        if not with_grad:
            return result

        outputs = result if isinstance(result, tuple) else (result,)
        for i, out in enumerate(outputs):
            if not isinstance(out, _C.Tensor):
                raise TypeError(f"{cls.__name__}.forward must return a Tensor or a tuple of Tensors, "
                                f"but output {i} is {type(out).__name__}")
        # An output that is an input (or a view of one) would rewrite the input's history.
        outputs = tuple(out.detach() if any(out is a for a in args) else out for out in outputs)
        tensor_pos = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        inputs = [args[i] for i in tensor_pos]
        name = f"{cls.__name__}Backward"

        def run_backward(grads):
            got = cls.backward(ctx, *grads)
            got = got if isinstance(got, tuple) else (got,)
            if len(got) != len(args):
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected {len(args)}, got {len(got)})"
                )
            result = []
            for i in tensor_pos:
                g, a = got[i], args[i]
                if g is not None:
                    if not isinstance(g, _C.Tensor):
                        raise TypeError(f"function {name} returned a {type(g).__name__} as gradient {i}; expected a Tensor or None")
                    if tuple(g.shape) != tuple(a.shape):
                        raise RuntimeError(
                            f"function {name} returned an invalid gradient at index {i} - got shape "
                            f"{_shape_str(g.shape)} but expected shape {_shape_str(a.shape)}"
                        )
                    if g.device != a.device:
                        raise RuntimeError(
                            f"function {name} returned an invalid gradient at index {i} - expected device "
                            f"{a.device} but got {g.device}"
                        )
                    if g.dtype != a.dtype:
                        g = g.to(a.dtype)
                result.append(g if a.requires_grad else None)
            return result

        _C._record_function(run_backward, ctx._release, name, inputs, list(outputs))
        return outputs if isinstance(result, tuple) else outputs[0]
