"""Writes tests/nn/golden_packed.npz: PyTorch's results for the cases of packed_cases.py. Run
with a Python that has torch: ``python tests/nn/make_golden_packed.py``."""
from __future__ import annotations

import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import packed_cases  # noqa: E402

out = {}
for case in packed_cases.CASES:
    for key, value in packed_cases.run(torch, case).items():
        out[f"{packed_cases.name(case)}/{key}"] = value
np.savez_compressed(os.path.join(here, "golden_packed.npz"), **out)
print(f"wrote golden_packed.npz ({len(packed_cases.CASES)} cases, torch {torch.__version__})")
