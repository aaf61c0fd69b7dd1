"""``minitorch.compile``: PyTorch's ``torch.compile`` signature, and no compiler.

PyTorch's compiler traces a model's Python code into a graph (TorchDynamo) and generates
fused kernels for it (TorchInductor). minitorch runs every op eagerly, one kernel after
another, as written: there is nothing to compile. ``minitorch.compile`` exists so that
programs written for PyTorch 2 run unchanged; it checks its arguments the way PyTorch does
and returns the model or function itself, which then runs exactly as before.
"""
from __future__ import annotations

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, name=None, disable: bool = False):
    """Returns ``model`` (a module or a function) unchanged: minitorch has no compiler, every
    op runs eagerly. Without ``model``, a decorator that does the same
    (``@minitorch.compile(mode="max-autotune")``). The keyword arguments are PyTorch's and
    are checked as PyTorch checks them, then ignored.

    >>> step = minitorch.compile(lambda x: x * 2)
    >>> step(minitorch.tensor([1.0])).tolist()
    [2.0]
    """
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, but both can't be specified at the "
                           "same time")
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode {mode!r}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if not (isinstance(backend, str) or callable(backend)):
        raise TypeError(f"compile(): backend must be a string or a callable, not {type(backend).__name__}")
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable)
        return decorate
    if not callable(model):
        raise RuntimeError(f"compile: model must be a callable (a module or a function), got "
                           f"{type(model).__name__}")
    return model
