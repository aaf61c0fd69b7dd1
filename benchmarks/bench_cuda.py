"""GPU benchmarks: ``python benchmarks/bench_cuda.py [--quick]``.

On a real GPU, in one run and beside PyTorch when a CUDA build of torch is installed
(FP32 on both sides, TF32 off):

1. the op tables of the CUDA-speed issues — full and leading-dim sums, softmax,
   cross_entropy, conv2d, a small CNN's forward+backward, an MLP's Adam step,
   elementwise ops, a large matmul, gather / cat / index_select / embedding backward,
   layer_norm and BatchNorm2d forward+backward, causal attention (float32 and bfloat16), an
   LSTM, sort, cumsum, the small CNN under bf16 autocast, and bfloat16 add, relu backward and
   conv2d — as ms per call and the minitorch / PyTorch ratio (below 1 means minitorch is
   faster), plus the full sum's bandwidth;
2. training steps of the lectures' models: the MNIST MLP and a small CNN, batch 64, and the
   attention rows again with each family of fused kernels (MINITORCH_CUDA_ATTENTION), the
   softmax rows through the online merge (MINITORCH_CUDA_SOFTMAX=merge), the gather and
   index_select rows through the one-element-a-thread kernels (MINITORCH_CUDA_GATHER=simple),
   and the convolution rows through cuDNN's legacy functions (MINITORCH_CUDNN_API=legacy);
3. GFLOP/s of the naive, tiled and cuBLAS matmul kernels (the lectures' comparison);
4. GEMM TFLOP/s in FP32, TF32 (backends.cuda.matmul.allow_tf32 on both sides), FP16 and
   BF16 (16-bit inputs and outputs), beside PyTorch.

Without a GPU it says so and exits cleanly (the emulated build runs kernels on the CPU,
so its timings mean nothing).
"""
from __future__ import annotations

import argparse
import os
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


def forward_backward(lib, model, x, y, autocast=None):
    """model's forward and backward on (x, y); under autocast(autocast) when given a dtype."""
    def step():
        model.zero_grad()
        if autocast is None:
            logits = model(x)
        else:
            with lib.autocast(device_type=DEVICE, dtype=autocast):
                logits = model(x)
        lib.nn.functional.cross_entropy(logits.float(), y).backward()
    return step


def backward_of(lib, fn, *leaves):
    """A call that runs fn() (on leaves that require grad) and its backward with a fixed
    upstream gradient of ones; the leaves' gradients are dropped each time, so every call
    does the same work (no accumulation into grads from earlier calls)."""
    out = fn()
    g = lib.ones_like(out[0] if isinstance(out, tuple) else out)

    def step():
        for t in leaves:
            t.grad = None
        y = fn()
        (y[0] if isinstance(y, tuple) else y).backward(g)
    return step


