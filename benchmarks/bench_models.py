"""Training steps of the models students build after MNIST, beside PyTorch in one run:
``python benchmarks/bench_models.py [--device cuda|cpu] [--quick] [--top N]``.

The models (written once, for either library: their APIs match):

- a ResNet-style net: a stem and 4 stages of two residual conv-BN-ReLU blocks (32, 64,
  128, 256 channels), batch 128 of 32x32 images, SGD with momentum; in FP32 and under
  ``autocast(bfloat16)`` (16-bit convolutions, mixed batch norm: float32 parameters);
- a GPT-style language model: 4 pre-norm decoder blocks (d 384, 6 heads, causal
  scaled_dot_product_attention, a 4x GELU MLP), T 256, batch 16, AdamW; in FP32 and under
  ``autocast(bfloat16)``;
- a row-LSTM on MNIST: each image row is a step of an LSTM(28, 128), batch 64, Adam.

For each: the median milliseconds per step (after warm-up) on both sides and the ratio
minitorch / PyTorch (below 1: minitorch is faster), the peak of allocated memory over one step
on both sides (max_memory_allocated; the issue's target: at most PyTorch's), FP32 with TF32 off on both sides
(``--tf32`` turns it on for both), and minitorch's own profiler's top ops for one step, with
its kernel launch count. On a CUDA GPU with a CUDA build of PyTorch this prints the table
of the GPU-speed issue; ``--device cpu`` runs the same models on the CPU (PyTorch on the
CPU beside it, with both libraries on ``--threads`` threads); ``--quick`` shrinks every
model (a smoke run: the tests use it; its numbers mean little). ``--cudnn-benchmark`` times
convolution algorithms on both sides instead of taking cuDNN's heuristics,
``MINITORCH_CUDA_ATTENTION=rows|tiled|wmma|mma`` picks minitorch's family of fused-attention kernels, and
``MINITORCH_CUDNN_API=legacy`` runs minitorch's convolutions on cuDNN's legacy functions.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import minitorch


# ---- the models, for either library ---------------------------------------------------------

def resnet(lib, widths=(32, 64, 128, 256), classes=10):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.skip = None
            if stride != 1 or cin != cout:
                self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = lib.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return lib.relu(out + (x if self.skip is None else self.skip(x)))

    layers = [nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU()]
    cin = widths[0]
    for i, w in enumerate(widths):
        layers += [Block(cin, w, 1 if i == 0 else 2), Block(w, w, 1)]
        cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def gpt(lib, vocab=512, d=384, heads=6, layers=4, T=256):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, L, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (t.reshape(B, L, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, L, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, idx):
            pos = lib.arange(idx.shape[1], device=idx.device)
            return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))

    return GPT()


def row_lstm(lib, hidden=128):
    nn = lib.nn

    class RowLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.head = nn.LSTM(28, hidden, batch_first=True), nn.Linear(hidden, 10)

        def forward(self, x):
            out, _ = self.lstm(x.reshape(x.shape[0], 28, 28))
            return self.head(out[:, -1])

    return RowLSTM()


def workloads(lib, device: str, quick: bool):
    """(name, make) pairs; make() returns one training step to time (a fresh model each)."""
    F = lib.nn.functional
    lib.manual_seed(0)

    def step_fn(model, opt, x, y, autocast=None):
        def step():
            if autocast:
                with lib.autocast(device_type=device, dtype=autocast):
                    logits = model(x)
            else:
                logits = model(x)
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        return step

    # The sizes, and the names the table gives them (--quick's are a smoke run's: launch-bound,
    # so they say nothing of the targets, and are named for what they are).
    n, side, widths = (8, 16, (8, 16, 16, 32)) if quick else (128, 32, (32, 64, 128, 256))
    b, T, d, heads, layers = (2, 32, 64, 4, 2) if quick else (16, 256, 384, 6, 4)
    rows, hidden = (8, 32) if quick else (64, 128)

    def resnet_step(autocast=None):
        def make():
            model = resnet(lib, widths).to(device)
            opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
            x = lib.randn(n, 3, side, side, device=device)
            return step_fn(model, opt, x, lib.randint(0, 10, (n,), device=device), autocast)
        return make

    def gpt_step(autocast=None):
        def make():
            model = gpt(lib, 512, d, heads, layers, T).to(device)
            opt = lib.optim.AdamW(model.parameters(), lr=3e-4)
            idx = lib.randint(0, 512, (b, T), device=device)
            return step_fn(model, opt, idx, lib.randint(0, 512, (b, T), device=device), autocast)
        return make

    def lstm_step():
        model = row_lstm(lib, hidden).to(device)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        return step_fn(model, opt, lib.randn(rows, 1, 28, 28, device=device),
                       lib.randint(0, 10, (rows,), device=device))

    return [(f"ResNet-style, b{n} {side}x{side}, SGD", resnet_step()),
            ("ResNet-style, autocast(bfloat16)", resnet_step(lib.bfloat16)),
            (f"GPT-style LM (d{d} h{heads} L{layers} T{T} b{b}), AdamW", gpt_step()),
            ("GPT-style LM, autocast(bfloat16)", gpt_step(lib.bfloat16)),
            (f"row-LSTM on MNIST, b{rows}, Adam", lstm_step)]


# ---- timing ------------------------------------------------------------------------------

def median_ms(step, sync, warmup: int, number: int) -> float:
    """The median of `number` timed steps, each waited for (sync), after `warmup` steps."""
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(number):
        t0 = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def peak_mib(lib, device: str, step, sync) -> float:
    """The peak of allocated memory over one step, in MiB (the model, its optimizer state, the
    step's activations and gradients): max_memory_allocated after reset_peak_memory_stats, as
    torch.cuda counts it. nan where the library keeps no such count (PyTorch on the CPU)."""
    mem = lib.cuda if device == "cuda" else getattr(lib, "cpu", None)
    if mem is None or not hasattr(mem, "max_memory_allocated"):
        return float("nan")
    sync()
    mem.reset_peak_memory_stats()
    step()
    sync()
    return mem.max_memory_allocated() / 2**20


def _torch(device: str, threads: int, tf32: bool, cudnn_benchmark: bool = False):
    """torch when it can run on `device` here, else None."""
    try:
        import torch
    except ImportError:
        return None
    if device == "cuda" and not torch.cuda.is_available():
        return None
    torch.set_num_threads(threads)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    if cudnn_benchmark:
        torch.backends.cudnn.benchmark = True
    return torch


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--quick", action="store_true", help="small models: a smoke run, not the issue's table")
    p.add_argument("--threads", type=int, default=1, help="CPU threads for both libraries (--device cpu)")
    p.add_argument("--tf32", action="store_true", help="allow TF32 in matmuls and convolutions on both sides")
    p.add_argument("--top", type=int, default=8, help="rows of minitorch's profiler table per model (0: none)")
    p.add_argument("--steps", type=int, default=None, help="timed steps per model (default 20, 3 with --quick)")
    p.add_argument("--cudnn-benchmark", action="store_true",
                   help="backends.cudnn.benchmark = True on both sides: convolution algorithms timed per shape "
                        "instead of picked by cuDNN's heuristics (to tell a poor pick from a slow kernel)")
    args = p.parse_args(argv)
    device = args.device
    if device == "cuda" and (not minitorch.cuda.is_available() or minitorch.cuda.is_emulated()):
        why = "the CUDA backend is emulated on the CPU" if minitorch.cuda.is_available() else "no CUDA GPU is available"
        print(f"bench_models: skipped on cuda — {why}; --device cpu runs the same models on the CPU.")
        return
    minitorch.set_num_threads(args.threads)
    minitorch.backends.cuda.matmul.allow_tf32 = args.tf32
    minitorch.backends.cudnn.allow_tf32 = args.tf32
    if args.cudnn_benchmark:
        minitorch.backends.cudnn.benchmark = True
    torch = _torch(device, args.threads, args.tf32, args.cudnn_benchmark)
    print(f"device {device}; PyTorch: {torch.__version__ if torch else 'not available here: ratios are nan'}; "
          f"TF32 {'on' if args.tf32 else 'off'}" + (f"; {args.threads} CPU thread(s)" if device == "cpu" else "")
          + ("; cuDNN benchmark mode" if args.cudnn_benchmark else ""))
    number = args.steps or (3 if args.quick else 20)
    warmup = 1 if args.quick else 5

    def mt_sync():
        if device == "cuda":
            minitorch.cuda.synchronize()

    def torch_sync():
        if device == "cuda":
            torch.cuda.synchronize()

    mt_rows = workloads(minitorch, device, args.quick)
    torch_rows = workloads(torch, device, args.quick) if torch else None
    print(f"\n{'training step (ms, median)':<44} {'minitorch':>10} {'PyTorch':>9} {'ratio':>7}"
          f" {'peak MiB':>9} {'PyTorch':>9} {'ratio':>7}")
    profiles = []
    for i, (name, make) in enumerate(mt_rows):
        step = make()
        mt = median_ms(step, mt_sync, warmup, number)
        mt_peak = peak_mib(minitorch, device, step, mt_sync)
        ref, ref_peak = float("nan"), float("nan")
        if torch_rows:
            ref_step = torch_rows[i][1]()
            ref = median_ms(ref_step, torch_sync, warmup, number)
            ref_peak = peak_mib(torch, device, ref_step, torch_sync)
        print(f"{name:<44} {mt:>10.2f} {ref:>9.2f} {mt / ref:>6.2f}x {mt_peak:>9.1f} {ref_peak:>9.1f}"
              f" {mt_peak / ref_peak:>6.2f}x", flush=True)
        if args.top:
            from minitorch.profiler import ProfilerActivity, profile

            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
            with profile(activities=acts) as prof:
                step()
                mt_sync()
            launches = sum(e.kernel_count for e in prof.events())
            sort = "device_time_total" if device == "cuda" else "cpu_time_total"
            profiles.append((name, launches, prof.key_averages().table(sort_by=sort, row_limit=args.top)))
    for name, launches, text in profiles:
        print(f"\n== {name}: one step, {launches} kernel launches; minitorch's top ops")
        print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
