"""GPU benchmarks: ``python benchmarks/bench_cuda.py [--quick]``.

On a real GPU, in one run and beside PyTorch when a CUDA build of torch is installed
(FP32 on both sides, TF32 off):

1. the op table of the CUDA-speed issue — full and leading-dim sums, softmax,
   cross_entropy, conv2d, a small CNN's forward+backward, an MLP's Adam step,
   elementwise ops, a large matmul — as ms per call and the minitorch / PyTorch ratio
   (below 1 means minitorch is faster), plus the full sum's bandwidth;
2. training steps of the lectures' models: the MNIST MLP and a small CNN, batch 64;
3. GFLOP/s of the naive, tiled and cuBLAS matmul kernels (the lectures' comparison);
4. GEMM TFLOP/s in FP32, TF32 (backends.cuda.matmul.allow_tf32 on both sides), FP16 and
   BF16 (16-bit inputs and outputs), beside PyTorch.

Without a GPU it says so and exits cleanly (the emulated build runs kernels on the CPU,
so its timings mean nothing).
"""
from __future__ import annotations

import argparse
import sys
import time

import minitorch

DEVICE = "cuda"  # where the workloads run (tests point it at the CPU to check that they run)


def _torch():
    """torch when a CUDA build of it can run here, else None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False  # FP32 on both sides
    torch.backends.cudnn.allow_tf32 = False
    return torch


# FP32 on minitorch's side too (its convolutions default to TF32, as PyTorch's do).
minitorch.backends.cuda.matmul.allow_tf32 = False
minitorch.backends.cudnn.allow_tf32 = False


def ms_per_call(fn, sync, repeat: int = 5, number: int = 20) -> float:
    """Best mean milliseconds per call over `repeat` rounds of `number` calls (after a
    warm-up); `sync` waits for the GPU at the end of each round, so queued work counts."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e3


# ---- the workloads, written once for either library (their APIs match) ----

def small_cnn(lib, c1: int = 32, c2: int = 64):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, c1, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c1, c2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(c2 * 7 * 7, 10))


def mlp(lib, sizes):
    nn = lib.nn
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def train_step(lib, model, opt, x, y):
    def step():
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def forward_backward(lib, model, x, y):
    def step():
        model.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
    return step


