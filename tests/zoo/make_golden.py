"""Writes tests/zoo/golden/<program>.json: each zoo program's per-step losses under PyTorch.

Run it with a Python that has PyTorch (e.g. Debian's: ``apt-get install -y python3-torch
libopenblas0-pthread``), from the repository root:

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/zoo/make_golden.py [program ...]

The programs draw weights and data from NumPy, so minitorch starts from the same numbers;
test_zoo.py runs them with minitorch and compares the losses step by step.
"""
from __future__ import annotations

import importlib
import json
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: the zoo package

STEPS = 3  # test_zoo.py runs the same number


def main(names) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import torch

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    from zoo.programs import __path__ as programs_path  # noqa: F401

    names = names or sorted(p.stem for p in (HERE / "programs").glob("*.py")
                            if p.stem not in ("__init__", "common"))
    for name in names:
        program = importlib.import_module(f"zoo.programs.{name}")
        losses = program.run(torch, "cpu", STEPS)
        out = {"program": name, "steps": STEPS, "torch": torch.__version__, "losses": losses}
        (HERE / "golden" / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
        print(f"{name}: {losses}")


if __name__ == "__main__":
    main(sys.argv[1:])
