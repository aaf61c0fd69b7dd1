"""int8 against float32 inference on the CPU, one thread: ``python benchmarks/bench_quant.py``.

Rows: a Linear layer (batch x in -> out) and a 3x3 Conv2d, as float32 (minitorch's
F.linear / F.conv2d on OpenBLAS), static int8 (``minitorch.ops.quantized.linear`` / ``conv2d``:
quint8 in, quint8 out, the requantization fused) and dynamic int8 (``linear_dynamic``: float in,
float out); "int8 7bit" feeds activations quantized with reduce_range (0..127, what PyTorch's
fbgemm qconfig observes), which run on the maddubs path. ``--torch`` (under a Python with PyTorch: ``/usr/bin/python3 benchmarks/bench_quant.py
--torch``) gives PyTorch's rows instead (``torch.ops.quantized.linear`` under its default engine). Medians
of several repeats, in microseconds per call; "speedup" is float32 time / int8 time (above 1: int8
is faster). The last row is notebook 11's whole MNIST CNN at batch 256 (static int8 model from
``convert``; "dynamic": only its Linear quantized).
"""
from __future__ import annotations

import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

LINEARS = [(64, 1024, 1024), (256, 512, 512), (1, 4096, 1024)]
CONVS = [(8, 32, 28, 64)]  # batch, in channels, size, out channels (3x3, padding 1)


# --cpu-time: the process's CPU time instead of the wall clock (on a machine shared with other
# jobs, wall-clock time also counts the time this process waited for a core).
CLOCK = time.process_time if "--cpu-time" in sys.argv else time.perf_counter


def median_us(fn, repeat: int = 7, number: int = 10) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        for _ in range(number):
            fn()
        times.append((CLOCK() - t0) / number)
    return statistics.median(times) * 1e6


def minitorch_rows():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import minitorch
    import minitorch.nn.functional as F
    from minitorch.ops import quantized as Q

    minitorch.set_num_threads(1)
    g = np.random.default_rng(0)
    for b, i, o in LINEARS:
        x = minitorch.from_numpy(g.standard_normal((b, i)).astype(np.float32))
        w = minitorch.from_numpy((g.standard_normal((o, i)) * 0.05).astype(np.float32))
        bias = minitorch.zeros(o)
        qx = minitorch.quantize_per_tensor(x, 0.03, 128, minitorch.quint8)
        qx7 = minitorch.quantize_per_tensor_dynamic(x, minitorch.quint8, True)  # reduce_range: 0..127
        qw = minitorch.quantize_per_tensor(w, 0.002, 0, minitorch.qint8)
        with minitorch.no_grad():
            f32 = median_us(lambda: F.linear(x, w, bias))
        i8 = median_us(lambda: Q.linear(qx, qw, bias, 0.1, 128))
        i7 = median_us(lambda: Q.linear(qx7, qw, bias, 0.1, 128))
        dyn = median_us(lambda: Q.linear_dynamic(x, qw, bias, reduce_range=True))
        yield f"linear {b}x{i}->{o}", f32, i8, i7, dyn
    for n, c, s, o in CONVS:
        x = minitorch.from_numpy(g.standard_normal((n, c, s, s)).astype(np.float32))
        w = minitorch.from_numpy((g.standard_normal((o, c, 3, 3)) * 0.05).astype(np.float32))
        qx = minitorch.quantize_per_tensor(x, 0.03, 128, minitorch.quint8)
        qw = minitorch.quantize_per_tensor(w, 0.002, 0, minitorch.qint8)
        with minitorch.no_grad():
            f32 = median_us(lambda: F.conv2d(x, w, None, 1, 1))
        qx7 = minitorch.quantize_per_tensor_dynamic(x, minitorch.quint8, True)
        i8 = median_us(lambda: Q.conv2d(qx, qw, None, 1, 1, 1, 1, 0.1, 128))
        i7 = median_us(lambda: Q.conv2d(qx7, qw, None, 1, 1, 1, 1, 0.1, 128))
        yield f"conv2d {n}x{c}x{s}x{s}->{o} 3x3", f32, i8, i7, None
    yield notebook_cnn_row(minitorch, g)