def workloads(lib, quick: bool, tiny: bool = False):
    """(name, make) pairs: make() builds the inputs on the GPU and returns the call to time.
    quick: smaller sizes; tiny: sizes for the tests, which check that every row runs."""
    F = lib.nn.functional

    def pick(full, small, smallest):
        return smallest if tiny else small if quick else full

    n24 = 1 << pick(24, 20, 10)
    side = pick(4096, 1024, 64)
    batch = pick(64, 8, 1)
    hw = pick(56, 56, 8)  # the conv and batch-norm rows' height and width

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

    def softmax(C=1000, rows=None):
        def make():
            x = randn(rows or side, C)
            return lambda: F.softmax(x, dim=-1)
        return make

    def cross_entropy():
        x, y = randn(side, 1000), labels(side, 1000)
        return lambda: F.cross_entropy(x, y)

    def conv():
        x, w, b = randn(batch, 64, hw, hw), randn(64, 64, 3, 3), randn(64)
        return lambda: F.conv2d(x, w, b, padding=1)

    def cnn():
        model = small_cnn(lib).to(DEVICE)
        return forward_backward(lib, model, randn(pick(256, 256, 1), 1, 28, 28), labels(pick(256, 256, 1)))

    def mlp_adam():
        hidden = pick(4096, 1024, 32)
        model = mlp(lib, [784, hidden, hidden, 10]).to(DEVICE)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        return train_step(lib, model, opt, randn(pick(1024, 1024, 8), 784), labels(pick(1024, 1024, 8)))

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
        ts = [randn(pick(1024, 1024, 64), pick(1024, 1024, 64)) for _ in range(8)]
        return lambda: lib.cat(ts, 0)

    def index_select():
        x, idx = randn(side, 1000), lib.randint(0, 1000, (1000,), device=DEVICE)
        return lambda: x.index_select(1, idx)

    # The rest of the GPU-speed issue's op table: fused norms, attention, the LSTM, sort,
    # scan, and a CNN under bf16 autocast.
    def grad_randn(*shape):
        return randn(*shape).requires_grad_()

    def layer_norm(D=1024, rows=None):
        def make():
            x, w, b = grad_randn(rows or pick(8192, 1024, 8), D), grad_randn(D), grad_randn(D)
            return backward_of(lib, lambda: F.layer_norm(x, (D,), w, b), x, w, b)
        return make

    def batch_norm():
        bn = lib.nn.BatchNorm2d(64).to(DEVICE)
        x = grad_randn(batch, 64, hw, hw)
        return backward_of(lib, lambda: bn(x), x, bn.weight, bn.bias)

    def attention(dtype=None, head=64):
        def make():
            q, k, v = (grad_randn(pick(32, 4, 1), 8, pick(256, 256, 16), head) for _ in range(3))
            if dtype is not None:
                q, k, v = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))
            return backward_of(lib, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
        return make

    def bf16(*shape):
        return randn(*shape).to(lib.bfloat16)

    def add_bf16():
        a, b = bf16(n24), bf16(n24)
        return lambda: a + b

    def relu_bwd_bf16():
        x = bf16(n24).requires_grad_()
        y = lib.relu(x)
        g = lib.ones_like(y)
        return lambda: y.backward(g, retain_graph=True)

    def conv_bf16():
        x, w = bf16(batch, 64, hw, hw), bf16(64, 64, 3, 3)
        return lambda: F.conv2d(x, w, None, padding=1)

    def lstm():
        layer = lib.nn.LSTM(pick(128, 128, 8), pick(256, 256, 16), batch_first=True).to(DEVICE)
        x = grad_randn(pick(64, 64, 2), pick(28, 28, 4), pick(128, 128, 8))
        return backward_of(lib, lambda: layer(x), x, *layer.parameters())

    def sort():
        x = randn(side, 1000)
        return lambda: x.sort(dim=-1)

    def cumsum():
        x = randn(side, side)
        return lambda: x.cumsum(1)

    def cnn_bf16():
        model = small_cnn(lib).to(DEVICE)
        n = pick(256, 256, 1)
        return forward_backward(lib, model, randn(n, 1, 28, 28), labels(n), autocast=lib.bfloat16)

    vocab = pick(50000, 5000, 100)

    def embedding_bwd():
        w = randn(vocab, 512).requires_grad_()
        tokens = lib.randint(0, vocab, (pick(64, 64, 4), pick(128, 128, 8)), device=DEVICE)
        out = F.embedding(tokens, w)
        g = lib.ones_like(out)
        return lambda: out.backward(g, retain_graph=True)

    return [
        (f"x.sum(), 2^{n24.bit_length() - 1}", full_sum),
        (f"x.sum(0), {side}x{side}", sum0),
        (f"softmax(dim=-1), {side}x1000", softmax()),
        # rows past a warp's 1024 values (a block a row): other shapes than the issue's
        (f"softmax(dim=-1), {pick(4096, 1024, 4)}x{pick(8192, 8192, 1100)}",
         softmax(pick(8192, 8192, 1100), pick(4096, 1024, 4))),
        (f"cross_entropy fwd, {side}x1000", cross_entropy),
        (f"conv2d fwd 64->64 3x3, b{batch} {hw}x{hw}", conv),
        ("small CNN (1->32->64) fwd+bwd, b256", cnn),
        (f"MLP 784-{pick(4096, 1024, 32)}x2-10 Adam step, b1024", mlp_adam),
        (f"a + b, 2^{n24.bit_length() - 1}", add),
        (f"a * b broadcast, {side}x{side} * {side}", mul_broadcast),
        (f"exp, 2^{n24.bit_length() - 1}", exp),
        (f"matmul {side}^3", matmul),
        (f"gather(dim=1), {side}x1000", gather),
        ("cat of 8 x 1024^2 (dim 0)", cat8),
        (f"index_select(dim=1), {side}x1000", index_select),
        (f"embedding bwd, {vocab}x512, 64x128 tokens", embedding_bwd),
        (f"layer_norm fwd+bwd, {pick(8192, 1024, 8)}x1024", layer_norm()),
        (f"layer_norm fwd+bwd, {pick(2048, 256, 4)}x4096", layer_norm(4096, pick(2048, 256, 4))),
        (f"BatchNorm2d fwd+bwd, {batch}x64x{hw}x{hw}", batch_norm),
        (f"sdpa causal fwd+bwd, b{pick(32, 4, 1)} h8 T{pick(256, 256, 16)} d64", attention()),
        (f"sdpa causal fwd+bwd bf16, b{pick(32, 4, 1)} h8 T{pick(256, 256, 16)} d64", attention(lib.bfloat16)),
        (f"sdpa causal fwd+bwd bf16, b{pick(32, 4, 1)} h8 T{pick(256, 256, 16)} d128",
         attention(lib.bfloat16, 128)),
        ("LSTM fwd+bwd, b64 T28 128->256", lstm),
        (f"sort(dim=-1), {side}x1000", sort),
        (f"cumsum(dim=1), {side}x{side}", cumsum),
        ("small CNN fwd+bwd, autocast(bf16), b256", cnn_bf16),
        (f"a + b bf16, 2^{n24.bit_length() - 1}", add_bf16),
        (f"relu backward bf16, 2^{n24.bit_length() - 1}", relu_bwd_bf16),
        (f"conv2d fwd bf16 64->64 3x3, b{batch} {hw}x{hw}", conv_bf16),
    ], n24


def training_steps(lib, tiny: bool = False):
    """The lectures' models on MNIST-shaped batches of 64 (tiny: 2, for the tests): one SGD step each."""
    n = 2 if tiny else 64
    def randn(*shape):
        return lib.randn(*shape, device=DEVICE)

    def mnist_mlp():
        model = mlp(lib, [784, 128, 10]).to(DEVICE)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        return train_step(lib, model, opt, randn(n, 784), lib.randint(0, 10, (n,), device=DEVICE))

    def cnn():
        model = small_cnn(lib, 8, 16).to(DEVICE)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        return train_step(lib, model, opt, randn(n, 1, 28, 28), lib.randint(0, 10, (n,), device=DEVICE))

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


def rows_under_env(variable, values, prefixes, mt_rows, torch_rows, torch) -> None:
    """The rows whose names start with `prefixes`, again with environment variable `variable` set
    to each of `values` (minitorch reads these switches at every call)."""
    rows = [i for i, (name, _) in enumerate(mt_rows) if name.startswith(prefixes)]
    saved = os.environ.get(variable)
    try:
        for value in values:
            os.environ[variable] = value
            table(f"With {variable}={value}", [mt_rows[i] for i in rows],
                  [torch_rows[i] for i in rows] if torch else None, torch)
    finally:
        if saved is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = saved


def attention_families(mt_rows, torch_rows, torch) -> None:
    """The sdpa rows again with each family of fused-attention kernels asked for by
    MINITORCH_CUDA_ATTENTION (cuda/attention.cu: rows, tiled, wmma, mma; mma, the mma.sync kernels
    of cuda/attention_mma.cu, is the default on sm_80 on, for head dims up to 128)."""
    rows_under_env("MINITORCH_CUDA_ATTENTION", ("rows", "tiled", "wmma", "mma"), "sdpa", mt_rows, torch_rows,
                   torch)


def cudnn_legacy(mt_rows, torch_rows, torch) -> None:
    """The convolution rows again through cuDNN's legacy functions (MINITORCH_CUDNN_API=legacy),
    beside the graph API's plans above (cuda/cudnn_conv_graph.cu)."""
    rows_under_env("MINITORCH_CUDNN_API", ("legacy",), ("conv2d", "small CNN"), mt_rows, torch_rows, torch)


def kernel_switches(mt_rows, torch_rows, torch) -> None:
    """The softmax rows through the online merge (MINITORCH_CUDA_SOFTMAX=merge) and the gather
    and index_select rows through the readable one-element-a-thread kernels
    (MINITORCH_CUDA_GATHER=simple), beside the defaults above: the register softmax and the phased
    gathers, which keep more loads in flight (cuda/softmax.cu, cuda/indexing.cu, tools/sass.py).
    Then the sort row with its 1000-value lines sorted by CUB's BlockRadixSort
    (MINITORCH_CUDA_SORT=block, not yet the default) instead of the bitonic kernel (cuda/sort.cu),
    and the layer_norm row through the kernels that read a row in passes
    (MINITORCH_CUDA_LAYER_NORM=passes) instead of the register rows (cuda/layer_norm.cu)."""
    rows_under_env("MINITORCH_CUDA_SOFTMAX", ("merge",), "softmax", mt_rows, torch_rows, torch)
    rows_under_env("MINITORCH_CUDA_GATHER", ("simple",), ("gather", "index_select"), mt_rows, torch_rows, torch)
    rows_under_env("MINITORCH_CUDA_SORT", ("block",), "sort", mt_rows, torch_rows, torch)
    rows_under_env("MINITORCH_CUDA_LAYER_NORM", ("passes",), "layer_norm", mt_rows, torch_rows, torch)


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
    attention_families(mt_rows, torch_rows, torch)
    kernel_switches(mt_rows, torch_rows, torch)
    if cudnn.is_available():
        cudnn_legacy(mt_rows, torch_rows, torch)

    print(f"\n{'N':>6} {'naive GF/s':>11} {'tiled GF/s':>11} {'cuBLAS GF/s':>12}")
    for n in args.sizes:
        row = [gflops(impl, n) if (impl != "naive" or n <= 2048) else float("nan") for impl in ("naive", "tiled", "cublas")]
        print(f"{n:>6} {row[0]:>11.1f} {row[1]:>11.1f} {row[2]:>12.1f}")
    precision_table(args.sizes, torch)


if __name__ == "__main__":
    main()