def workloads(lib, quick: bool):
    """(name, make) pairs: make() builds the inputs on the GPU and returns the call to time."""
    F = lib.nn.functional
    n24 = 1 << (20 if quick else 24)
    side = 1024 if quick else 4096

    def randn(*shape):
        return lib.randn(*shape, device=DEVICE)

    def labels(n, classes=10):
        return lib.randint(0, classes, (n,), device=DEVICE)

    def full_sum():
        x = randn(n24)
        return lambda: x.sum()

    def sum0():
        x = randn(side, side)
        return lambda: x.sum(0)

    def softmax():
        x = randn(side, 1000)
        return lambda: F.softmax(x, dim=-1)

    def cross_entropy():
        x, y = randn(side, 1000), labels(side, 1000)
        return lambda: F.cross_entropy(x, y)

    def conv():
        x, w, b = randn(8 if quick else 64, 64, 56, 56), randn(64, 64, 3, 3), randn(64)
        return lambda: F.conv2d(x, w, b, padding=1)

    def cnn():
        model = small_cnn(lib).to(DEVICE)
        return forward_backward(lib, model, randn(256, 1, 28, 28), labels(256))

    def mlp_adam():
        hidden = 1024 if quick else 4096
        model = mlp(lib, [784, hidden, hidden, 10]).to(DEVICE)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        return train_step(lib, model, opt, randn(1024, 784), labels(1024))

    def add():
        a, b = randn(n24), randn(n24)
        return lambda: a + b

    def mul_broadcast():
        a, b = randn(side, side), randn(side)
        return lambda: a * b

    def exp():
        a = randn(n24)
        return lambda: a.exp()

    def matmul():
        a, b = randn(side, side), randn(side, side)
        return lambda: a @ b

    def gather():
        x, idx = randn(side, 1000), lib.randint(0, 1000, (side, 1000), device=DEVICE)
        return lambda: x.gather(1, idx)

    def cat8():
        ts = [randn(1024, 1024) for _ in range(8)]
        return lambda: lib.cat(ts, 0)

    def index_select():
        x, idx = randn(side, 1000), lib.randint(0, 1000, (1000,), device=DEVICE)
        return lambda: x.index_select(1, idx)

    vocab = 5000 if quick else 50000

    def embedding_bwd():
        w = randn(vocab, 512).requires_grad_()
        tokens = lib.randint(0, vocab, (64, 128), device=DEVICE)
        out = F.embedding(tokens, w)
        g = lib.ones_like(out)
        return lambda: out.backward(g, retain_graph=True)

    return [
        (f"x.sum(), 2^{n24.bit_length() - 1}", full_sum),
        (f"x.sum(0), {side}x{side}", sum0),
        (f"softmax(dim=-1), {side}x1000", softmax),
        (f"cross_entropy fwd, {side}x1000", cross_entropy),
        (f"conv2d fwd 64->64 3x3, b{8 if quick else 64} 56x56", conv),
        ("small CNN (1->32->64) fwd+bwd, b256", cnn),
        (f"MLP 784-{1024 if quick else 4096}x2-10 Adam step, b1024", mlp_adam),
        (f"a + b, 2^{n24.bit_length() - 1}", add),
        (f"a * b broadcast, {side}x{side} * {side}", mul_broadcast),
        (f"exp, 2^{n24.bit_length() - 1}", exp),
        (f"matmul {side}^3", matmul),
        (f"gather(dim=1), {side}x1000", gather),
        ("cat of 8 x 1024^2 (dim 0)", cat8),
        (f"index_select(dim=1), {side}x1000", index_select),
        (f"embedding bwd, {vocab}x512, 64x128 tokens", embedding_bwd),
    ], n24


def training_steps(lib):
    """The lectures' models on MNIST-shaped batches of 64: one SGD step each."""
    def randn(*shape):
        return lib.randn(*shape, device=DEVICE)

    def mnist_mlp():
        model = mlp(lib, [784, 128, 10]).to(DEVICE)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        return train_step(lib, model, opt, randn(64, 784), lib.randint(0, 10, (64,), device=DEVICE))

    def cnn():
        model = small_cnn(lib, 8, 16).to(DEVICE)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        return train_step(lib, model, opt, randn(64, 1, 28, 28), lib.randint(0, 10, (64,), device=DEVICE))

    return [("MNIST MLP 784-128-10 SGD step, b64", mnist_mlp), ("small CNN (1->8->16) SGD step, b64", cnn)]


def table(title, mt_rows, torch_rows, torch):
    """Times each workload with both libraries; torch_rows is None without PyTorch."""
    print(f"\n{title}")
    print(f"{'workload':<44} {'minitorch ms':>13} {'PyTorch ms':>11} {'ratio':>7}")
    times = []
    for i, (name, make) in enumerate(mt_rows):
        mt = ms_per_call(make(), minitorch.cuda.synchronize)
        ref = ms_per_call(torch_rows[i][1](), torch.cuda.synchronize) if torch_rows else float("nan")
        times.append(mt)
        print(f"{name:<44} {mt:>13.4f} {ref:>11.4f} {mt / ref:>6.2f}x")
    return times


def gflops(impl: str, n: int) -> float:
    a, b = minitorch.randn(n, n, device=DEVICE), minitorch.randn(n, n, device=DEVICE)
    with minitorch.backends.cuda.use_matmul(impl):
        return 2.0 * n**3 / (ms_per_call(lambda: a @ b, minitorch.cuda.synchronize, 3, 1) / 1e3) / 1e9


