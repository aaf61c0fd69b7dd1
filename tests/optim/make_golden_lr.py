"""Writes tests/optim/golden_lr.json: PyTorch's lr (and momentum) sequences for every case
of lr_cases.py. Run with a Python that has torch: ``python tests/optim/make_golden_lr.py``
(CI has no PyTorch; the test compares minitorch with this file)."""
from __future__ import annotations

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lr_cases  # noqa: E402

out = {"torch": torch.__version__, "cases": {name: lr_cases.run(torch, name) for name in lr_cases.CASES}}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_lr.json")
with open(path, "w") as f:
    json.dump(out, f, indent=0)
print(f"wrote {path} ({len(out['cases'])} cases, torch {torch.__version__})")
