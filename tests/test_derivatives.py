"""docs/derivatives.md lists every differentiable op: it is regenerated from the C++
sources here, and an op whose output carries a gradient must have a row."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import minitorch

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("gen_derivatives", ROOT / "docs/gen_derivatives.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def test_the_table_is_up_to_date():
    assert (ROOT / "docs/derivatives.md").read_text() == gen.render(), (
        "docs/derivatives.md is out of date: run `python docs/gen_derivatives.py`")


def test_every_backward_node_has_a_derivative_comment():
    # Each Node in cpp/src/ops (except the elementwise ones, whose formulas are the rows of
    # op_list.h) has `// derivative of ...` lines directly above its struct.
    missing = []
    for path in sorted((ROOT / "cpp/src/ops").glob("*.cpp")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"struct (\w+) : (autograd::)?Node", line)
            if not m or m[1] in ("UnaryBackward", "BinaryBackward"):
                continue
            if not lines[i - 1].startswith("// derivative of "):
                missing.append(f"{path.name}:{i + 1} {m[1]}")
    assert not missing, f"backward nodes without a '// derivative of' comment: {missing}"


def _documented_ops() -> set[str]:
    return {op for op, *_ in gen.rows()}


@pytest.mark.parametrize("name", minitorch._C._elementwise_ops)
def test_an_elementwise_op_that_carries_gradients_has_a_row(name):
    x = minitorch.tensor([0.25, 0.5], dtype=minitorch.float64, requires_grad=True)
    fn = getattr(minitorch, name)
    documented = _documented_ops()
    if "atan2" in documented:
        documented.add("arctan2")  # PyTorch's other name for it
    out = None
    for args in ((x,), (x, x + 1.0)):  # unary, else binary
        try:
            out = fn(*args)
            break
        except TypeError:
            continue
    if out is not None and out.requires_grad:
        assert name in documented, f"{name} carries gradients but has no row in docs/derivatives.md"
    else:  # a bool/integer result, or an op that refuses floating inputs (bitwise_and)
        assert name not in documented, f"{name} has a row but its output carries no gradient"
