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
argument of ``forward`` (``None`` for arguments that need none). The node keeps the
tensors given to ``save_for_backward`` exactly as built-in ops keep theirs, so the same
engine checks apply (a second backward, an in-place change before backward).
"""
from __future__ import annotations

from .. import _C
from .._tensor_str import _shape_str


class FunctionCtx:
    """What ``forward`` can leave for ``backward``."""

    def __init__(self):
        self._to_save: tuple = ()
        # Set by Function.apply: reads the saved tensors from the C++ node, which it
        # holds weakly (the node owns this ctx through its backward; see PyNode).
        self._read_saved = None
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        """Keeps tensors for backward (freed after backward unless ``retain_graph``)."""
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), got {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._read_saved is None:  # no graph recorded (forward called directly)
            return self._to_save
        return self._read_saved()


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
        profiled = _C._profiler_begin(cls.__name__)  # one minitorch.profiler event per call
        try:
            result = cls.forward(ctx, *args)
        finally:
            _C._profiler_end(profiled)
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
        # backward checks gradients against these; it does not keep the inputs alive.
        metas = [(i, tuple(args[i].shape), args[i].device, args[i].dtype, args[i].requires_grad) for i in tensor_pos]
        n_args = len(args)
        name = f"{cls.__name__}Backward"

        def run_backward(grads):
            got = cls.backward(ctx, *grads)
            got = got if isinstance(got, tuple) else (got,)
            if len(got) != n_args:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected {n_args}, got {len(got)})"
                )
            result = []
            for i, shape, device, dtype, needed in metas:
                g = got[i]
                if g is not None:
                    if not isinstance(g, _C.Tensor):
                        raise TypeError(f"function {name} returned a {type(g).__name__} as gradient {i}; expected a Tensor or None")
                    if tuple(g.shape) != shape:
                        raise RuntimeError(
                            f"function {name} returned an invalid gradient at index {i} - got shape "
                            f"{_shape_str(g.shape)} but expected shape {_shape_str(shape)}"
                        )
                    if g.device != device:
                        raise RuntimeError(
                            f"function {name} returned an invalid gradient at index {i} - expected device "
                            f"{device} but got {g.device}"
                        )
                    if g.dtype != dtype:
                        g = g.to(dtype)
                result.append(g if needed else None)
            return result

        # The node saves ctx's tensors; ctx must not keep them (an output would lead back to the node).
        ctx._read_saved = _C._record_function(run_backward, name, inputs, list(outputs), list(ctx._to_save))
        ctx._to_save = ()
        return outputs if isinstance(result, tuple) else outputs[0]
