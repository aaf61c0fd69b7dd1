"""benchmarks/bench_cuda.py's workloads run: every row of its op tables and its training steps,
at tiny sizes, on the CPU and on cuda (the emulator here; its timings need a GPU, where the
script runs them at the issue's sizes beside PyTorch), and it skips cleanly without a GPU."""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

import minitorch
from conftest import DEVICES

PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_cuda.py"
ISSUE_ROWS = ("x.sum(), ", "softmax(dim=-1)", "gather(dim=1)", "cat of 8", "a * b broadcast", "layer_norm fwd+bwd",
              "BatchNorm2d fwd+bwd", "sdpa causal fwd+bwd", "LSTM fwd+bwd", "sort(dim=-1)", "cumsum(dim=1)",
              "small CNN fwd+bwd, autocast(bf16)")


def load():
    """The module, with the precision switches it sets at import put back afterwards."""
    saved = minitorch.backends.cuda.matmul.allow_tf32, minitorch.backends.cudnn.allow_tf32
    try:
        spec = importlib.util.spec_from_file_location("bench_cuda", PATH)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        minitorch.backends.cuda.matmul.allow_tf32, minitorch.backends.cudnn.allow_tf32 = saved
    return mod


def test_every_row_runs(device, monkeypatch):
    bench = load()
    monkeypatch.setattr(bench, "DEVICE", device)
    minitorch.manual_seed(0)
    rows, _ = bench.workloads(minitorch, quick=True, tiny=True)
    names = [name for name, _ in rows]
    for want in ISSUE_ROWS:
        assert any(name.startswith(want) for name in names), (want, names)
    for name, make in rows + bench.training_steps(minitorch, tiny=True):
        call = make()
        call(), call()  # twice: the backward rows drop the leaves' gradients between calls
    if device == "cuda":
        minitorch.cuda.synchronize()


def test_it_skips_without_a_gpu():
    if minitorch.cuda.is_available() and not minitorch.cuda.is_emulated():
        pytest.skip("a real GPU is here: the script would run its tables")
    out = subprocess.run([sys.executable, str(PATH), "--quick"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "bench_cuda: skipped" in out.stdout, out.stdout + out.stderr


def test_rows_under_env_runs_the_picked_rows_with_each_value_and_restores_the_variable(monkeypatch):
    """The attention-family and cuDNN-API tables: each value set while its table runs, the rows
    picked by name, the variable put back as it was (also when it was unset)."""
    bench = load()
    seen = []
    monkeypatch.setattr(bench, "table", lambda title, mt, ref, torch: seen.append(
        (title, [n for n, _ in mt], bench.os.environ.get("MINITORCH_CUDNN_API"))))
    rows = [("conv2d fwd", None), ("softmax", None), ("small CNN fwd+bwd", None)]
    monkeypatch.delenv("MINITORCH_CUDNN_API", raising=False)
    bench.cudnn_legacy(rows, None, None)
    assert seen == [("With MINITORCH_CUDNN_API=legacy", ["conv2d fwd", "small CNN fwd+bwd"], "legacy")]
    assert "MINITORCH_CUDNN_API" not in bench.os.environ
    monkeypatch.setenv("MINITORCH_CUDA_ATTENTION", "rows")
    seen.clear()
    monkeypatch.setattr(bench, "table", lambda title, mt, ref, torch: seen.append(
        bench.os.environ["MINITORCH_CUDA_ATTENTION"]))
    bench.attention_families([("sdpa causal", None)], None, None)
    assert seen == ["rows", "tiled", "wmma", "mma"] and bench.os.environ["MINITORCH_CUDA_ATTENTION"] == "rows"
    seen.clear()
    monkeypatch.setattr(bench, "table", lambda title, mt, ref, torch: seen.append((title, [n for n, _ in mt])))
    monkeypatch.delenv("MINITORCH_CUDA_SOFTMAX", raising=False)
    monkeypatch.delenv("MINITORCH_CUDA_GATHER", raising=False)
    monkeypatch.delenv("MINITORCH_CUDA_SORT", raising=False)
    monkeypatch.delenv("MINITORCH_CUDA_LAYER_NORM", raising=False)
    rows = [("softmax(dim=-1), 8x1000", None), ("gather(dim=1), 8x1000", None), ("cat of 8", None),
            ("index_select(dim=1), 8x1000", None), ("sort(dim=-1), 8x1000", None), ("layer_norm fwd+bwd", None)]
    bench.kernel_switches(rows, None, None)
    assert seen == [("With MINITORCH_CUDA_SOFTMAX=merge", ["softmax(dim=-1), 8x1000"]),
                    ("With MINITORCH_CUDA_GATHER=simple", ["gather(dim=1), 8x1000", "index_select(dim=1), 8x1000"]),
                    ("With MINITORCH_CUDA_SORT=block", ["sort(dim=-1), 8x1000"]),
                    ("With MINITORCH_CUDA_LAYER_NORM=passes", ["layer_norm fwd+bwd"])]
    switches = {"MINITORCH_CUDA_SOFTMAX", "MINITORCH_CUDA_GATHER", "MINITORCH_CUDA_SORT", "MINITORCH_CUDA_LAYER_NORM"}
    assert not switches & set(bench.os.environ)
