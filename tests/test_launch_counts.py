"""How much work the CUDA backend launches, counted through minitorch.profiler.

These are the structural checks of the CUDA-speed work: the counts and grid sizes are
exact and the same on a GPU and in the emulator, so they hold without a GPU (never
a time). Each test makes its inputs before the profile starts.
"""
from __future__ import annotations

import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import CUDA_SKIP_REASON
from minitorch import nn
from minitorch.profiler import ProfilerActivity, profile

pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)


def kernels(fn):
    """Every kernel launched while fn() runs."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
    return [k for e in prof.events() for k in e.kernels]


def blocks(k) -> int:
    return k.grid[0] * k.grid[1] * k.grid[2]


def test_cross_entropy_forward_is_at_most_three_launches():
    x = minitorch.randn(64, 1000, device="cuda")
    y = minitorch.randint(0, 1000, (64,), device="cuda")
    for reduction in ("mean", "sum", "none"):
        ks = kernels(lambda: F.cross_entropy(x, y, reduction=reduction))
        assert 1 <= len(ks) <= 3, (reduction, [k.name for k in ks])


def test_cross_entropy_backward_is_one_launch_per_node():
    x = minitorch.randn(64, 100, device="cuda", requires_grad=True)
    y = minitorch.randint(0, 100, (64,), device="cuda")
    loss = F.cross_entropy(x, y)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss.backward()
    ce = [e for e in prof.events() if e.name == "CrossEntropyLossBackward0"]
    assert len(ce) == 1 and len(ce[0].kernels) == 1, [(e.name, [k.name for k in e.kernels]) for e in prof.events()]


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("shape, dim", [((64, 1000), -1), ((64, 10), -1), ((8, 33, 5), 1), ((4, 2049), 1)])
def test_softmax_is_at_most_two_launches(fn, shape, dim):
    x = minitorch.randn(*shape, device="cuda")
    ks = kernels(lambda: fn(x, dim=dim))
    assert 1 <= len(ks) <= 2, [k.name for k in ks]


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("C, forward_kernel, backward_kernel",
                         [(10, "softmax_rows_kernel", "warp_rows_cached_kernel"),
                          (1000, "softmax_rows_kernel", "warp_rows_cached_kernel"),
                          (1025, "softmax_block_rows_kernel", "block_rows_kernel"),
                          (16385, "block_rows_kernel", "block_rows_kernel")])
def test_softmax_rows_up_to_1024_are_read_once_into_registers(monkeypatch, merge, log, C, forward_kernel,
                                                              backward_kernel):
    """softmax and its backward over rows of up to 1024: one warp per row, each lane's elements
    loaded into registers once, 4 rows per block: the forward in softmax_rows_kernel (max, sum of
    exps, write), or through the online merge of warp_rows_cached_kernel under
    MINITORCH_CUDA_SOFTMAX=merge; the same values as the CPU (tolerance for exp and the order of
    the adds)."""
    import numpy as np
    if merge:
        monkeypatch.setenv("MINITORCH_CUDA_SOFTMAX", "merge")
        forward_kernel = {"softmax_rows_kernel": "warp_rows_cached_kernel",
                          "softmax_block_rows_kernel": "block_rows_kernel"}.get(forward_kernel, forward_kernel)
    fn = F.log_softmax if log else F.softmax
    rows = 300 if C <= 1024 else 20
    x = minitorch.randn(rows, C, device="cuda", requires_grad=True)
    g = minitorch.randn(rows, C, device="cuda")
    y = fn(x, dim=1)
    forward = kernels(lambda: fn(x, dim=1))
    backward = kernels(lambda: y.backward(g, retain_graph=True))
    assert [k.name.split("<")[0] for k in forward] == [forward_kernel]
    assert [k.name.split("<")[0] for k in backward if "rows" in k.name] == [backward_kernel]
    if forward_kernel in ("softmax_rows_kernel", "warp_rows_cached_kernel"):
        assert blocks(forward[0]) == 300 // 4  # a warp a row
    elif forward_kernel == "softmax_block_rows_kernel":
        assert blocks(forward[0]) == rows  # a block a row
    xc = x.detach().cpu().requires_grad_()
    yc = fn(xc, dim=1)
    yc.backward(g.cpu())
    np.testing.assert_allclose(y.detach().cpu().numpy(), yc.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("C", [1, 31, 100, 1024, 1025, 4097, 16384])
def test_softmax_rows_in_registers_keep_the_special_values(monkeypatch, merge, log, C):
    """The register kernels (softmax_rows_kernel's max, then sum of exps; the online merge under
    MINITORCH_CUDA_SOFTMAX=merge) give what the CPU's online merge gives for -inf (masked)
    entries, a row of -inf only, a NaN, +inf entries (one: NaN there and 0 elsewhere; two or
    more: NaN), for rows of every register count."""
    import numpy as np
    if merge:
        monkeypatch.setenv("MINITORCH_CUDA_SOFTMAX", "merge")
    fn = F.log_softmax if log else F.softmax
    x = np.random.default_rng(C).standard_normal((12, C)).astype(np.float32)
    x[0, ::3] = -np.inf
    x[1, :] = -np.inf
    x[2, C // 2] = np.nan
    x[3, C - 1] = np.inf
    x[4, C // 2:] = -np.inf  # lanes whose every value is masked
    x[5, C // 3] = 80.0      # one lane's max far above the others'
    x[6, [0, C - 1]] = np.inf  # two +inf (one, for C = 1)
    x[7, 0] = np.inf
    x[7, C - 1] = np.nan     # +inf and NaN: NaN
    x[8, :] = np.inf
    x[9, :] = np.nan
    x[10, :] = -1e30
    x[11, 0] = -np.inf
    want = fn(minitorch.tensor(x), dim=1).numpy()
    got = fn(minitorch.tensor(x, device="cuda"), dim=1)
    path = ("warp_rows_cached_kernel" if merge else "softmax_rows_kernel") if C <= 1024 else (
        "block_rows_kernel" if merge else "softmax_block_rows_kernel")
    assert [k.name.split("<")[0] for k in kernels(lambda: fn(minitorch.tensor(x, device="cuda"), dim=1))
            if "rows" in k.name] == [path]
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert (np.isnan(got.cpu().numpy()) == np.isnan(want)).all()


@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16, minitorch.float64])
@pytest.mark.parametrize("C", [7, 64, 65, 512, 1000, 1500, 3000, 6000, 12000])
def test_softmax_rows_kernel_every_dtype(dtype, C):
    """softmax_rows_kernel and softmax_block_rows_kernel (C > 1024) in float32's and the 16-bit
    types' every register count: 16-bit rows read in place (one launch) and computed in
    float32, as the CPU computes them; float64 rows through the online merge."""
    import numpy as np
    x = minitorch.randn(9, C, dtype=dtype) * 4
    for fn in (F.softmax, F.log_softmax):
        want = fn(x, dim=-1).float().numpy()
        xd = x.to("cuda")
        ks = kernels(lambda: fn(xd, dim=-1))
        # float64 keeps the online merge (cuda/softmax.cu: the compiler spreads the loads out)
        merge = "warp_rows_cached_kernel" if C <= 1024 else "block_rows_kernel"
        fused = "softmax_rows_kernel" if C <= 1024 else "softmax_block_rows_kernel"
        assert [k.name.split("<")[0] for k in ks] == [merge if dtype == minitorch.float64 else fused]
        tol = 1e-12 if dtype == minitorch.float64 else 1e-2
        np.testing.assert_allclose(fn(xd, dim=-1).cpu().float().numpy(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16])
def test_16_bit_lines_of_up_to_4096_sort_in_one_launch(dtype):
    """float16 / bfloat16 sort, argsort and topk on lines of up to 4096: the bitonic kernel reads
    and writes 16 bits itself (packed keys), no staging copies; the same order and bits as the
    float32 sort of the same values (NaN and -0.0 kept as they were)."""
    import numpy as np
    x = minitorch.randn(6, 1000, device="cuda").to(dtype)
    x[0, :5] = float("nan")
    x[1, :3] = -0.0
    for call in (lambda t: t.sort(1), lambda t: t.sort(1, descending=True), lambda t: t.topk(7, 1)):
        ks = kernels(lambda: call(x))
        assert [k.name.split("<")[0] for k in ks] == ["bitonic_sort_kernel"], [k.name for k in ks]
        v, i = call(x)
        v32, i32 = call(x.float())
        assert v.dtype == dtype and minitorch.equal(i, i32)
        got, want = v.cpu().float().numpy(), x.cpu().float().numpy()[np.arange(6)[:, None], i.cpu().numpy()]
        np.testing.assert_array_equal(got, want)  # (float32 holds every 16-bit value exactly)
        assert (np.signbit(got) == np.signbit(want)).all()


def test_full_sum_spreads_over_many_blocks():
    x = minitorch.randn(1 << 22, device="cuda")
    ks = kernels(lambda: x.sum())
    assert max(blocks(k) for k in ks) >= 64, [(k.name, k.grid) for k in ks]
    assert len(ks) <= 2  # a two-pass (deterministic) reduction at most


@pytest.mark.parametrize("op", ["sum", "max", "argmax"])
def test_reducing_a_leading_dim_makes_no_copy(op):
    x = minitorch.randn(256, 300, device="cuda")
    ks = kernels(lambda: getattr(x, op)(0))
    assert not any("copy" in k.name for k in ks), [k.name for k in ks]
    assert len(ks) <= 2


def test_linear_forward_is_one_launch():
    layer = nn.Linear(784, 128).to("cuda")
    x = minitorch.randn(64, 784, device="cuda")
    ks = kernels(lambda: layer(x))
    assert len(ks) == 1, [k.name for k in ks]  # the GEMM adds the bias; W^T is read in place


def test_linear_backward_copies_nothing():
    layer = nn.Linear(784, 128).to("cuda")
    x = minitorch.randn(64, 784, device="cuda", requires_grad=True)
    out = layer(x).sum()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out.backward()
    lin = [e for e in prof.events() if e.name == "LinearBackward0"]
    assert len(lin) == 1
    assert not any("copy" in k.name for k in lin[0].kernels), [k.name for k in lin[0].kernels]


def test_relu_backward_is_one_launch():
    x = minitorch.randn(1000, device="cuda", requires_grad=True)
    y = x.relu().sum()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward()
    (relu,) = [e for e in prof.events() if e.name == "ReluBackward0"]
    assert len(relu.kernels) == 1, [k.name for k in relu.kernels]


@pytest.mark.parametrize("fn, made, node", [
    (lambda x: x.clamp(-0.5, 0.5), 0, "ClampBackward1"),
    # a tensor bound (its mul counted too), no gradient
    (lambda x: x.clamp(min=x.detach() * 0.5, max=0.5), 1, "ClampBackward1"),
    (F.hardtanh, 0, "HardtanhBackward0"),
    (F.relu6, 0, "HardtanhBackward0"),
    (lambda x: nn.Hardtanh(-2.0, 2.0)(x), 0, "HardtanhBackward0"),
], ids=["numbers", "tensor bound", "hardtanh", "relu6", "Hardtanh module"])
def test_clamp_with_two_bounds_is_one_launch_each_way(fn, made, node):
    """min(max(x, lo), hi) and its backward (clamp: g where x == y; hardtanh: g where
    lo < y < hi), each one ternary kernel."""
    x = minitorch.randn(1000, device="cuda", requires_grad=True)
    g = minitorch.randn(1000, device="cuda")
    out = []
    forward = kernels(lambda: out.append(fn(x)))
    assert len(forward) == 1 + made and forward[-1].name.startswith("ternary_dense_kernel"), forward
    assert out[0].grad_fn.name() == node
    assert len(kernels(lambda: out[0].backward(g))) == 1


@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool2d(x, 3, 2, 1),
    lambda x: F.avg_pool2d(x, 2),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda x: F.adaptive_avg_pool2d(x, 1),
    lambda x: F.adaptive_max_pool2d(x, 1),
], ids=["max", "avg", "avg padded", "global avg", "global max"])
def test_pooling_backward_is_one_launch(pool):
    """The pooling backward kernels gather every input pixel's gradient (0 where no window
    reaches it) and write it: no zero fill before them."""
    x = minitorch.randn(2, 8, 9, 9, device="cuda", requires_grad=True)
    y = pool(x)
    g = minitorch.randn(*y.shape, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward(g)
    node = [e for e in prof.events() if e.kernels and e.name != "AccumulateGrad"]
    assert len(node) == 1 and len(node[0].kernels) == 1, [(e.name, [k.name for k in e.kernels]) for e in node]


@pytest.mark.parametrize("make", [
    lambda ps: minitorch.optim.SGD(ps, lr=0.1),
    lambda ps: minitorch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4),
    lambda ps: minitorch.optim.Adam(ps, lr=1e-3, weight_decay=1e-4),
    lambda ps: minitorch.optim.AdamW(ps, lr=1e-3),
], ids=["sgd", "sgd-nesterov", "adam", "adamw"])
def test_optimizer_step_is_one_launch_per_parameter(make):
    model = nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 5)).to("cuda")
    params = list(model.parameters())
    opt = make(params)
    x = minitorch.randn(8, 20, device="cuda")
    for step in range(3):
        opt.zero_grad()
        model(x).sum().backward()
        ks = kernels(opt.step)
        if step > 0:  # the first step also creates the state (zero-filled moments)
            assert len(ks) <= len(params), (step, [k.name for k in ks])


@pytest.mark.parametrize("op, most", [("var", 1), ("std", 2), ("norm", 1)])
def test_moment_and_norm_backward_use_host_numbers(op, most):
    """The backward formulas' constants (2 / (N - correction), 0, ...) are host numbers, not
    device tensors: no fill or copy kernels. var's and the 2-norm's gradient is one ternary
    kernel over x; std's one more on the reduced shape (g / (2 std), 0 where std is 0)."""
    x = minitorch.randn(32, 10, device="cuda", requires_grad=True)
    y = {"var": lambda: x.var(1), "std": lambda: x.std(1), "norm": lambda: x.norm(dim=1)}[op]()
    g = minitorch.randn(32, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward(g)
    ks = [k.name for e in prof.events() if e.name != "AccumulateGrad" for k in e.kernels]
    assert not [n for n in ks if n.startswith(("fill", "copy"))], ks
    assert len(ks) <= most, ks


def test_div_backward_is_one_kernel_per_input():
    """g / b for the dividend, -g * a / b^2 for the divisor in one ternary kernel (not neg, two
    multiplies and a division); a broadcast divisor adds its one reduction."""
    a = minitorch.randn(32, 10, device="cuda", requires_grad=True)
    for b_shape, most in (((32, 10), 2), ((1, 10), 3)):
        b = (minitorch.rand(*b_shape, device="cuda") + 1).requires_grad_()
        y = a / b
        g = minitorch.randn(32, 10, device="cuda")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            y.backward(g)
        ks = [k.name for e in prof.events() if e.name == "DivBackward0" for k in e.kernels]
        assert len(ks) == most, (b_shape, ks)


@pytest.mark.parametrize("fn, most", [
    (lambda x, y: F.normalize(x, dim=1), 6),
    (lambda x, y: F.cosine_similarity(x, y), 13),
], ids=["normalize", "cosine_similarity"])
def test_unit_vector_backward_launches(fn, most):
    """normalize and cosine_similarity compose a norm, a clamp and a division: each of their
    backward formulas is one kernel (plus the reductions for the broadcast norms)."""
    x = minitorch.randn(64, 32, device="cuda", requires_grad=True)
    y = minitorch.randn(64, 32, device="cuda", requires_grad=True)
    out = fn(x, y)
    g = minitorch.randn(*out.shape, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out.backward(g)
    ks = [k.name for e in prof.events() if e.name != "AccumulateGrad" for k in e.kernels]
    assert len(ks) <= most, ks


@pytest.mark.parametrize("op, most", [("sort", 3), ("topk", 3), ("max", 3), ("where", 2)])
def test_index_picking_backward_is_a_few_launches(op, most):
    """sort / topk: one scatter of g into zeros (not flat-offset arithmetic and an index_add);
    max(dim): a where against the positions; where: one where per input, its 0 a host number."""
    x = minitorch.randn(32, 10, device="cuda", requires_grad=True)
    y = {"sort": lambda: x.sort(1)[0], "topk": lambda: x.topk(3, 1)[0], "max": lambda: x.max(1)[0],
         "where": lambda: minitorch.where(x > 0, x, x.detach())}[op]()
    g = minitorch.randn(*y.shape, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y.backward(g)
    ks = [k.name for e in prof.events() if e.name != "AccumulateGrad" for k in e.kernels]
    assert len(ks) <= most, ks


def test_clip_grad_norm_is_three_launches_for_any_number_of_gradients():
    """The foreach path (the default, as PyTorch's on CUDA): one launch measures every
    gradient, one finishes the norm and the scale, one scales them all. With foreach=False,
    one fused norm per gradient, the norm of the stacked norms, the scale, one multiply per
    gradient (PyTorch's order), not a square, a sum and an add per gradient."""
    params = [minitorch.randn(7, 5, device="cuda", requires_grad=True) for _ in range(10)]
    for p in params:
        p.grad = minitorch.randn(7, 5, device="cuda")
    ks = kernels(lambda: nn.utils.clip_grad_norm_(params, 0.5))
    assert len(ks) == 3, [k.name for k in ks]
    ks = kernels(lambda: nn.utils.clip_grad_norm_(params, 0.5, norm_type="inf"))
    assert len(ks) == 3, [k.name for k in ks]
    ks = kernels(lambda: nn.utils.clip_grad_norm_(params, 0.5, foreach=False))
    assert 2 * len(params) < len(ks) <= 2 * len(params) + 6, [k.name for k in ks]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16])
def test_add_with_alpha_outside_a_graph_is_one_launch(dtype):
    """p.add_(g, alpha=-lr) (a hand-written SGD step) and sub_(g, alpha=) are one kernel,
    p + alpha * g, with alpha * g not rounded to the dtype on its own."""
    p, g = minitorch.randn(64, 33, device="cuda").to(dtype), minitorch.randn(64, 33, device="cuda").to(dtype)
    want = (p.float() - 0.1 * g.float()).to(dtype)
    for fn in (lambda t: t.add_(g, alpha=-0.1), lambda t: t.sub_(g, alpha=0.1)):
        q = p.clone()
        assert len(kernels(lambda: fn(q))) == 1
        assert minitorch.equal(q, want)


def test_staged_kernels_convert_inputs_in_and_outputs_back_once():
    """A kernel without a 16-bit / narrow-integer form runs on float32 / int64 stand-ins
    (Widen, kernels.h): each input is converted in, each output back, and an output the
    kernel writes whole is not converted in (arg_roles)."""
    h = minitorch.randn(4, 8, device="cuda").half()
    names = [k.name for k in kernels(lambda: h.cumsum(1))]
    assert len(names) == 3 and "scan" in names[1], names  # in, the scan, out
    long = minitorch.randn(2, 5000, device="cuda").half()  # (lines of up to 4096 sort in place: below)
    names = [k.name for k in kernels(lambda: long.sort(1))]
    assert len(names) >= 3 and "copy" in names[0] and "copy" in names[-1], names  # the indices: never staged
    a, b = (minitorch.randint(0, 9, (4, 8), device="cuda").to(minitorch.int8) for _ in range(2))
    names = [k.name for k in kernels(lambda: a * b)]
    assert len(names) == 4 and sum("copy" in n for n in names) == 3, names  # a, b in; the product out


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "bool"])
def test_broadcasts_and_row_slices_take_the_dense_path(dtype):
    """(n, m) op (m,), (n, 1), (1, m) and (b, n, m) op (n, m): the output is a (rows, inner)
    matrix and the small operand is read at i % inner or i / inner, with vector loads -- no
    per-element index decoding. (N, C, H, W) op (C, 1, 1), (B, T, D) op (B, 1, D) and slices
    with a row pitch: an (outer, mid, inner) output whose operands are read at their own
    steps along each dim. Inner lengths that are not a multiple of 4, and views at an odd
    offset, take the strided kernel; the values agree either way."""
    import numpy as np

    rng = np.random.default_rng(0)
    wide = minitorch.bool if dtype == "bool" else minitorch.float64  # the reference's dtype on the CPU

    def make(*shape):
        a = rng.standard_normal(shape) * 3
        return minitorch.tensor(a > 0 if dtype == "bool" else a, device="cuda").to(getattr(minitorch, dtype))

    def op(x, y):
        return x & y if dtype == "bool" else x * y

    def check(x, y, path):
        names = [k.name.split("<")[0] for k in kernels(lambda: op(x, y))]
        assert names == [path], (tuple(x.shape), tuple(y.shape), names)
        want = op(x.cpu().to(wide), y.cpu().to(wide)).numpy()
        tol = {"float16": 1e-2, "bfloat16": 5e-2}.get(dtype, 1e-6)
        np.testing.assert_allclose(op(x, y).cpu().to(wide).numpy(), want, rtol=tol, atol=tol)

    cases = [((6, 8), (8,), "dense_kernel"), ((6, 8), (6, 1), "dense_kernel"), ((6, 8), (1, 8), "dense_kernel"),
             ((2, 3, 8), (3, 8), "dense_kernel"), ((5, 12), (5, 1), "dense_kernel"),
             ((6, 6), (6,), "zip_kernel"), ((6, 10), (6, 1), "zip_kernel"),
             # (outer, mid, inner) with an operand broadcast along some of them: a conv's bias
             # (C, 1, 1), a (B, 1, D) vector, a padding mask (B, 1, 1, T) on scores (B, H, T, T)
             ((3, 5, 2, 6), (5, 1, 1), "dense_kernel"), ((2, 7, 12), (1, 7, 1), "dense_kernel"),
             ((3, 5, 4, 1), (5, 1, 1), "dense_kernel"), ((3, 5, 3, 3), (5, 1, 1), "zip_kernel"),
             ((2, 3, 8), (2, 1, 8), "dense_kernel"), ((2, 3, 4, 8), (2, 1, 1, 8), "dense_kernel"),
             ((2, 3, 6), (2, 1, 6), "zip_kernel")]
    for sa, sb, path in cases:
        a, b = make(*sa), make(*sb)
        check(a, b, path)
        check(b, a, path)  # the broadcast operand first
    view = make(6, 9)[:, 1:]  # rows at an odd offset
    check(view, make(8), "zip_kernel")
    # slices whose rows lie apart in memory (a pitch of 12, 24 or 32 values: aligned packs;
    # an offset of 16 values keeps the start 16-byte aligned for every dtype)
    check(make(6, 12)[:, :8], make(6, 8), "dense_kernel")
    check(make(6, 24)[:, 16:], make(6, 8), "dense_kernel")
    check(make(2, 3, 32)[:, :, :8], make(3, 8), "dense_kernel")
    check(make(2, 3, 32)[:, :, 16:24], make(2, 1, 8), "dense_kernel")
    check(make(6, 10)[:, :8], make(6, 8), "zip_kernel")  # a pitch of 10: packs not aligned
    check(make(8, 6).t(), make(6, 8), "zip_kernel")  # transposed: not contiguous along rows


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int64", "bool"])
def test_where_and_masked_fill_take_the_dense_path(dtype):
    """where(c, a, b) and masked_fill read contiguous, broadcast (a causal (T, T) mask on
    (B, H, T, T) scores, a (B, 1, D) one) and host-number operands in where_dense_kernel, with
    vector loads and a tail for odd sizes; a transposed operand takes the strided where_kernel.
    The values are the CPU's either way."""
    import numpy as np

    rng = np.random.default_rng(1)
    dt = getattr(minitorch, dtype)

    def make(*shape):
        a = rng.standard_normal(shape) * 3
        return minitorch.tensor(a > 0 if dtype == "bool" else a).to(dt)

    def mask(*shape):
        return minitorch.tensor(rng.random(shape) > 0.5)

    fill = {"bool": True, "int64": 2}.get(dtype, 2.0)  # a number of the tensor's kind: no promotion
    cases = [(lambda c, a, b: minitorch.where(c, a, b), (mask(6, 8), make(6, 8), make(6, 8)), "where_dense_kernel"),
             (lambda c, a: minitorch.where(c, a, fill), (mask(7, 5), make(7, 5)), "where_dense_kernel"),  # a tail
             (lambda c, a: a.masked_fill(c, fill), (mask(8, 8), make(2, 3, 8, 8)), "where_dense_kernel"),
             (lambda c, a, b: minitorch.where(c, a, b), (mask(2, 1, 8), make(2, 5, 8), make(2, 1, 8)),
              "where_dense_kernel"),
             (lambda c, a, b: minitorch.where(c.t(), a, b.t()), (mask(8, 6), make(6, 8), make(8, 6)), "where_kernel")]
    for fn, args, path in cases:
        on_gpu = [t.to("cuda") for t in args]
        names = [k.name.split("<")[0] for k in kernels(lambda: fn(*on_gpu)) if "where" in k.name]
        assert names == [path], (path, names)
        got, want = fn(*on_gpu), fn(*args)
        assert got.dtype == want.dtype == dt
        wide = minitorch.bool if dtype == "bool" else minitorch.float64
        np.testing.assert_array_equal(got.cpu().to(wide).numpy(), want.to(wide).numpy())
