"""``minitorch.utils.checkpoint``: trade compute for memory (activation checkpointing).

A checkpointed piece of a model keeps none of its intermediate activations for backward;
backward runs the piece's forward again to get them. The random numbers of the first run
are replayed (``preserve_rng_state``), so dropout draws the same mask both times and the
gradients equal those of the plain run.

Two implementations, as in PyTorch:
- ``use_reentrant=False`` (the default here, and PyTorch's recommendation): forward runs
  normally under ``saved_tensors_hooks`` whose pack hook drops each saved tensor, keeping
  only its position; the first unpack in backward recomputes the piece once (with grad,
  under hooks that collect what it saves) and hands out the tensors by position.
- ``use_reentrant=True``: forward runs under ``no_grad`` inside one custom Function; its
  backward recomputes the piece with grad and runs a nested backward through it.

The replayed random numbers are the CPU generator's; a piece that draws random numbers
on another device gets fresh ones in the recomputation.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable

from .. import _C
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
from ..autograd.grad_mode import enable_grad, no_grad


def _rng_state():
    """The state of every generator a forward can draw from: the CPU's and, where there is
    a CUDA backend (GPU or emulator), cuda's (its seed and offset; None without one)."""
    return _C._cpu_rng_state(), _C._cuda_rng_state()


def _set_rng_state(state) -> None:
    cpu, cuda = state
    _C._set_cpu_rng_state(cpu)
    if cuda is not None:
        _C._cuda_set_rng_state(*cuda)


@contextlib.contextmanager
def _replayed_rng(state):
    """Runs the body with the generators at `state` (None: as they are), then puts them back."""
    if state is None:
        yield
        return
    now = _rng_state()
    _set_rng_state(state)
    try:
        yield
    finally:
        _set_rng_state(now)


def _detached_like(args):
    # Fresh leaves with the arguments' values: the recomputation's graph ends at them.
    return tuple(a.detach().requires_grad_(a.requires_grad) if isinstance(a, _C.Tensor) else a for a in args)


def _checkpoint_hooks(function, args, kwargs, preserve_rng_state):
    rng = _rng_state() if preserve_rng_state else None
    recomputed: list = []
    state = {"count": 0, "done": False}

    def pack(_tensor):
        # Drop the tensor; remember only which save this was.
        position = state["count"]
        state["count"] += 1
        return position

    def recompute():
        collected = []

        def keep(t):
            collected.append(t)
            return None

        with _replayed_rng(rng), enable_grad(), saved_tensors_hooks(keep, lambda _: None):
            function(*_detached_like(args), **kwargs)
        if len(collected) != state["count"]:
            raise RuntimeError(
                "checkpoint: the recomputation saved a different number of tensors for backward "
                f"({len(collected)}) than the forward pass did ({state['count']}); the checkpointed function "
                "must run the same ops each time")
        recomputed[:] = collected
        state["done"] = True

    def unpack(position):
        if not state["done"]:
            recompute()
        return recomputed[position]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


class _CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _rng_state() if preserve_rng_state else None
        ctx.args = [None if isinstance(a, _C.Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, _C.Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import backward as autograd_backward

        saved = iter(ctx.saved_tensors)
        args = [next(saved) if a is None else a for a in ctx.args]
        inputs = _detached_like(args)
        with _replayed_rng(ctx.rng), enable_grad():
            outputs = ctx.run_function(*inputs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, _C.Tensor) and o.requires_grad
                 and g is not None]
        if not pairs:
            raise RuntimeError("checkpoint: none of the outputs requires grad, so there is nothing to backward "
                               "through (with use_reentrant=True at least one input must require grad)")
        autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, _C.Tensor) else None for a in inputs)


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True,
               **kwargs) -> Any:
    """Runs ``function(*args, **kwargs)`` without keeping its intermediate activations;
    backward recomputes them (see the module docstring).

    >>> y = checkpoint(block, x, use_reentrant=False)   # block's activations are not kept
    >>> y.sum().backward()                              # block runs again here
    """
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn is not supported")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_hooks(function, args, kwargs, preserve_rng_state)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Splits ``functions`` (an ``nn.Sequential`` or a list of modules/functions) into
    ``segments`` pieces and checkpoints every piece but the last, which runs normally
    (backward starts there, so keeping its activations costs nothing extra)."""
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be at least 1, got {segments}")
    size = max(len(functions) // segments, 1)

    def run(start, end):
        def piece(x):
            for f in functions[start:end]:
                x = f(x)
            return x
        return piece

    last = 0
    for start in range(0, size * (segments - 1), size):
        last = min(start + size, len(functions))
        input = checkpoint(run(start, last), input, use_reentrant=use_reentrant, **kwargs)
    return run(last, len(functions))(input)


__all__ = ["checkpoint", "checkpoint_sequential"]
