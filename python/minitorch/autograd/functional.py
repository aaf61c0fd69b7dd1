"""``minitorch.autograd.functional``: derivatives of a whole function, PyTorch's names:
``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``.

Everything here is reverse mode, built on :func:`minitorch.autograd.grad`:

- a vector-Jacobian product v^T J is one backward pass with ``grad_outputs=v``;
- a Jacobian is one such pass per output element (v = each one-hot row in turn);
- a Jacobian-vector product J u comes from the "double-backward trick": g(w) = w^T J is
  linear in w, so differentiating g(w) . u with respect to w gives J u (two passes, the
  first with ``create_graph``);
- a Hessian is the Jacobian of the gradient (the gradient built with ``create_graph``).

``func`` takes the inputs (a tensor, or a tuple of tensors) and returns a tensor or a tuple
of tensors. The results are not part of any graph unless ``create_graph=True``. An output
that does not depend on an input gives zeros, or with ``strict=True`` a RuntimeError.
"""
from __future__ import annotations

from .. import _C
from ..ops.join import stack
from .grad_mode import enable_grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _as_tuple(value, what: str, fn: str) -> tuple[tuple, bool]:
    """(value as a tuple of tensors, whether it was one already)."""
    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, _C.Tensor):
            where = f"at index {i} " if is_tuple else ""
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the value "
                            f"{where}has type {type(t).__name__}.")
    return items, is_tuple


def _prepare_inputs(inputs, create_graph: bool) -> tuple:
    """Leaves to differentiate with respect to: detached copies (views of the same values) that
    require grad; with create_graph the originals' graph is kept (the results stay
    differentiable in them)."""
    out = []
    for t in inputs:
        x = t.view_as(t) if create_graph and t.requires_grad else t.detach()
        out.append(x.requires_grad_() if x.is_leaf or not x.requires_grad else x)
    return tuple(out)


def _call(func, inputs: tuple, is_tuple: bool, fn: str) -> tuple[tuple, bool]:
    with enable_grad():
        outputs = func(*inputs) if is_tuple else func(inputs[0])
    return _as_tuple(outputs, "outputs of the user-provided function", fn)


def _grads(outputs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool, strict: bool, fn: str) -> tuple:
    """d(sum of outputs . grad_outputs)/d(inputs), zeros where an input is not used."""
    from . import grad
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not live:
        got = (None,) * len(inputs)
    else:
        got = grad([o for o, _ in live], list(inputs), [g for _, g in live], retain_graph=True,
                   create_graph=create_graph, allow_unused=True)
    result = []
    for i, (g, x) in enumerate(zip(got, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   "not allowed in strict mode.")
            g = _C._full(tuple(x.shape), 0.0, x.dtype, x.device)
        result.append(g if create_graph else g.detach())
    return tuple(result)


def _check_v(v, like: tuple, what: str, fn: str) -> tuple:
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} to the user-provided function is a "
                               "single Tensor with a single element.")
        return (_C._full(tuple(like[0].shape), 1.0, like[0].dtype, like[0].device),)
    vs, _ = _as_tuple(v, "v", fn)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, like)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {tuple(b.shape)} but got "
                               f"{tuple(a.shape)}.")
    return vs


def _shape_result(values, out_tuple: bool, in_tuple: bool):
    """values[i][j] (output i, input j) in PyTorch's nesting: tensors unwrapped where the
    function took / returned a single tensor."""
    rows = [tuple(r) if in_tuple else r[0] for r in values]
    return tuple(rows) if out_tuple else rows[0]


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product for ``v`` shaped like the outputs
    (None for a single-element output)."""
    inputs, in_tuple = _as_tuple(inputs, "inputs", "vjp")
    inputs = _prepare_inputs(inputs, create_graph)
    outputs, out_tuple = _call(func, inputs, in_tuple, "vjp")
    vs = _check_v(v, outputs, "outputs", "vjp")
    res = _grads(outputs, inputs, vs, create_graph, strict, "vjp")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return (outs if out_tuple else outs[0]), (res if in_tuple else res[0])


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product for ``v`` shaped like the inputs
    (None for a single-element input), by the double-backward trick."""
    inputs, in_tuple = _as_tuple(inputs, "inputs", "jvp")
    inputs = _prepare_inputs(inputs, create_graph)
    vs = _check_v(v, inputs, "input", "jvp")
    outputs, out_tuple = _call(func, inputs, in_tuple, "jvp")
    # w^T J with w a free variable (create_graph: it is linear in w), then its gradient along v
    ws = tuple(_C._full(tuple(o.shape), 0.0, o.dtype, o.device).requires_grad_() for o in outputs)
    with enable_grad():
        wj = _grads(outputs, inputs, ws, True, strict, "jvp")
    res = _grads(wj, ws, vs, create_graph, strict, "jvp")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return (outs if out_tuple else outs[0]), (res if out_tuple else res[0])


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for one output and one input a tensor of shape
    ``output.shape + input.shape``; tuples of them (nested output-major) otherwise. One
    backward pass per output element (``vectorize`` and ``strategy`` are accepted; minitorch
    always takes reverse mode, one row at a time)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError('jacobian: `strategy="forward-mode"` is only implemented for `vectorize=True`.')
    inputs, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    inputs = _prepare_inputs(inputs, create_graph)
    outputs, out_tuple = _call(func, inputs, in_tuple, "jacobian")
    blocks = []
    for o in outputs:
        rows = [[] for _ in inputs]
        flat = o.reshape(-1)
        for k in range(flat.numel()):
            onehot = _C._full((flat.numel(),), 0.0, o.dtype, o.device)
            onehot[k] = 1.0
            for j, g in enumerate(_grads((o,), inputs, (onehot.reshape(tuple(o.shape)),), create_graph, strict,
                                         "jacobian")):
                rows[j].append(g)
        block = []
        for j, x in enumerate(inputs):
            shape = tuple(o.shape) + tuple(x.shape)
            if rows[j]:
                block.append(stack(rows[j], 0).reshape(shape))
            else:  # an empty output
                block.append(_C._full(shape, 0.0, x.dtype, x.device))
        blocks.append(block)
    return _shape_result(blocks, out_tuple, in_tuple)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: ``input.shape + input.shape`` for one
    input, a tuple of tuples (input i, input j) for several."""
    inputs, in_tuple = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out, _ = _call(func, xs, in_tuple, "hessian")
        if len(out) != 1 or out[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element")
        g = _grads(out, xs, (_C._full(tuple(out[0].shape), 1.0, out[0].dtype, out[0].device),), True, strict,
                   "hessian")
        return g if in_tuple else g[0]

    return jacobian(gradient, inputs if in_tuple else inputs[0], create_graph=create_graph, strict=strict,
                    strategy=outer_jacobian_strategy)


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar ``func``."""
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar ``func`` (H is symmetric, so the same as vhp)."""
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(fn: str, func, inputs, v, create_graph: bool, strict: bool):
    inputs, in_tuple = _as_tuple(inputs, "inputs", fn)
    inputs = _prepare_inputs(inputs, create_graph)
    vs = _check_v(v, inputs, "input", fn)
    outputs, _ = _call(func, inputs, in_tuple, fn)
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor with a single element")
    out = outputs[0]
    with enable_grad():
        g = _grads(outputs, inputs, (_C._full(tuple(out.shape), 1.0, out.dtype, out.device),), True, strict, fn)
    res = _grads(g, inputs, vs, create_graph, strict, fn)
    return (out if create_graph else out.detach()), (res if in_tuple else res[0])
