"""Writes tests/golden_ops/golden.npz and golden.json: every case of cases.py run under PyTorch.

Run it with a Python that has PyTorch (e.g. Debian's: ``apt-get install -y python3-torch
libopenblas0-pthread``), from the repository root:

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/golden_ops/make_golden.py

golden.npz holds, per case, its inputs (``<case>/in<i>``), outputs (``out<i>``), the fixed random
weights of the differentiable outputs (``w<i>``) and the gradients of sum(out_i * w_i) with respect
to each float input (``grad<i>``); golden.json indexes them, with PyTorch's output dtypes.
test_golden_ops.py runs the same cases with minitorch (PyTorch is not needed there).
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import zlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases import CASES, differentiable, leaves, make, outputs  # noqa: E402


def main() -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    # The cases write `a // b` for floor division: PyTorch >= 1.13 floors (older ones truncated).
    a, b = torch.tensor([-7, 7]), torch.tensor([2, -2])
    assert torch.equal(a // b, torch.div(a, b, rounding_mode="floor")), "this PyTorch's // truncates"

    arrays, index = {}, {}
    for case in CASES:
        rng = np.random.default_rng(zlib.crc32(case.name.encode()))
        inputs = [make(spec, rng) for spec in case.inputs]
        xs = leaves(torch, case, inputs, "cpu")
        outs = outputs(case.fn(torch, *xs))
        entry = {"inputs": len(xs), "outputs": [str(o.dtype).removeprefix("torch.") for o in outs],
                 "weights": [], "grads": []}
        for i, x in enumerate(inputs):
            arrays[f"{case.name}/in{i}"] = x
        for i, o in enumerate(outs):
            arrays[f"{case.name}/out{i}"] = o.detach().numpy()
        if case.grad:
            loss = 0
            for i, o in enumerate(outs):
                if differentiable(o):
                    w = rng.standard_normal(tuple(o.shape))
                    arrays[f"{case.name}/w{i}"] = w
                    entry["weights"].append(i)
                    loss = loss + (o * torch.tensor(w)).sum()
            if entry["weights"]:
                loss.backward()
            for i, x in enumerate(xs):
                if x.requires_grad and x.grad is not None:
                    arrays[f"{case.name}/grad{i}"] = x.grad.numpy()
                    entry["grads"].append(i)
        index[case.name] = entry
        print(case.name, entry["outputs"], "grads", entry["grads"])
    np.savez_compressed(HERE / "golden.npz", **arrays)
    (HERE / "golden.json").write_text(json.dumps({"torch": torch.__version__, "cases": index}, indent=1) + "\n")
    print(f"{len(index)} cases, {(HERE / 'golden.npz').stat().st_size} bytes")


if __name__ == "__main__":
    main()
