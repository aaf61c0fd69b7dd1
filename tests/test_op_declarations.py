"""The op declarations (python/minitorch/ops/declarations.py) against what the package has:
every public name is declared, every declared form exists, the derived lists (in-place
forms, aliases, autocast's) are the declarations', and docs/ops.md is up to date."""
from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import types
from pathlib import Path

import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch.ops import registry
from minitorch.ops.declarations import (CPP, ELEMENTWISE, FUNCTIONAL, FUNCTIONAL_NON_OPS, GENERIC, INPLACE_FUNCTIONS,
                                        KINDS, LINALG, MINITORCH, NATIVE, OPS)

ROOT = Path(__file__).resolve().parent.parent
Tensor = minitorch.Tensor
MT = [op for op in OPS if op.namespace == MINITORCH]
FN = [op for op in OPS if op.namespace == FUNCTIONAL]


def _is_function(owner, name: str) -> bool:
    obj = getattr(owner, name)
    return callable(obj) and not isinstance(obj, types.ModuleType) and not inspect.isclass(obj)


def _declared_functions() -> set[str]:
    return {n for op in MT if op.function for n in (op.name, *op.aliases)} | set(INPLACE_FUNCTIONS)


def _declared_methods() -> set[str]:
    names = set()
    for op in MT:
        if op.method:
            names |= {op.name, *op.aliases, *op.method_aliases}
        if op.inplace:
            names |= {op.name + "_", *(a + "_" for a in op.aliases)}
    return names


def test_every_public_function_of_minitorch_is_declared():
    public = {n for n in dir(minitorch) if not n.startswith("_") and _is_function(minitorch, n)}
    missing = sorted(public - _declared_functions())
    assert not missing, f"public functions without an entry in ops/declarations.py: {missing}"


def test_every_public_tensor_method_and_property_is_declared():
    public = {n for n in dir(Tensor) if not n.startswith("_")}
    missing = sorted(public - _declared_methods())
    assert not missing, f"public Tensor attributes without an entry in ops/declarations.py: {missing}"


def test_every_public_function_of_nn_functional_is_declared():
    public = {n for n in dir(F) if not n.startswith("_") and _is_function(F, n)} - FUNCTIONAL_NON_OPS
    missing = sorted(public - {op.name for op in FN})
    assert not missing, f"nn.functional functions without an entry in ops/declarations.py: {missing}"


def test_every_public_function_of_linalg_is_declared():
    public = {n for n in dir(minitorch.linalg) if not n.startswith("_") and _is_function(minitorch.linalg, n)}
    missing = sorted(public - {op.name for op in OPS if op.namespace == LINALG})
    assert not missing, f"minitorch.linalg functions without an entry in ops/declarations.py: {missing}"


def test_every_declared_form_exists():
    absent = []
    for op in OPS:
        owner = {FUNCTIONAL: F, LINALG: minitorch.linalg}.get(op.namespace, minitorch)
        if op.function and not hasattr(owner, op.name):
            absent.append(f"{op.namespace}.{op.name}")
        if op.method and not hasattr(Tensor, op.name):
            absent.append(f"Tensor.{op.name}")
        if op.inplace and not hasattr(Tensor, op.name + "_"):
            absent.append(f"Tensor.{op.name}_")
        absent += [f"Tensor.{o}" for o in op.operators if not hasattr(Tensor, o)]
        absent += [f"{op.namespace}.{a}" for a in op.aliases if op.function and not hasattr(owner, a)]
    assert not absent, f"declared but missing: {absent}"


def test_inplace_functions_are_the_in_place_methods():
    # minitorch.exp_(x) is x.exp_(): each names a declared method (an op's in-place form, or an op)
    owners = registry.inplace_functions()
    assert set(owners) == set(INPLACE_FUNCTIONS) and len(INPLACE_FUNCTIONS) == len(set(INPLACE_FUNCTIONS))
    assert not set(INPLACE_FUNCTIONS) & {op.name for op in MT if op.function}
    for name in INPLACE_FUNCTIONS:
        assert getattr(minitorch, name).__name__ == name and hasattr(Tensor, name), name
    x = minitorch.tensor([0.25, 4.0])
    assert minitorch.sqrt_(x) is x and x.tolist() == [0.5, 2.0]
    assert minitorch.clamp_(x, max=1.0) is x and x.tolist() == [0.5, 1.0]
    with pytest.raises(TypeError, match="exp_"):
        minitorch.exp_([1.0])


def test_names_are_declared_once_and_fields_are_valid():
    seen = set()
    for op in OPS:
        for name in (op.name, *op.aliases, *op.method_aliases):
            key = (op.namespace, name)
            assert key not in seen, f"{key} is declared twice"
            seen.add(key)
        assert op.kind in KINDS, op
        assert op.inplace in (None, GENERIC, NATIVE), op
        assert op.autocast in (None, "lower", "fp32", "fp32_all"), op
        if op.kind == CPP:
            assert (ROOT / op.source).is_file(), f"{op.name}: source {op.source!r} does not exist"


def test_elementwise_entries_are_the_rows_of_op_list():
    rows = set(minitorch._C._elementwise_ops)
    declared = {n for op in MT if op.kind == ELEMENTWISE for n in (op.name, *op.aliases)}
    assert {op.name for op in MT if op.kind == ELEMENTWISE} <= rows
    assert rows <= declared, f"op_list.h rows without a declaration: {sorted(rows - declared)}"


