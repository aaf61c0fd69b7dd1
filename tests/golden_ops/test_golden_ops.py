"""Every case of cases.py run with minitorch must give PyTorch's outputs (values and dtypes) and
gradients, on every device. PyTorch's results are in golden.npz / golden.json (make_golden.py
writes them with PyTorch 1.13; PyTorch is not needed here)."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import minitorch

from .cases import CASES, differentiable, leaves, outputs

HERE = pathlib.Path(__file__).resolve().parent
INDEX = json.loads((HERE / "golden.json").read_text())["cases"]
GOLDEN = np.load(HERE / "golden.npz")

# Cases where minitorch differs from PyTorch: bugs to fix (strict, so a fix is noticed).
XFAIL: dict[str, str] = {
    "grid_sample_bicubic_border": "grid_sample(mode='bicubic') raises NotImplementedError in minitorch",
}


def _params():
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[case.name])] if case.name in XFAIL else []
        yield pytest.param(case, id=case.name, marks=marks)


def test_every_case_has_golden_values():
    missing = [c.name for c in CASES if c.name not in INDEX]
    assert not missing, f"run make_golden.py for {missing}"


@pytest.mark.filterwarnings("ignore:kl_div.*reduction .mean.")  # the kl_div_log_target case: as PyTorch warns
@pytest.mark.parametrize("case", list(_params()))
def test_op_matches_pytorch(device, case):
    entry = INDEX[case.name]
    arrays = [GOLDEN[f"{case.name}/in{i}"] for i in range(entry["inputs"])]
    xs = leaves(minitorch, case, arrays, device)
    outs = outputs(case.fn(minitorch, *xs))
    assert len(outs) == len(entry["outputs"]), f"{case.name}: {len(outs)} outputs, PyTorch has {len(entry['outputs'])}"
    where = f"{case.name} on {device}"
    for i, (out, dtype) in enumerate(zip(outs, entry["outputs"])):
        assert str(out.dtype).removeprefix("minitorch.") == dtype, f"{where}: output {i} is {out.dtype}, not {dtype}"
        expected = GOLDEN[f"{case.name}/out{i}"]
        got = out.detach().cpu().numpy()
        assert got.shape == expected.shape, f"{where}: output {i} has shape {got.shape}, not {expected.shape}"
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=case.atol, err_msg=f"{where}: output {i}")
        else:
            np.testing.assert_array_equal(got, expected, err_msg=f"{where}: output {i}")
    if not entry["weights"]:
        return
    loss = 0
    for i in entry["weights"]:
        assert differentiable(outs[i]), f"{where}: output {i} does not require grad"
        w = minitorch.tensor(GOLDEN[f"{case.name}/w{i}"], dtype=minitorch.float64, device=device)
        loss = loss + (outs[i] * w).sum()
    loss.backward()
    for i, x in enumerate(xs):
        if i in entry["grads"]:
            expected = GOLDEN[f"{case.name}/grad{i}"]
            if x.grad is None:  # None for all zeros (grid_sample's grid in nearest mode) is fine
                assert not expected.any(), f"{where}: no gradient for input {i}"
                continue
            np.testing.assert_allclose(x.grad.cpu().numpy(), expected, rtol=case.rtol,
                                       atol=case.atol, err_msg=f"{where}: gradient of input {i}")
        elif x.requires_grad and x.grad is not None:
            assert not x.grad.cpu().numpy().any(), f"{where}: input {i} has a gradient, PyTorch has none"
