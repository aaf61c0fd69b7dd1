"""CPU speed beside PyTorch and NumPy, in one run: ``python benchmarks/bench_cpu.py``.

The table of the CPU-speed issue (issue 11): transcendental maps on 10^6 floats, a full
sum, cheap elementwise ops, training steps of the lectures' networks (batch 64) and a
16-op autograd chain. Best of several repeats; ``--threads 1`` (default) sets minitorch,
PyTorch and NumPy's BLAS to one thread. PyTorch is optional (``-`` where absent); the
ratio column is minitorch / PyTorch (below 1: minitorch is faster), else / NumPy.

Targets (issue 11), one thread: every elementwise row <= 1.0x PyTorch; the Sigmoid MLP
step <= 0.7x, the ReLU MLP step <= 0.5x, the CNN step <= 0.7x; two threads never slower
than one (``--threads 2``). Issue 32 adds the BN-CNN step (<= 0.8x), rows for single
convolution layers (forward, and forward + both gradients), and op rows at the end
(BatchNorm2d, max/avg pooling, sum/mean over all and one dim), which are medians of
several rounds, steadier on a loaded machine.
"""
from __future__ import annotations

import argparse
import os
import sys


def _threads_from_argv(argv) -> str:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


# One thread means one thread for every library in the table: NumPy's and PyTorch's BLAS
# read these when they load (torch.set_num_threads does not reach a system OpenBLAS, whose
# pool would otherwise run PyTorch's GEMMs on two threads in a "one thread" row).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _threads_from_argv(sys.argv))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minitorch  # noqa: E402
from bench_cuda import train_step  # noqa: E402
from timing import best_of  # noqa: E402

try:
    import torch
except ImportError:  # optional: the table then compares with NumPy only
    torch = None


def fmt(t):
    return f"{t * 1e3:9.3f}" if t is not None else f"{'-':>9}"


def row(name, t_mt, t_torch=None, t_np=None):
    ref = t_torch if t_torch is not None else t_np
    ratio = f"{t_mt / ref:6.2f}x" if ref else f"{'-':>7}"
    print(f"{name:<44}{fmt(t_mt)}{fmt(t_torch)}{fmt(t_np)} {ratio}")


def elementwise_rows(n: int) -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal(n).astype(np.float32)
    y_np = rng.standard_normal(n).astype(np.float32)
    a, b = minitorch.tensor(x_np), minitorch.tensor(y_np)
    ta, tb = (torch.from_numpy(x_np), torch.from_numpy(y_np)) if torch else (None, None)
    cases = [
        ("tanh", lambda: a.tanh(), lambda: ta.tanh(), lambda: np.tanh(x_np)),
        ("sigmoid", lambda: a.sigmoid(), lambda: ta.sigmoid(), lambda: 1 / (1 + np.exp(-x_np))),
        ("exp", lambda: a.exp(), lambda: ta.exp(), lambda: np.exp(x_np)),
        ("abs().log()", lambda: a.abs().log(), lambda: ta.abs().log(), lambda: np.log(np.abs(x_np))),
        ("sum()", lambda: a.sum(), lambda: ta.sum(), lambda: x_np.sum()),
        ("a * b", lambda: a * b, lambda: ta * tb, lambda: x_np * y_np),
        ("a + 1.0", lambda: a + 1.0, lambda: ta + 1.0, lambda: x_np + 1.0),
        ("relu", lambda: a.relu(), lambda: ta.relu(), lambda: np.maximum(x_np, 0)),
    ]
    number = max(3, int(2e7 / n))
    with np.errstate(all="ignore"):
        for name, f_mt, f_torch, f_np in cases:
            row(f"{name}, {n:.0e} floats", best_of(f_mt, 5, number),
                best_of(f_torch, 5, number) if torch else None, best_of(f_np, 5, number))


def cpu_step(lib, model, opt):
    """One SGD step of ``model`` on a fixed random batch of 64 (minitorch or torch)."""
    in_shape = (64, 784) if isinstance(model[0], lib.nn.Linear) else (64, 1, 28, 28)
    return train_step(lib, model, opt, lib.randn(*in_shape), lib.randint(0, 10, (64,)))


