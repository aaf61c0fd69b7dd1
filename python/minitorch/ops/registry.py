"""What the op declarations (``declarations.py``) make: the Python ops' methods and functions,
the in-place forms (and torch's in-place functions, ``minitorch.exp_``), the aliases and
autocast's op lists. ``install_python_ops`` runs early in
``import minitorch``; ``install`` at its end, when every op the forms refer to exists.
"""
from __future__ import annotations

import importlib
import inspect

from .. import _C
from .._C import Tensor
from ._args import check_input
from .declarations import FP32_ALL, FUNCTIONAL, GENERIC, INPLACE_FUNCTIONS, MINITORCH, NATIVE, OPS, Op


def install_python_ops(module) -> None:
    """Makes ``Tensor.<name>`` and ``minitorch.<name>`` of the ops declared with
    ``python="<module>"``, from the function of that name in ``minitorch.ops.<module>``:

    - it takes the tensor first: ``Tensor.<name>`` is the function, and ``minitorch.<name>``
      calls it after checking that its first argument is a Tensor (``function_from_method``);
    - its method is C++ (``cpp_method``) or it has none: ``minitorch.<name>`` is the function;
    - its function is C++ (``cpp_function``: ``where``, whose condition comes first): the
      module's function is ``Tensor.<name>`` only;
    - declared ``inplace=NATIVE`` with a ``<name>_`` function in the module (lerp_, addcmul_):
      ``Tensor.<name>_`` is that function;
    - its ``operators`` that the module defines as functions of those names (``__lshift__`` in
      ops/integer_math.py) are those operators of Tensor.

    An op with both forms, no Python function and no ``_C.<name>`` (``clone``, ``permute``...)
    gets ``minitorch.<name>`` from its method the same way."""
    for op in OPS:
        if op.namespace != MINITORCH:
            continue
        if op.python:
            impl = getattr(impl_module(op), op.name)
            own_inplace = getattr(impl_module(op), op.name + "_", None)
            if op.method and op.inplace == NATIVE and own_inplace is not None:  # lerp_, clamp_: one kernel
                setattr(module.Tensor, op.name + "_", own_inplace)
            if op.method and not op.cpp_method:
                setattr(module.Tensor, op.name, impl)
                for operator in op.operators:
                    if hasattr(impl_module(op), operator):
                        setattr(module.Tensor, operator, getattr(impl_module(op), operator))
                impl = function_from_method(op.name)
            if op.function and not op.cpp_function:
                setattr(module, op.name, impl)
        elif op.function and op.method and not hasattr(_C, op.name):
            setattr(module, op.name, function_from_method(op.name))


def impl_module(op: Op):
    """The module of minitorch.ops that holds the Python functions of ``op`` (``python=``)."""
    return importlib.import_module(f"{__package__}.{op.python}")


def function_from_method(name: str):
    """``minitorch.<name>(input, *args, **kwargs)``, calling ``input.<name>(*args, **kwargs)``
    once ``input`` is checked to be a Tensor; it carries the method's docstring."""
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):
        check_input(input, name)
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__
    try:  # methods written in Python have a signature to show in help(); C++ ones do not
        sig = inspect.signature(method)
        params = list(sig.parameters.values())
        function.__signature__ = sig.replace(parameters=[params[0].replace(name="input"), *params[1:]])
    except (TypeError, ValueError):
        pass
    return function


def generic_inplace_ops() -> tuple[str, ...]:
    """Ops whose ``Tensor.<name>_`` computes ``<name>`` and writes it back (ops/inplace.py)."""
    return tuple(op.name for op in OPS if op.namespace == MINITORCH and op.inplace == GENERIC)


def function_aliases() -> dict[str, str]:
    """alias -> op, for ``minitorch.<alias>`` (the op's function form)."""
    return {a: op.name for op in OPS if op.namespace == MINITORCH and op.function for a in op.aliases}


def method_aliases() -> dict[str, str]:
    """alias -> op, for ``Tensor.<alias>``: the aliases of ops with a method, the method-only
    ones (``nelement``), and the in-place form of each alias of an op that has one (``clip_``)."""
    out = {}
    for op in OPS:
        if op.namespace != MINITORCH or not op.method:
            continue
        for a in (*op.aliases, *op.method_aliases):
            out[a] = op.name
        if op.inplace:
            for a in op.aliases:
                out[a + "_"] = op.name + "_"
    return out


def autocast_lists() -> list[tuple[str, str, str, bool]]:
    """(owner, name, policy, also on the CPU) for every form of every op with an autocast
    policy; owner is "minitorch", "Tensor" or "nn.functional"."""
    out = []
    for op in OPS:
        if op.autocast is None:
            continue
        policy = "fp32" if op.autocast == FP32_ALL else op.autocast
        cpu_too = op.autocast != "fp32"  # FP32 holds on "cuda" only, as in PyTorch
        if op.namespace == FUNCTIONAL:
            out.append((FUNCTIONAL, op.name, policy, cpu_too))
            continue
        if op.function:
            out.append((MINITORCH, op.name, policy, cpu_too))
        if op.method:
            out += [("Tensor", name, policy, cpu_too) for name in (op.name, *op.operators)]
    return out


def inplace_functions() -> dict[str, str]:
    """``minitorch.<name>_`` -> the op whose in-place form (or alias's) it is: PyTorch's
    in-place functions (``torch.exp_(x)``, declarations.INPLACE_FUNCTIONS); ``fill_``,
    ``zero_`` and ``detach_`` are their own ops."""
    owners = {}
    for op in OPS:
        if op.namespace != MINITORCH or not op.method:
            continue
        owners[op.name] = op.name
        if op.inplace:
            owners.update({name + "_": op.name for name in (op.name, *op.aliases)})
    return {name: owners[name] for name in INPLACE_FUNCTIONS}


def install(module) -> None:
    """Adds to ``module`` (minitorch) and its Tensor class the forms the declarations make."""
    from .inplace import inplace_form

    tensor = module.Tensor
    for name in generic_inplace_ops():
        setattr(tensor, name + "_", inplace_form(name))
    for alias, name in method_aliases().items():
        setattr(tensor, alias, getattr(tensor, name))
    for alias, name in function_aliases().items():
        setattr(module, alias, getattr(module, name))
    for name in inplace_functions():
        setattr(module, name, function_from_method(name))


def entry(name: str, namespace: str = MINITORCH) -> Op:
    """The declaration of ``name`` (KeyError when there is none)."""
    for op in OPS:
        if op.name == name and op.namespace == namespace:
            return op
    raise KeyError(f"no op {namespace}.{name} is declared in minitorch/ops/declarations.py")
