"""python -m minitorch.examples.mnist --distributed under the launcher: 2 ranks train,
rank 0 alone reports and writes the files."""
from __future__ import annotations

import json
import os

import pytest

import minitorch

pytest.importorskip("mpi4py", reason='mpi4py not installed: pip install "minitorch[distributed]"')

from dist_helpers import explain, launch  # noqa: E402

needs_hook = pytest.mark.skipif(not hasattr(minitorch.Tensor, "register_post_accumulate_grad_hook"),
                                reason="this extension lacks Tensor.register_post_accumulate_grad_hook")


@needs_hook
def test_mnist_example_on_two_ranks(tmp_path):
    data = os.environ.get("MINITORCH_DATA")
    if not data or not os.path.isdir(data):
        pytest.skip("MNIST files not found (set MINITORCH_DATA)")
    proc = launch(2, "minitorch.examples.mnist", "--model", "mlp", "--distributed", "--epochs", "1",
                  "--limit", "1024", "--quiet", "--out", str(tmp_path), module=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, explain(proc)
    out = proc.stdout
    assert "distributed: 2 ranks (backend mpi), 512 training images and 8 steps of 64 per rank" in out, out
    assert out.count("epoch 1: test accuracy") == 1, out  # rank 0 only
    record = json.loads((tmp_path / "mnist-mlp-relu.json").read_text())
    assert record["args"]["distributed"] is True and len(record["test_acc"]) == 1
    assert record["test_acc"][0] > 0.5  # 8 steps of 128 images: far above chance
    weights = minitorch.load(str(tmp_path / "mnist-mlp-relu.safetensors"))
    assert sorted(weights) == ["1.bias", "1.weight", "3.bias", "3.weight"]  # the plain model's names
