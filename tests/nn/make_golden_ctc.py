"""Writes tests/nn/golden_ctc.npz: PyTorch's CTC losses and logit gradients for the cases
of ctc_cases.py. Run with a Python that has torch: ``python tests/nn/make_golden_ctc.py``."""
from __future__ import annotations

import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import ctc_cases  # noqa: E402

out = {}
for name in ctc_cases.CASES:
    loss, grad = ctc_cases.run(torch, name)
    out[name + "/loss"], out[name + "/grad"] = loss, grad
np.savez_compressed(os.path.join(here, "golden_ctc.npz"), **out)
print(f"wrote golden_ctc.npz ({len(ctc_cases.CASES)} cases, torch {torch.__version__})")