def gemm_tflops(lib, n: int, precision: str) -> float:
    """TFLOP/s of an n^3 matmul in `precision`: "fp32", "tf32" (float32 inputs with the
    library's allow_tf32 switch on), "fp16" or "bf16" (16-bit inputs and output)."""
    lib.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        dtype = {"fp16": lib.float16, "bf16": lib.bfloat16}.get(precision, lib.float32)
        a = lib.randn(n, n, device=DEVICE).to(dtype)
        b = lib.randn(n, n, device=DEVICE).to(dtype)
        sync = minitorch.cuda.synchronize if lib is minitorch else lib.cuda.synchronize
        return 2.0 * n**3 / (ms_per_call(lambda: a @ b, sync, 3, 5) / 1e3) / 1e12
    finally:
        lib.backends.cuda.matmul.allow_tf32 = False


PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


def precision_table(sizes, torch) -> None:
    """GEMM TFLOP/s per precision beside PyTorch's (the ratio is minitorch / PyTorch: above
    1 means minitorch is faster here, unlike the time tables)."""
    print("\nGEMM TFLOP/s: minitorch / PyTorch (ratio) per precision")
    print(f"{'N':>6} " + " ".join(f"{p:>22}" for p in PRECISIONS))
    for n in sizes:
        cells = []
        for p in PRECISIONS:
            mt = gemm_tflops(minitorch, n, p)
            ref = gemm_tflops(torch, n, p) if torch else float("nan")
            cells.append(f"{mt:>7.1f} /{ref:>6.1f} ({mt / ref:4.2f})")
        print(f"{n:>6} " + " ".join(f"{c:>22}" for c in cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smaller sizes (a quick look, not the issue's table)")
    p.add_argument("--sizes", type=int, nargs="*", default=[256, 1024, 4096], help="matmul GFLOP/s sizes")
    args = p.parse_args()
    if not minitorch.cuda.is_available() or minitorch.cuda.is_emulated():
        why = "the CUDA backend is emulated on the CPU" if minitorch.cuda.is_emulated() else "no CUDA GPU is available"
        print(f"bench_cuda: skipped — {why} (minitorch.cuda.is_available()={minitorch.cuda.is_available()}).")
        sys.exit(0)
    torch = _torch()
    print("PyTorch:", f"{torch.__version__} (TF32 off)" if torch else "not installed with CUDA: ratios are nan")

    cudnn = minitorch.backends.cudnn
    print("minitorch convolutions:", f"cuDNN {cudnn.version()}" if cudnn.is_available()
          else f"im2col + GEMMs ({cudnn.unavailable_reason()})")

    mt_rows, n24 = workloads(minitorch, args.quick)
    torch_rows = workloads(torch, args.quick)[0] if torch else None
    times = table("Ops (ms per call)", mt_rows, torch_rows, torch)
    print(f"full sum bandwidth: {4 * n24 / (times[0] / 1e3) / 1e12:.2f} TB/s")
    if cudnn.is_available():  # the teaching path on the same rows, for the lecture's comparison
        conv_rows = [i for i, (name, _) in enumerate(mt_rows) if name.startswith(("conv2d", "small CNN"))]
        with cudnn.flags(enabled=False):
            table("Convolutions without cuDNN (backends.cudnn.enabled = False: im2col + GEMMs)",
                  [mt_rows[i] for i in conv_rows], [torch_rows[i] for i in conv_rows] if torch else None, torch)
    table("Training steps (ms per step)", training_steps(minitorch), training_steps(torch) if torch else None, torch)

    print(f"\n{'N':>6} {'naive GF/s':>11} {'tiled GF/s':>11} {'cuBLAS GF/s':>12}")
    for n in args.sizes:
        row = [gflops(impl, n) if (impl != "naive" or n <= 2048) else float("nan") for impl in ("naive", "tiled", "cublas")]
        print(f"{n:>6} {row[0]:>11.1f} {row[1]:>11.1f} {row[2]:>12.1f}")
    precision_table(args.sizes, torch)


if __name__ == "__main__":
    main()
