"""The CPU's convolution paths (issue 32): ``backends.cpu.conv_algorithm`` = "im2col" (the
lectures' path), "direct" (cpu/conv_direct.cpp) and "auto" give the same values and both
gradients for conv2d, conv1d and conv_transpose2d, over strides, padding, dilation, groups,
batch 0 and 1, non-contiguous inputs and both float dtypes. The whole suite also runs with
MINITORCH_CPU_CAPABILITY=default in CI (the scalar loops); the 16-byte vector loops are
checked in a child process here.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import backends
from minitorch.testing import gradcheck

ALGOS = ("im2col", "direct", "auto")
TOL = {minitorch.float32: dict(rtol=1e-4, atol=1e-4), minitorch.float64: dict(rtol=1e-10, atol=1e-10)}

# (N, C, H, W, O, (KH, KW), stride, padding, dilation, groups)
CASES = [
    (3, 1, 28, 28, 8, (3, 3), 1, 1, 1, 1),     # the course's first layer (shrunk batch)
    (2, 8, 14, 14, 16, (3, 3), 1, 1, 1, 1),    # its second
    (2, 3, 9, 11, 5, (3, 3), 1, 0, 1, 1),      # no padding, odd sizes, 5 = 4 + 1 output channels
    (2, 4, 10, 7, 6, (5, 3), 1, (2, 1), 1, 2),  # groups, a non-square kernel
    (1, 2, 12, 20, 3, (3, 3), 1, 2, 2, 1),     # dilation 2 with its "same" padding
    (2, 6, 8, 8, 6, (3, 3), 1, 1, 1, 6),       # depthwise
    (2, 3, 9, 9, 4, (3, 3), 2, 1, 1, 1),       # stride 2: im2col whatever the choice
    (2, 3, 7, 7, 4, (3, 3), 1, 3, 1, 1),       # padding beyond the kernel's reach: im2col
    (2, 5, 6, 6, 7, (1, 1), 1, 0, 1, 1),       # 1x1
    (1, 2, 4, 37, 3, (2, 4), 1, (1, 2), 1, 1),  # a row longer than two vectors, even kernel
    (2, 1, 28, 28, 6, (5, 5), 1, 2, 1, 1),     # LeNet's first layer (5-wide taps unrolled)
    (2, 6, 14, 14, 16, (5, 5), 1, 0, 1, 1),    # its second
    (1, 3, 13, 19, 5, (3, 5), 1, (1, 4), (1, 2), 1),  # 5 wide, dilated, 5 = 4 + 1 channels
]


def _rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float64 if dtype == minitorch.float64
                                                                       else np.float32)


def _run(fn, arrays, dtype, algo):
    """fn(*tensors) under algo: its value and the gradient of every input (sum of y * r)."""
    with backends.cpu.use_conv_algorithm(algo):
        ts = [minitorch.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
        y = fn(*ts)
        r = minitorch.tensor(_rand(tuple(y.shape), dtype, 99), dtype=dtype)
        (y * r).sum().backward()
        return [y.detach().numpy()] + [t.grad.numpy() for t in ts]


def _same_everywhere(fn, arrays, dtype):
    ref = _run(fn, arrays, dtype, "im2col")
    for algo in ALGOS[1:]:
        got = _run(fn, arrays, dtype, algo)
        for r, g in zip(ref, got):
            assert g.shape == r.shape
            np.testing.assert_allclose(g, r, **TOL[dtype], err_msg=algo)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("case", CASES)
def test_conv2d_paths_agree(case, dtype):
    N, C, H, W, O, k, stride, pad, dil, groups = case
    x, w, b = _rand((N, C, H, W), dtype, 1), _rand((O, C // groups, *k), dtype, 2), _rand((O,), dtype, 3)
    _same_everywhere(lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=pad, dilation=dil, groups=groups),
                     [x, w, b], dtype)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("stride,pad,out_pad", [(1, 1, 0), (1, 0, 0), (2, 1, 1)])
def test_conv_transpose2d_paths_agree(dtype, stride, pad, out_pad):
    x, w, b = _rand((2, 6, 7, 9), dtype, 4), _rand((6, 2, 3, 3), dtype, 5), _rand((4,), dtype, 6)
    _same_everywhere(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=stride, padding=pad, output_padding=out_pad,
                                                        groups=2), [x, w, b], dtype)


def test_conv1d_paths_agree():
    x, w = _rand((3, 4, 50), minitorch.float32, 7), _rand((8, 4, 5), minitorch.float32, 8)
    _same_everywhere(lambda x, w: F.conv1d(x, w, padding=2), [x, w], minitorch.float32)


@pytest.mark.parametrize("n", [0, 1])
def test_small_batches(n):
    x, w = _rand((n, 2, 6, 6), minitorch.float64, 9), _rand((3, 2, 3, 3), minitorch.float64, 10)
    _same_everywhere(lambda x, w: F.conv2d(x, w, padding=1), [x, w], minitorch.float64)


def test_non_contiguous_input_and_weight():
    base = _rand((5, 4, 12, 10), minitorch.float32, 11)
    wbase = _rand((3, 6, 3, 3), minitorch.float32, 12)
    outs = {}
    for algo in ALGOS:
        with backends.cpu.use_conv_algorithm(algo):
            xl = minitorch.tensor(base, requires_grad=True)
            wl = minitorch.tensor(wbase, requires_grad=True)
            x = xl.permute(1, 0, 3, 2)[:, ::2]  # (4, 3, 10, 12), strided
            w = wl.transpose(0, 1)  # (6, 3, 3, 3)
            y = F.conv2d(x, w, padding=1)
            (y * y).sum().backward()
            outs[algo] = (y.detach().numpy(), xl.grad.numpy(), wl.grad.numpy())
    for algo in ALGOS[1:]:
        for r, g in zip(outs["im2col"], outs[algo]):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-3)


def test_gradcheck_direct_float64():
    with backends.cpu.use_conv_algorithm("direct"):
        x = minitorch.tensor(_rand((2, 3, 6, 5), minitorch.float64, 13), requires_grad=True)
        w = minitorch.tensor(_rand((4, 3, 3, 3), minitorch.float64, 14), requires_grad=True)
        b = minitorch.tensor(_rand((4,), minitorch.float64, 15), requires_grad=True)
        assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1, dilation=(1, 2)), (x, w, b))


def test_training_step_matches():
    """Two SGD steps of the course's CNN give the same parameters on every path."""
    def train(algo):
        minitorch.manual_seed(0)
        nn = minitorch.nn
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10)).double()
        opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
        x = minitorch.tensor(_rand((4, 1, 28, 28), minitorch.float64, 16))
        y = minitorch.tensor([1, 2, 3, 4])
        with backends.cpu.use_conv_algorithm(algo):
            for _ in range(2):
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
        return [p.detach().numpy() for p in model.parameters()]

    ref = train("im2col")
    for algo in ALGOS[1:]:
        for r, g in zip(ref, train(algo)):
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-10)