def test_aliases_are_the_ops_themselves():
    for alias, name in registry.function_aliases().items():
        assert getattr(minitorch, alias) is getattr(minitorch, name), alias
    for alias, name in registry.method_aliases().items():
        assert Tensor.__dict__.get(alias, getattr(Tensor, alias)) is Tensor.__dict__.get(name, getattr(Tensor, name)), \
            alias


def _battery():
    """tests/opinfo/op_db.py's OP_DB, loaded by path (this file may run without that folder
    on sys.path)."""
    spec = importlib.util.spec_from_file_location("_op_db_for_declarations", ROOT / "tests/opinfo/op_db.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod.OP_DB


def test_generic_inplace_forms_write_the_ops_result():
    """The battery checks ``x.op_(...)`` against ``x.op(...)`` for each op it holds (test_values);
    the generic in-place forms of ops it does not hold must work without arguments."""
    in_battery = {op.name for op in _battery() if op.namespace == MINITORCH}
    x = minitorch.tensor([0.25, 0.5, 2.0])
    for name in registry.generic_inplace_ops():
        if name in in_battery:
            continue
        y = minitorch.tensor([True, False]) if name in ("logical_not", "bitwise_not") else x.clone()
        want = getattr(y, name)()
        got = getattr(y, name + "_")()
        assert got is y and minitorch.equal(got, want.to(y.dtype)), name


def test_autocast_wraps_exactly_the_declared_forms():
    declared = {(owner, name) for owner, name, _policy, _cpu in registry.autocast_lists()}
    owners = {"minitorch": minitorch, "Tensor": Tensor, "nn.functional": F}

    def wrapped_now():
        out = set()
        for key, owner in owners.items():
            for name in dir(owner):
                obj = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
                if hasattr(obj, "_autocast_original"):
                    out.add((key, name))
        return out

    assert wrapped_now() == set()
    with minitorch.autocast("cpu"):
        assert wrapped_now() == declared
    assert wrapped_now() == set()
    assert ("Tensor", "__matmul__") in declared and ("nn.functional", "cross_entropy") in declared


# PyTorch's autocast list of ops that run in float16/bfloat16 (its lower_precision_fp list for
# CUDA); every one of them that minitorch has must be declared LOWER, and nothing else.
PYTORCH_CUDA_LOWER = {
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
    "convolution", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linear", "addbmm",
    "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot", "linalg_vecdot", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "scaled_dot_product_attention"}


def test_every_pytorch_lower_precision_op_we_have_is_declared_lower():
    have = {op.name for op in OPS if op.name in PYTORCH_CUDA_LOWER}
    assert {op.name for op in OPS if op.autocast == "lower"} == have


def test_docs_ops_md_is_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "docs/gen_ops.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (ROOT / "docs/ops.md").read_text() == gen.render(), "docs/ops.md is out of date: run `python docs/gen_ops.py`"


def test_python_ops_come_from_their_declared_module():
    import importlib

    for op in MT:
        if not op.python:
            assert not op.cpp_method, f"{op.name}: cpp_method says where its Python function is not, but python= is empty"
            continue
        impl = getattr(importlib.import_module(f"minitorch.ops.{op.python}"), op.name)
        if op.method and not op.cpp_method:
            assert Tensor.__dict__[op.name] is impl, f"Tensor.{op.name} is not ops/{op.python}.py's {op.name}"
            if op.function:
                assert getattr(minitorch, op.name).__name__ == op.name
        else:
            assert not op.function or getattr(minitorch, op.name) is impl, \
                f"minitorch.{op.name} is not ops/{op.python}.py's {op.name}"
        if op.cpp_method:
            assert not inspect.isfunction(Tensor.__dict__[op.name]), f"Tensor.{op.name} is declared C++ but is Python"


def test_op_modules_attach_nothing_themselves():
    # Methods come from the declarations (ops/registry.py), not from the modules that define them.
    for path in sorted((ROOT / "python/minitorch/ops").glob("*.py")):
        if path.name != "registry.py":
            assert "add_methods" not in path.read_text() and "setattr(" not in path.read_text(), path.name


def test_only_the_registry_and_tensor_py_attach_tensor_methods():
    # Tensor's methods are declared in ops/declarations.py and attached by ops/registry.py;
    # _tensor.py holds the class's own Python protocol (__repr__, __array__, __dlpack__, .to...).
    # amp/autocast_mode.py swaps declared forms in and out while autocast is on (``owner``).
    attach = re.compile(r"add_methods\(|setattr\((module\.)?Tensor\b|\bTensor\.\w+\s*=[^=]")
    allowed = {"ops/registry.py", "_tensor.py"}
    package = ROOT / "python/minitorch"
    found = [f"{path.relative_to(package)}:{n}: {line.strip()}"
             for path in sorted(package.rglob("*.py")) if str(path.relative_to(package)) not in allowed
             for n, line in enumerate(path.read_text().splitlines(), 1) if attach.search(line)]
    assert not found, "Tensor methods attached outside ops/registry.py (declare them in ops/declarations.py): " + \
        "; ".join(found)
