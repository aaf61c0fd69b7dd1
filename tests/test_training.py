"""End-to-end training of the MNIST example (slow: run by .ci/run, or ``-m slow``).

Each run is one epoch of the 784-128-10 MLP with SGD (a few seconds on a CPU).
MNIST is found only through ``$MINITORCH_DATA``; Fashion-MNIST through Debian's
``dataset-fashion-mnist`` package.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from minitorch.examples.mnist import parse_args, train

FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")

pytestmark = pytest.mark.slow

needs_mnist = pytest.mark.skipif(not os.environ.get("MINITORCH_DATA"),
                                 reason="MINITORCH_DATA is not set (point it at a folder with the MNIST IDX files)")
needs_fashion = pytest.mark.skipif(not FASHION_DIR.is_dir(),
                                   reason=f"{FASHION_DIR} is absent (apt-get install dataset-fashion-mnist)")


def run(tmp_path: Path, *extra: str) -> dict:
    args = parse_args(["--epochs", "1", "--quiet", "--out", str(tmp_path), *extra])
    history = train(args)
    assert len(history["test_acc"]) == 1
    assert len(history["loss"]) > 0 and all(l == l for l in history["loss"])  # no NaN
    return history


def check_outputs(tmp_path: Path, stem: str) -> None:
    for ext in ("safetensors", "png", "json"):
        f = tmp_path / f"{stem}.{ext}"
        assert f.is_file(), f
        assert f.stat().st_size > 0, f
    assert (tmp_path / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    meta = json.loads((tmp_path / f"{stem}.json").read_text())
    assert len(meta["test_acc"]) == 1


def check_weights_reload(tmp_path: Path, stem: str) -> None:
    import minitorch
    from minitorch.examples.mnist import build_model

    sd = minitorch.load(tmp_path / f"{stem}.safetensors")
    assert {k: tuple(v.shape) for k, v in sd.items()} == {
        "1.weight": (128, 784), "1.bias": (128,), "3.weight": (10, 128), "3.bias": (10,)}
    model = build_model("mlp", stem.rsplit("-", 1)[1], 128)
    model.load_state_dict(sd)


@needs_mnist
def test_mnist_relu_one_epoch(tmp_path, capsys):
    history = run(tmp_path)
    acc = history["test_acc"][0]
    assert acc >= 0.95, f"test accuracy {acc:.4f} after 1 epoch (ReLU MLP) is below 0.95"
    assert history["loss"][-1] < history["loss"][0]
    check_outputs(tmp_path, "mnist-mlp-relu")
    check_weights_reload(tmp_path, "mnist-mlp-relu")
    out = capsys.readouterr().out
    assert "60000 train / 10000 test" in out
    assert "Linear(in_features=784, out_features=128, bias=True)" in out


@needs_mnist
def test_mnist_sigmoid_one_epoch(tmp_path):
    history = run(tmp_path, "--activation", "sigmoid")
    acc = history["test_acc"][0]
    assert acc >= 0.91, f"test accuracy {acc:.4f} after 1 epoch (sigmoid MLP) is below 0.91"
    check_outputs(tmp_path, "mnist-mlp-sigmoid")
    check_weights_reload(tmp_path, "mnist-mlp-sigmoid")


@needs_fashion
def test_fashion_mnist_one_epoch(tmp_path):
    history = run(tmp_path, "--data", str(FASHION_DIR), "--dataset", "fashion-mnist")
    acc = history["test_acc"][0]
    assert acc >= 0.80, f"test accuracy {acc:.4f} after 1 epoch on Fashion-MNIST is below 0.80"
    check_outputs(tmp_path, "fashion-mnist-mlp-relu")


@needs_mnist
def test_training_is_reproducible(tmp_path):
    a = run(tmp_path / "a", "--limit", "3000")
    b = run(tmp_path / "b", "--limit", "3000")
    assert a["loss"] == b["loss"]
    assert a["test_acc"] == b["test_acc"]


@needs_mnist
def test_mixed_precision_runs_reach_the_float32_accuracy(tmp_path):
    """--precision bf16 / fp16 (autocast; fp16 with a GradScaler) against fp32 on the same
    10,000 images: within one point of test accuracy, the weights saved in float32."""
    import minitorch

    acc = {p: run(tmp_path / p, "--limit", "10000", "--precision", p)["test_acc"][0] for p in ("fp32", "bf16", "fp16")}
    assert acc["fp32"] > 0.75, acc
    assert abs(acc["bf16"] - acc["fp32"]) < 0.01 and abs(acc["fp16"] - acc["fp32"]) < 0.01, acc
    sd = minitorch.load(tmp_path / "fp16" / "mnist-mlp-relu.safetensors")
    assert {v.dtype for v in sd.values()} == {minitorch.float32}
