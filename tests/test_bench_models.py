"""benchmarks/bench_models.py runs: its models train on the CPU in the quick sizes (the GPU
table itself needs a GPU), and it says it skipped on a missing or emulated GPU."""
from __future__ import annotations

import importlib.util
import pathlib

import minitorch

PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench_models.py"


def load():
    spec = importlib.util.spec_from_file_location("bench_models", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_quick_run_on_the_cpu(capsys):
    threads = minitorch.get_num_threads()
    try:
        load().main(["--device", "cpu", "--quick", "--steps", "1", "--top", "3"])
    finally:
        minitorch.set_num_threads(threads)
    out = capsys.readouterr().out
    # (named by --quick's sizes: a smoke run's rows must not pass for the issue's)
    for row in ("ResNet-style, b8 16x16", "ResNet-style, autocast(bfloat16)", "GPT-style LM (d64 h4 L2 T32 b2)",
                "GPT-style LM, autocast(bfloat16)", "row-LSTM on MNIST, b8"):
        assert row in out
    assert out.count("minitorch's top ops") == 5 and "kernel launches" in out
    assert "peak MiB" in out
    for line in out.splitlines():
        if line.startswith("ResNet-style, b8 16x16"):  # minitorch's CPU peak is counted: a positive number
            assert float(line.split()[-3]) > 0, line


def test_peak_memory_of_a_step():
    """peak_mib: the step's peak of allocated memory, from the start of the step (the peak is
    reset first); nan for a library without a count."""
    bench = load()
    keep = minitorch.ones(1 << 20)  # 4 MiB alive across the step: counted in its peak
    peak = bench.peak_mib(minitorch, "cpu", lambda: minitorch.ones(1 << 21).sum(), lambda: None)
    assert 4 + 8 <= peak < 4 + 8 + 4, peak
    del keep

    class NoCounts:
        pass
    assert bench.peak_mib(NoCounts, "cpu", lambda: None, lambda: None) != bench.peak_mib(NoCounts, "cpu", lambda: None,
                                                                                          lambda: None)  # nan


def test_cudnn_benchmark_switch(capsys):
    """--cudnn-benchmark sets backends.cudnn.benchmark for the run and says so in the header."""
    threads, before = minitorch.get_num_threads(), minitorch.backends.cudnn.benchmark
    tf32 = minitorch.backends.cuda.matmul.allow_tf32, minitorch.backends.cudnn.allow_tf32
    try:
        load().main(["--device", "cpu", "--quick", "--steps", "1", "--top", "0", "--cudnn-benchmark"])
        assert minitorch.backends.cudnn.benchmark is True
    finally:
        minitorch.set_num_threads(threads)
        minitorch.backends.cudnn.benchmark = before
        minitorch.backends.cuda.matmul.allow_tf32, minitorch.backends.cudnn.allow_tf32 = tf32
    out = capsys.readouterr().out
    assert "cuDNN benchmark mode" in out.splitlines()[0] and "ResNet-style, b8 16x16" in out


def test_the_models_learn():
    """A few AdamW steps of the quick GPT lower its loss (the models are real models)."""
    mod = load()
    minitorch.manual_seed(0)
    model = mod.gpt(minitorch, vocab=16, d=32, heads=2, layers=1, T=8)
    opt = minitorch.optim.AdamW(model.parameters(), lr=1e-2)
    idx = minitorch.randint(0, 16, (4, 8))
    losses = []
    for _ in range(5):
        loss = minitorch.nn.functional.cross_entropy(model(idx).reshape(-1, 16), idx.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_skips_without_a_real_gpu(capsys):
    if minitorch.cuda.is_available() and not minitorch.cuda.is_emulated():
        return  # a real GPU runs the table instead
    load().main(["--quick"])
    assert "bench_models: skipped on cuda" in capsys.readouterr().out
