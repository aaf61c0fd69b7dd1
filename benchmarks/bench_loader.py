"""DataLoader worker processes against a slow dataset: ``python benchmarks/bench_loader.py``.

Part 1, the starving GPU: every sample takes 2 ms to "load" (a sleep, like reading a
file; ``--busy`` makes it CPU work instead) and every training step keeps the "GPU"
busy for 20 ms (a sleep: the CPU is free meanwhile). With ``num_workers=0`` loading and
training take turns; with workers the next batches load while the step runs, until
loading is no longer the bottleneck.

Part 2, the cost of moving one batch from a worker through shared memory: pack (worker
side, one copy) and, in the main process, unpack with one more copy (the default) or
zero-copy, beside a pickle round trip of the same arrays.

Timings on a small shared machine are indicative only.
"""
from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np

import minitorch
from minitorch.data import DataLoader, Dataset
from minitorch.data import _shared
from timing import best_of


class SlowDataset(Dataset):
    """``n`` samples of shape (3, 32, 32); each takes ``delay`` seconds to make."""

    def __init__(self, n: int, delay: float, busy: bool):
        self.n, self.delay, self.busy = n, delay, busy

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if self.busy:  # burn `delay` seconds of this process's CPU time, like decoding an image
            end = time.process_time() + self.delay  # CPU time: workers sharing a core take longer
            while time.process_time() < end:
                pass
        else:
            time.sleep(self.delay)
        return minitorch.from_numpy(np.full((3, 32, 32), i, dtype=np.float32)), i


def step_times(num_workers: int, args) -> tuple[float, float]:
    """Mean (step seconds, seconds waiting for data) over ``args.steps`` steps after the first."""
    ds = SlowDataset(args.batch_size * (args.steps + 1), args.sample_ms / 1000, args.busy)
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=num_workers)
    it = iter(loader)
    next(it)  # the first batch also pays for starting the workers
    waiting = 0.0
    t0 = time.perf_counter()
    for _ in range(args.steps):
        w0 = time.perf_counter()
        next(it)
        waiting += time.perf_counter() - w0
        time.sleep(args.gpu_ms / 1000)  # the GPU's work on this batch
    total = time.perf_counter() - t0
    return total / args.steps, waiting / args.steps


def main_side_time(batch, prefix: str, copy: bool, repeat: int = 5, number: int = 10) -> float:
    """Best mean seconds the main process spends on one packed batch: unpack it, read it
    once (zero-copy defers page faults to the first read) and free it."""
    best = float("inf")
    for _ in range(repeat):
        packed = [_shared.pack(batch, prefix) for _ in range(number)]
        t0 = time.perf_counter()
        for p in packed:
            x, _ = _shared.unpack(p, copy=copy)
            x.sum()
            del x
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def transport_table() -> None:
    prefix = f"bench{os.getpid()}_"
    print("\nOne batch through shared memory, per batch (best of 5). Worker: pack. Main process: unpack,")
    print("read once, free; with a copy (the default) or zero-copy. Pickle: dumps + loads, no pipe.")
    print(f"{'batch (f32 + int64 labels)':>26} | {'MB':>5} | {'pack':>7} | {'main, copy':>10} | {'main, 0-copy':>12} | "
          f"{'pickle':>7}")
    for shape in [(64, 1, 28, 28), (256, 1, 28, 28), (64, 3, 224, 224)]:
        x = minitorch.from_numpy(np.random.default_rng(0).random(shape, dtype=np.float32))
        y = minitorch.arange(shape[0])
        batch = (x, y)
        mb = (x.numel() * 4 + y.numel() * 8) / 2**20
        t_pack = best_of(lambda: _shared.free(_shared.pack(batch, prefix)), 5, 10)
        t_copy, t_zero = main_side_time(batch, prefix, True), main_side_time(batch, prefix, False)
        arrays = (x.numpy(), y.numpy())
        t_pickle = best_of(lambda: pickle.loads(pickle.dumps(arrays, protocol=5)), 5, 10)
        name = "x".join(map(str, shape))
        print(f"{name:>26} | {mb:5.1f} | {t_pack * 1e3:5.2f}ms | {t_copy * 1e3:8.2f}ms | {t_zero * 1e3:10.2f}ms | "
              f"{t_pickle * 1e3:5.2f}ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--sample-ms", type=float, default=2.0, help="time to make one sample")
    parser.add_argument("--gpu-ms", type=float, default=20.0, help="time the GPU spends on one step")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--busy", action="store_true", help="samples burn CPU instead of sleeping")
    args = parser.parse_args()

    load_ms = args.batch_size * args.sample_ms
    cores = len(os.sched_getaffinity(0))
    print(f"batch {args.batch_size} x {args.sample_ms:g} ms per sample = {load_ms:g} ms to load a batch in one "
          f"process ({'CPU work' if args.busy else 'sleep'}); GPU step {args.gpu_ms:g} ms; "
          f"{cores} cores")
    print(f"{'num_workers':>11} | {'step':>8} | {'waiting for data':>16} | {'GPU busy':>8} | {'ideal step':>10}")
    for n in args.workers:
        step, wait = step_times(n, args)
        in_parallel = min(n, cores) if args.busy else n  # CPU work: at most one worker per core
        ideal = load_ms + args.gpu_ms if n == 0 else max(load_ms / in_parallel, args.gpu_ms)
        print(f"{n:>11} | {step * 1e3:6.1f}ms | {wait * 1e3:14.1f}ms | {args.gpu_ms / 1e3 / step:8.0%} | "
              f"{ideal:8.1f}ms")
    transport_table()


if __name__ == "__main__":
    main()
