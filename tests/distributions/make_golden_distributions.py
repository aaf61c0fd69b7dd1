"""Writes tests/distributions/golden_distributions.npz: every case of dist_cases.py evaluated by
PyTorch in float64 (log_prob, cdf, icdf, moments, entropy... and the KL divergences).

Run it with a Python that has PyTorch, from the repository root:

    python tests/distributions/make_golden_distributions.py

Each array is stored under "<case>/<quantity>" ("kl/<pair>" for KL pairs); a quantity
that this PyTorch does not implement is left out (test_dist_golden.py lists what it compares).
"""
from __future__ import annotations

import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from dist_cases import CASES, KL_CASES  # noqa: E402

OUT = HERE / "golden_distributions.npz"


def evaluate(case, D, t, cdf_fallback=None):
    """{quantity: tensor} for one case, in the library of D and t; quantities the library
    does not implement are absent (but the cdf comes from ``cdf_fallback(dist, value)``
    when that is not None)."""
    dist = case.make(D, t)
    calls = {name: (lambda name=name: getattr(dist, name)) for name in case.props}
    if "entropy" in case.props:
        calls["entropy"] = dist.entropy
    if case.values is not None:
        calls["log_prob"] = lambda: dist.log_prob(t(case.values))
        if case.cdf:
            calls["cdf"] = lambda: dist.cdf(t(case.values))
    if case.probs is not None:
        calls["icdf"] = lambda: dist.icdf(t(case.probs))
    for name, fn in case.extra.items():
        calls[name] = lambda fn=fn: fn(dist, t)
    out = {}
    for name, call in calls.items():
        try:
            out[name] = call()
        except NotImplementedError:
            value = cdf_fallback(dist, t(case.values)) if name == "cdf" and cdf_fallback else None
            if value is not None:
                out[name] = value
    return out


def evaluate_kl(make_p, make_q, D, t):
    return D.kl_divergence(make_p(D, t), make_q(D, t))


def main() -> None:
    import torch
    import torch.distributions as D

    torch.distributions.Distribution.set_default_validate_args(True)

    def t(x):
        return torch.tensor(x, dtype=torch.float64)

    def gamma_cdf(dist, value):
        """PyTorch < 2.0 has no Gamma.cdf: the same function, torch.special.gammainc."""
        if not isinstance(dist, D.Gamma):
            return None
        return torch.special.gammainc(dist.concentration, dist.rate * value)

    arrays = {}
    for case in CASES:
        for name, value in evaluate(case, D, t, gamma_cdf).items():
            arrays[f"{case.name}/{name}"] = value.detach().numpy()
    for name, make_p, make_q in KL_CASES:
        try:
            arrays[f"kl/{name}"] = evaluate_kl(make_p, make_q, D, t).detach().numpy()
        except NotImplementedError:
            continue
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {OUT} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