def test_switch():
    assert backends.cpu.conv_algorithm == "auto"
    with backends.cpu.use_conv_algorithm("im2col"):
        assert backends.cpu.conv_algorithm == "im2col"
    assert backends.cpu.conv_algorithm == "auto"
    with pytest.raises(ValueError, match="conv_algorithm.*'winograd'"):
        backends.cpu.conv_algorithm = "winograd"
    assert backends.cpu.conv_algorithm == "auto"


_CHILD = """
import numpy as np, minitorch, minitorch.nn.functional as F
assert minitorch.backends.cpu.get_cpu_capability() == {cap!r}, minitorch.backends.cpu.get_cpu_capability()
rng = np.random.default_rng(0)
for dt, tol in ((np.float32, 1e-4), (np.float64, 1e-10)):
    for (N, C, H, W, O, g, dil) in ((2, 3, 9, 13, 5, 1, 1), (1, 4, 6, 19, 6, 2, 2)):
        x = rng.standard_normal((N, C, H, W)).astype(dt)
        w = rng.standard_normal((O, C // g, 3, 3)).astype(dt)
        res = []
        for algo in ("im2col", "direct"):
            minitorch.backends.cpu.conv_algorithm = algo
            xt, wt = minitorch.tensor(x, requires_grad=True), minitorch.tensor(w, requires_grad=True)
            y = F.conv2d(xt, wt, padding=dil, dilation=dil, groups=g)
            (y * y).sum().backward()
            res.append([y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()])
        for a, b in zip(*res):
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol * 10)
print("ok")
"""


@pytest.mark.skipif(backends.cpu.get_cpu_capability() not in ("AVX2", "SSE"), reason="x86-64 capabilities")
@pytest.mark.parametrize("cap", ["sse", "default"])
def test_other_capabilities_in_a_child(cap):
    env = dict(os.environ, MINITORCH_CPU_CAPABILITY=cap)
    want = {"sse": "SSE", "default": "DEFAULT"}[cap]
    out = subprocess.run([sys.executable, "-c", _CHILD.format(cap=want)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_two_threads_split_the_batch_and_agree():
    """Batch 64 of the first layer is split over two threads (the weight gradient sums one
    set of partial sums per thread): the same numbers as im2col on one thread."""
    x, w = _rand((64, 1, 28, 28), minitorch.float64, 17), _rand((8, 1, 3, 3), minitorch.float64, 18)
    ref = _run(lambda x, w: F.conv2d(x, w, padding=1), [x, w], minitorch.float64, "im2col")
    prev = minitorch.get_num_threads()
    minitorch.set_num_threads(2)
    try:
        got = _run(lambda x, w: F.conv2d(x, w, padding=1), [x, w], minitorch.float64, "direct")
    finally:
        minitorch.set_num_threads(prev)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-10)