def pair(build, lr: float, momentum: float = 0.0):
    """The same network, built by ``build(nn_module)``, stepped in minitorch and in PyTorch."""
    minitorch.manual_seed(0)
    libs = [minitorch] + ([torch] if torch else [])
    steps = []
    for lib in libs:
        model = build(lib.nn)
        steps.append(cpu_step(lib, model, lib.optim.SGD(model.parameters(), lr=lr, momentum=momentum)))
    return steps[0], (steps[1] if torch else None)


def mlp(activation: str):
    return lambda m: m.Sequential(m.Linear(784, 128), getattr(m, activation)(), m.Linear(128, 10))


def cnn(m):
    return m.Sequential(m.Conv2d(1, 8, 3, padding=1), m.ReLU(), m.MaxPool2d(2),
                        m.Conv2d(8, 16, 3, padding=1), m.ReLU(), m.MaxPool2d(2),
                        m.Flatten(), m.Linear(16 * 7 * 7, 10))


def bn_cnn(m):
    """The small CNN with BatchNorm after each convolution (issue 32)."""
    return m.Sequential(m.Conv2d(1, 8, 3, padding=1), m.BatchNorm2d(8), m.ReLU(), m.MaxPool2d(2),
                        m.Conv2d(8, 16, 3, padding=1), m.BatchNorm2d(16), m.ReLU(), m.MaxPool2d(2),
                        m.Flatten(), m.Linear(16 * 7 * 7, 10))


# Convolution layers alone (issue 32): the course's narrow ones and two wider ones.
# (input shape, out_channels): 3x3 kernels, padding 1, float32.
CONV_SHAPES = [((64, 1, 28, 28), 8), ((64, 8, 14, 14), 16), ((64, 16, 14, 14), 32), ((64, 32, 7, 7), 64)]


def conv_rows() -> None:
    rng = np.random.default_rng(2)
    for shape, out_ch in CONV_SHAPES:
        x_np = rng.standard_normal(shape).astype(np.float32)
        w_np = (rng.standard_normal((out_ch, shape[1], 3, 3)) * 0.1).astype(np.float32)
        b_np = np.zeros(out_ch, np.float32)
        fns = []
        for lib in [minitorch] + ([torch] if torch else []):
            # a first layer (one input channel) needs no input gradient, as in a network
            x = lib.tensor(x_np, requires_grad=shape[1] > 1)
            w, b = lib.tensor(w_np, requires_grad=True), lib.tensor(b_np, requires_grad=True)
            F = lib.nn.functional

            def fwd(F=F, x=x, w=w, b=b, lib=lib):
                with lib.no_grad():
                    F.conv2d(x, w, b, padding=1)

            def fwd_bwd(F=F, x=x, w=w, b=b):
                F.conv2d(x, w, b, padding=1).sum().backward()
                x.grad = w.grad = b.grad = None

            fns.append((fwd, fwd_bwd))
        label = f"conv {tuple(shape)}->{out_ch} k3 p1"
        f_torch = fns[1] if torch else (None, None)
        row(f"{label} fwd", best_of(fns[0][0], 5, 20), best_of(f_torch[0], 5, 20) if torch else None)
        row(f"{label} fwd+bwd", best_of(fns[0][1], 5, 10), best_of(f_torch[1], 5, 10) if torch else None)


def chain_pair():
    """16 ops with tanh on 64x64, forward and backward."""
    def run(lib, x):
        h = x
        for _ in range(4):
            h = (h * 0.5 + 0.1).tanh() - h * 0.25
        h.sum().backward()

    x_np = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    x = minitorch.tensor(x_np, requires_grad=True)
    tx = torch.tensor(x_np, requires_grad=True) if torch else None
    return (lambda: run(minitorch, x)), ((lambda: run(torch, tx)) if torch else None)


