"""minitorch.distributions against PyTorch's numbers: every case of dist_cases.py (log_prob, cdf,
icdf, moments, entropy, ...) and every KL pair, in float64 on every device, compared with
golden_distributions.npz (written by make_golden_distributions.py under PyTorch)."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import minitorch.distributions as D

from dist_cases import CASES, KL_CASES, tensor_maker
from make_golden_distributions import evaluate, evaluate_kl

GOLDEN = np.load(pathlib.Path(__file__).with_name("golden_distributions.npz"))
RTOL, ATOL = 1e-10, 1e-12
# PyTorch's Multinomial.entropy takes lgamma(total_count + 1) of an int64 tensor, which it
# computes in float32; minitorch keeps float64, so the two differ by float32 rounding.
LOOSER = {("multinomial", "entropy"): 1e-6}


def close(actual, expected, rtol=RTOL) -> None:
    actual = actual.detach().cpu().numpy()
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=rtol, atol=ATOL, equal_nan=True)


def golden_quantities(name):
    return sorted(k.split("/", 1)[1] for k in GOLDEN.files if k.split("/", 1)[0] == name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_matches_pytorch(case, device):
    got = evaluate(case, D, tensor_maker(device))
    expected = golden_quantities(case.name)
    assert expected, f"no golden values for {case.name}: rerun make_golden_distributions.py"
    assert sorted(got) == expected, "minitorch computes other quantities than PyTorch"
    for name in expected:
        try:
            close(got[name], GOLDEN[f"{case.name}/{name}"], LOOSER.get((case.name, name), RTOL))
        except AssertionError as e:
            raise AssertionError(f"{case.name}.{name}: {e}") from None


@pytest.mark.parametrize("pair", KL_CASES, ids=[k[0] for k in KL_CASES])
def test_kl_matches_pytorch(pair, device):
    name, make_p, make_q = pair
    close(evaluate_kl(make_p, make_q, D, tensor_maker(device)), GOLDEN[f"kl/{name}"])