def notebook_cnn_row(minitorch, g):
    """Notebook 11's MNIST CNN (1 -> 8 -> 16 channels, 3x3 convs, 2x2 max pools, Linear 784 -> 10)
    on a batch of 256: float32, static int8 (fused conv+ReLU, x86 qconfig, calibrated on the same
    kind of input) and dynamic int8 (its Linear only)."""
    import minitorch.ao.quantization as tq
    from minitorch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
            self.conv1, self.relu1, self.pool1 = nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)
            self.conv2, self.relu2, self.pool2 = nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)
            self.flatten, self.fc = nn.Flatten(), nn.Linear(16 * 7 * 7, 10)

        def forward(self, x):
            x = self.pool1(self.relu1(self.conv1(self.quant(x))))
            x = self.pool2(self.relu2(self.conv2(x)))
            return self.dequant(self.fc(self.flatten(x)))

    minitorch.manual_seed(0)
    # MNIST-like: mostly background (-0.42 after standardizing), some strokes up to 2.8
    pixels = (g.random((256, 1, 28, 28)) > 0.8) * g.random((256, 1, 28, 28)) * 3.2 - 0.42
    x = minitorch.from_numpy(pixels.astype(np.float32))
    fp = Net().eval()
    static = Net().eval()
    static.load_state_dict(fp.state_dict())
    tq.fuse_modules(static, [["conv1", "relu1"], ["conv2", "relu2"]], inplace=True)
    static.qconfig = tq.get_default_qconfig("x86")
    tq.prepare(static, inplace=True)
    with minitorch.no_grad():
        static(x)
    tq.convert(static, inplace=True)
    dynamic = tq.quantize_dynamic(Net().eval(), {nn.Linear}, dtype=minitorch.qint8)
    with minitorch.no_grad():
        f32 = median_us(lambda: fp(x), number=3)
        i8 = median_us(lambda: static(x), number=3)
        dyn = median_us(lambda: dynamic(x), number=3)
    return "notebook 11 CNN, batch 256", f32, i8, None, dyn


def torch_rows():
    import torch

    torch.set_num_threads(1)
    g = np.random.default_rng(0)
    for b, i, o in LINEARS:
        x = torch.from_numpy(g.standard_normal((b, i)).astype(np.float32))
        w = torch.from_numpy((g.standard_normal((o, i)) * 0.05).astype(np.float32))
        bias = torch.zeros(o)
        qx = torch.quantize_per_tensor(x, 0.03, 128, torch.quint8)
        qw = torch.quantize_per_tensor(w, 0.002, 0, torch.qint8)
        packed = torch.ops.quantized.linear_prepack(qw, bias)
        with torch.no_grad():
            f32 = median_us(lambda: torch.nn.functional.linear(x, w, bias))
        i8 = median_us(lambda: torch.ops.quantized.linear(qx, packed, 0.1, 128))
        packed_d = torch.ops.quantized.linear_prepack(qw, bias)
        dyn = median_us(lambda: torch.ops.quantized.linear_dynamic(x, packed_d, True))
        yield f"linear {b}x{i}->{o}", f32, i8, None, dyn
    import torch.nn.quantized.functional as qF

    for n, c, s, o in CONVS:
        x = torch.from_numpy(g.standard_normal((n, c, s, s)).astype(np.float32))
        w = torch.from_numpy((g.standard_normal((o, c, 3, 3)) * 0.05).astype(np.float32))
        qx = torch.quantize_per_tensor(x, 0.03, 128, torch.quint8)
        qw = torch.quantize_per_tensor(w, 0.002, 0, torch.qint8)
        with torch.no_grad():
            f32 = median_us(lambda: torch.nn.functional.conv2d(x, w, None, 1, 1))
        i8 = median_us(lambda: qF.conv2d(qx, qw, None, 1, 1, scale=0.1, zero_point=128))
        yield f"conv2d {n}x{c}x{s}x{s}->{o} 3x3", f32, i8, None, None


def main() -> None:
    if "--torch" in sys.argv:
        rows, who = torch_rows(), "PyTorch " + __import__("torch").__version__
    else:
        rows, who = minitorch_rows(), "minitorch"
    print(f"{who}, one thread, median microseconds per call"
          f" ({'CPU time' if CLOCK is time.process_time else 'wall clock'})")
    print(f"{'case':32s} {'float32':>9s} {'int8':>9s} {'speedup':>8s} {'int8 7bit':>9s} {'speedup':>8s} "
          f"{'dynamic':>9s} {'speedup':>8s}")
    for name, f32, i8, i7, dyn in rows:
        d = f"{dyn:9.0f} {f32 / dyn:7.2f}x" if dyn is not None else f"{'-':>9s}"
        s7 = f"{i7:9.0f} {f32 / i7:7.2f}x" if i7 is not None else f"{'-':>9s} {'-':>8s}"
        print(f"{name:32s} {f32:9.0f} {i8:9.0f} {f32 / i8:7.2f}x {s7} {d}")


if __name__ == "__main__":
    main()