def first_steps(step, n: int = 20) -> float:
    """Median of the first n steps (what a fresh notebook pays), after one warm-up."""
    import time
    step()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--only", choices=("steps", "conv", "elementwise", "ops"), help="run one section of the table")
    args = p.parse_args(argv)
    minitorch.set_num_threads(args.threads)
    if torch:
        torch.set_num_threads(args.threads)
    print(f"minitorch {minitorch.__version__} (SIMD math: {minitorch.backends.cpu.get_cpu_capability()}), "
          f"PyTorch {torch.__version__ if torch else 'absent'}, NumPy {np.__version__}; threads={args.threads}")
    print(f"{'workload (ms per call)':<44}{'minitorch':>9}{'PyTorch':>9}{'NumPy':>9}  ratio")
    # The training steps first, in this fresh process: their first steps are what a new notebook sees.
    for name, (f_mt, f_torch) in () if args.only not in (None, "steps") else (("Sigmoid MLP 784-128-10 step, batch 64", pair(mlp("Sigmoid"), 0.1)),
                                  ("ReLU MLP 784-128-10 step, batch 64", pair(mlp("ReLU"), 0.1)),
                                  ("small CNN step (2 conv, 2 pool, linear), b 64", pair(cnn, 0.05, 0.9)),
                                  ("BN-CNN step (the CNN + BatchNorm2d), b 64", pair(bn_cnn, 0.05, 0.9))):
        t_first = first_steps(f_mt)
        row(name, best_of(f_mt, 5, 20), best_of(f_torch, 5, 20) if f_torch else None)
        row("  (median of its first 20 steps)", t_first)
    if args.only in (None, "elementwise"):
        f_mt, f_torch = chain_pair()
        row("16-op chain with tanh, 64x64, fwd+bwd", best_of(f_mt, 5, 50), best_of(f_torch, 5, 50) if f_torch else None)
    if args.only in (None, "conv"):
        conv_rows()
    if args.only in (None, "elementwise"):
        elementwise_rows(args.n)
    if args.only in (None, "ops"):
        norm_pool_reduce_rows()


# ---- batch norm, pooling and reductions, op by op (issue 32) ----

def median_of(fn, repeat: int = 7, number: int = 10) -> float:
    """Median seconds per call over `repeat` rounds of `number` calls (after one warm-up):
    steadier than the best on a loaded machine."""
    import time
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return float(np.median(times))


def norm_pool_reduce_rows() -> None:
    """BatchNorm2d training forward+backward, max/avg pooling forward+backward and sum/mean,
    minitorch beside PyTorch (medians of several rounds)."""
    rng = np.random.default_rng(2)

    def both(x_np, f_mt, f_torch, grad: bool):
        a = minitorch.tensor(x_np, requires_grad=grad)
        t = torch.tensor(x_np, requires_grad=grad) if torch else None
        return median_of(lambda: f_mt(a)), (median_of(lambda: f_torch(t)) if torch else None)

    def fwd_bwd(f):
        return lambda x: f(x).sum().backward()

    for shape in ((64, 16, 14, 14), (32, 64, 56, 56)):
        x = rng.standard_normal(shape).astype(np.float32)
        bn_mt, bn_t = minitorch.nn.BatchNorm2d(shape[1]), (torch.nn.BatchNorm2d(shape[1]) if torch else None)
        row(f"BatchNorm2d train fwd+bwd {shape}", *both(x, fwd_bwd(bn_mt), fwd_bwd(bn_t) if torch else None, True))
    pools = (("max_pool2d", minitorch.nn.functional.max_pool2d, torch.nn.functional.max_pool2d if torch else None),
             ("avg_pool2d", minitorch.nn.functional.avg_pool2d, torch.nn.functional.avg_pool2d if torch else None))
    for shape, k, s, p in (((64, 8, 28, 28), 2, 2, 0), ((64, 16, 28, 28), 3, 2, 1), ((64, 16, 28, 28), 3, 1, 1)):
        x = rng.standard_normal(shape).astype(np.float32)
        for name, f_mt, f_t in pools:
            row(f"{name} k{k} s{s} p{p} {shape} fwd+bwd",
                *both(x, fwd_bwd(lambda a: f_mt(a, k, s, p)), fwd_bwd(lambda t: f_t(t, k, s, p)) if torch else None,
                      True))
    x = rng.standard_normal((1000, 1000)).astype(np.float32)
    for name, f in (("sum()", lambda a: a.sum()), ("mean()", lambda a: a.mean()), ("sum(0)", lambda a: a.sum(0)),
                    ("sum(1)", lambda a: a.sum(1)), ("mean(1)", lambda a: a.mean(1))):
        row(f"{name} of 1000x1000 floats", *both(x, f, f, False))


if __name__ == "__main__":
    main()
