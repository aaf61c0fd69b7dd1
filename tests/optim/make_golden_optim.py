"""Writes tests/optim/golden_optim.npz: a small float64 MLP trained by PyTorch's Adagrad, Adamax,
NAdam, RAdam, Adadelta, Rprop, ASGD and LBFGS, for test_optim_more.py (which needs no PyTorch).

Run it with a Python that has PyTorch, from the repository root:

    OPENBLAS_NUM_THREADS=1 /tmp/tv/bin/python tests/optim/make_golden_optim.py

The model is Linear(6, 8) - Tanh - Linear(8, 4) with fixed weights and full-batch data drawn
from NumPy generators (``initial_weights``, ``data``), trained on cross entropy. For each case of
CASES the file holds the parameters after every step (``<case>/params``, one row per step, the
parameters flattened in ``parameters()`` order), the loss of every step (``<case>/loss``) and the
optimizer's state after the last step (``<case>/state/<key>``: a tensor state flattened the same
way, a scalar state one value per parameter; LBFGS's counters and scalars). ``cases`` is CASES
as JSON, so that the test can tell a stale file; ``init/<i>`` and ``data/x``, ``data/y`` are the
weights and data used.

CASES is read by the test too: keep this module importable without PyTorch. The file was
written with Debian's PyTorch 1.13, so CASES holds only options 1.13 has; the test checks the
newer options (NAdam / RAdam ``decoupled_weight_decay``, their ``maximize``) against NumPy
transcriptions of PyTorch 2.11's formulas instead.
"""
from __future__ import annotations

import json
import os
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
GOLDEN = HERE / "golden_optim.npz"
SIZES = (6, 8, 4)
SAMPLES = 48

# name: (optimizer, keyword arguments, steps, keyword arguments given to PyTorch only).
# NAdam runs PyTorch 1.13's foreach step: its for-loop step multiplied mu_product by mu twice
# in the second term (fixed in 2.0); its foreach step already computes 2.11's formula.
# RAdam's rectified branch starts once rho_t > 5: after 6 steps with betas[1] = 0.8, after 7
# with the default 0.999, hence its longer cases.
CASES: dict[str, tuple[str, dict, int, dict]] = {
    "adagrad": ("Adagrad", {}, 5, {}),
    "adagrad_options": ("Adagrad", dict(lr=0.05, lr_decay=0.1, weight_decay=0.01, initial_accumulator_value=0.1,
                                        eps=1e-8), 5, {}),
    "adagrad_maximize": ("Adagrad", dict(lr=0.03, maximize=True), 5, {}),
    "adamax": ("Adamax", {}, 5, {}),
    "adamax_options": ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05), 5, {}),
    "adamax_maximize": ("Adamax", dict(maximize=True), 5, {}),
    "nadam": ("NAdam", {}, 5, dict(foreach=True)),
    "nadam_options": ("NAdam", dict(lr=0.01, betas=(0.85, 0.99), eps=1e-6, weight_decay=0.05, momentum_decay=0.01),
                      5, dict(foreach=True)),
    "radam": ("RAdam", {}, 9, {}),
    "radam_options": ("RAdam", dict(lr=0.01, betas=(0.9, 0.8), eps=1e-6, weight_decay=0.05), 9, {}),
    "adadelta": ("Adadelta", {}, 5, {}),
    "adadelta_options": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.02), 5, {}),
    "adadelta_maximize": ("Adadelta", dict(maximize=True), 5, {}),
    "rprop": ("Rprop", {}, 5, {}),
    "rprop_options": ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.06)), 5, {}),
    "rprop_maximize": ("Rprop", dict(maximize=True), 5, {}),
    "asgd": ("ASGD", {}, 5, {}),
    "asgd_averaging": ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=2, weight_decay=0.01), 6, {}),
    "asgd_maximize": ("ASGD", dict(lr=0.02, t0=1, maximize=True), 5, {}),
    "lbfgs": ("LBFGS", {}, 2, {}),
    "lbfgs_short_history": ("LBFGS", dict(lr=0.5, max_iter=4, history_size=3), 3, {}),
    "lbfgs_strong_wolfe": ("LBFGS", dict(line_search_fn="strong_wolfe"), 2, {}),
    "lbfgs_strong_wolfe_short": ("LBFGS", dict(line_search_fn="strong_wolfe", max_iter=5, history_size=2,
                                               tolerance_change=1e-12), 3, {}),
    "lbfgs_strong_wolfe_long_steps": ("LBFGS", dict(lr=8, line_search_fn="strong_wolfe", max_iter=6), 2, {}),
}

# The scalar state each optimizer keeps per parameter (PyTorch: 0-dim tensors).
SCALAR_STATE = {"step", "eta", "mu", "mu_product"}
LBFGS_STATE = ("func_evals", "n_iter", "t", "H_diag", "prev_loss")


def initial_weights() -> list[np.ndarray]:
    """Linear(6, 8) and Linear(8, 4) weights and biases, in ``parameters()`` order."""
    rng = np.random.default_rng(20240611)
    (a, b, c) = SIZES
    return [rng.uniform(-0.6, 0.6, (b, a)), rng.uniform(-0.3, 0.3, b),
            rng.uniform(-0.6, 0.6, (c, b)), rng.uniform(-0.3, 0.3, c)]


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.standard_normal((SAMPLES, SIZES[0])), rng.integers(0, SIZES[-1], SAMPLES)


def cases_json() -> str:
    return json.dumps(CASES, sort_keys=True)


def flat(tensors) -> np.ndarray:
    return np.concatenate([np.asarray(t).reshape(-1) for t in tensors])


def run_torch(torch, case: tuple[str, dict, int, dict]) -> dict:
    """Trains the model with PyTorch for one case (a value of CASES); returns {array name: array}."""
    optimizer, kwargs, steps, torch_only = case
    (a, b, c) = SIZES
    model = torch.nn.Sequential(torch.nn.Linear(a, b), torch.nn.Tanh(), torch.nn.Linear(b, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), initial_weights()):
            p.copy_(torch.from_numpy(w))
    x, y = (torch.from_numpy(v) for v in data())
    params = list(model.parameters())
    opt = getattr(torch.optim, optimizer)(params, **kwargs, **torch_only)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    rows, losses = [], []
    for _ in range(steps):
        if optimizer == "LBFGS":
            loss = opt.step(closure)
        else:
            loss = closure()
            opt.step()
        losses.append(float(loss))
        rows.append(flat(p.detach().numpy() for p in params))
    out = {"params": np.stack(rows), "loss": np.array(losses)}
    if optimizer == "LBFGS":
        state = opt.state[params[0]]
        for key in LBFGS_STATE:
            out[f"state/{key}"] = np.array(float(state[key]))
        return out
    for key in opt.state[params[0]]:
        values = [opt.state[p][key] for p in params]
        if key in SCALAR_STATE:
            out[f"state/{key}"] = np.array([float(v) for v in values])
        else:
            out[f"state/{key}"] = flat(v.numpy() for v in values)
    return out


def main() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    x, y = data()
    arrays = {"cases": np.array(cases_json()), "data/x": x, "data/y": y}
    arrays.update({f"init/{i}": w for i, w in enumerate(initial_weights())})
    for name in CASES:
        for key, value in run_torch(torch, CASES[name]).items():
            arrays[f"{name}/{key}"] = value
    np.savez_compressed(GOLDEN, **arrays)
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size} bytes, {len(CASES)} cases) with PyTorch {torch.__version__}")


if __name__ == "__main__":
    main()
