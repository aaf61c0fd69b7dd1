"""float16 and bfloat16: rounding (against NumPy's float16 and a bit-exact bfloat16
reference), PyTorch's promotion rules, ops on every device computed in float32 and
rounded once, gradients in the leaf's dtype, conversions and interop."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from conftest import DEVICES

F16, BF16 = minitorch.float16, minitorch.bfloat16
HALVES = [pytest.param(F16, id="float16"), pytest.param(BF16, id="bfloat16")]


def bf16_reference(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 -> float32 in NumPy bit arithmetic: round to nearest, ties to even."""
    x = np.asarray(x, np.float32)
    u = np.atleast_1d(x).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16
    out = rounded.view(np.float32).copy()
    out[np.isnan(np.atleast_1d(x))] = np.nan
    return out.reshape(x.shape)


def round_to(dt, x: np.ndarray) -> np.ndarray:
    """x (float32) rounded to dt, as float32 values."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore"):
        return x.astype(np.float16).astype(np.float32) if dt == F16 else bf16_reference(x)


def values(t: minitorch.Tensor) -> np.ndarray:
    return t.detach().cpu().float().numpy()


def special_floats() -> np.ndarray:
    rng = np.random.default_rng(0)
    f16 = np.finfo(np.float16)
    edges = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 65504.0, 65519.99, 65520.0, 1e5, float(f16.tiny),
             float(f16.tiny) * 0.5, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0001, 3 * 2.0**-26, 1e-10, 3.3895e38, 3.4e38,
             1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 1e-40]
    spread = rng.standard_normal(2000) * 10.0 ** rng.uniform(-9, 6, 2000)
    # every float16 value and the ties halfway between neighbours
    all16 = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float32)
    ties = (all16[:-1].astype(np.float64) + all16[1:]) / 2
    return np.concatenate([edges, spread, all16, ties.astype(np.float32), -all16]).astype(np.float32)


# ---- conversion -------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_rounding_from_float32_is_round_to_nearest_even(device, dt):
    x = special_floats()
    t = minitorch.tensor(x, device=device).to(dt)
    assert t.dtype == dt and t.element_size() == 2
    np.testing.assert_array_equal(values(t), round_to(dt, x))


@pytest.mark.parametrize("dt", HALVES)
def test_nan_stays_nan_and_round_trips_are_exact(dt):
    t = minitorch.tensor([np.nan, -np.nan, 1.5]).to(dt)
    v = values(t)
    assert np.isnan(v[0]) and np.isnan(v[1]) and v[2] == 1.5
    once = minitorch.tensor(special_floats()).to(dt)
    np.testing.assert_array_equal(values(once.float().to(dt)), values(once))  # 16 -> 32 -> 16 is exact


def test_float16_matches_numpy_from_every_source_dtype():
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal(500) * 100
    # From float64 PyTorch goes through float32 (c10::Half takes a float): so does minitorch.
    np.testing.assert_array_equal(minitorch.tensor(x64).to(F16).float().numpy(),
                                  x64.astype(np.float32).astype(np.float16).astype(np.float32))
    ints = np.arange(-70000, 70000, 7, dtype=np.int64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(minitorch.tensor(ints).to(F16).float().numpy(),
                                      ints.astype(np.float32).astype(np.float16).astype(np.float32))
    h = minitorch.tensor([-2.7, -0.5, 0.0, 0.4, 3.9, 65504.0]).to(F16)
    np.testing.assert_array_equal(h.long().numpy(), [-2, 0, 0, 0, 3, 65504])  # truncated, like any float
    assert h.bool().tolist() == [True, True, False, True, True, True]


@pytest.mark.parametrize("device", DEVICES)
def test_factories_and_conversions(device):
    for dt in (F16, BF16):
        z = minitorch.zeros(2, 3, dtype=dt, device=device)
        assert z.dtype == dt and values(z).sum() == 0
        f = minitorch.full((3,), 0.1, dtype=dt, device=device)
        assert values(f)[0] == round_to(dt, np.float32(0.1))
        t = minitorch.tensor([1.0, 2.5, -3.0], dtype=dt, device=device)
        assert t.tolist() == [1.0, 2.5, -3.0] and t[1].item() == 2.5 and isinstance(t[1].item(), float)
        r = minitorch.randn(100, dtype=dt, device=device)
        assert r.dtype == dt and 0.2 < float(r.float().std()) < 3
        a = minitorch.arange(0, 10, dtype=dt, device=device)
        assert a.tolist() == list(range(10))
    x = minitorch.tensor([1.0, 2.0], device=device)
    assert x.half().dtype == F16 and x.bfloat16().dtype == BF16 and x.to(F16).float().dtype == minitorch.float32
    assert x.half().type() == ("minitorch.HalfTensor" if device == "cpu" else "minitorch.cuda.HalfTensor")
    assert minitorch.half is F16


def test_repr_and_dtype_names():
    assert repr(minitorch.tensor([1.5, 2.0], dtype=F16)) == "tensor([1.5000, 2.0000], dtype=minitorch.float16)"
    assert repr(BF16) == "minitorch.bfloat16" and F16.itemsize == 2 and BF16.is_floating_point
    assert minitorch.zeros(2, dtype="float16").dtype == F16 and minitorch.zeros(1, dtype=np.float16).dtype == F16


# ---- promotion --------------------------------------------------------------------------

def test_promotion_follows_pytorch():
    h, b = minitorch.ones(2, dtype=F16), minitorch.ones(2, dtype=BF16)
    f, d, i = minitorch.ones(2), minitorch.ones(2, dtype=minitorch.float64), minitorch.ones(2, dtype=minitorch.int64)
    assert (h + h).dtype == F16 and (b * b).dtype == BF16
    assert (h + b).dtype == minitorch.float32                    # neither holds the other
    assert (h + f).dtype == minitorch.float32 and (b + d).dtype == minitorch.float64
    assert (h + i).dtype == F16 and (i * b).dtype == BF16        # a float beats an int
    assert (h * 2.5).dtype == F16 and (3 + b).dtype == BF16      # a Python number keeps the 16-bit type
    assert (h + minitorch.tensor(2.0)).dtype == F16              # so does a 0-dim float32 tensor
    assert (i + minitorch.tensor(2.0, dtype=F16)).dtype == F16   # a 0-dim float beats int tensors
    assert minitorch.result_type(h, b) == minitorch.float32
    assert (h / h).dtype == F16 and (i / i).dtype == minitorch.float32 and h.exp().dtype == F16
    assert (h > 0).dtype == minitorch.bool


# ---- ops compute in float32 and round once ------------------------------------------------

def halves(dt, device, *arrays):
    """Each array rounded to dt (as a dt tensor on device) and its float32 values."""
    out = []
    for a in arrays:
        t = minitorch.tensor(a.astype(np.float32), device=device).to(dt)
        out += [t, values(t)]
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_elementwise_ops_equal_float32_math_rounded_once(device, dt):
    rng = np.random.default_rng(2)
    a, av, b, bv = halves(dt, device, rng.standard_normal((7, 9)) * 3, rng.uniform(0.5, 4, (7, 9)))
    with np.errstate(all="ignore"):
        cases = [
            (a + b, av + bv), (a - b, av - bv), (a * b, av * bv), (a / b, av / bv), (a.exp(), np.exp(av)),
            (a.sin(), np.sin(av)), (a.tanh(), np.tanh(av)), (b.sqrt(), np.sqrt(bv)), (b.log(), np.log(bv)),
            (a.relu(), np.maximum(av, 0)), (a.sigmoid(), 1 / (1 + np.exp(-av))), (-a, -av),
            (minitorch.maximum(a, b), np.maximum(av, bv)), (a.abs(), np.abs(av)), (b ** 2, bv**2),
            (a * 0.3, av * np.float32(0.3)), (0.3 - a, np.float32(0.3) - av), (a[:, :8:2] + b[:, 1::2], av[:, :8:2] + bv[:, 1::2]),  # strided views
            (a + b[0], av + bv[0]),  # broadcasting
        ]
    for got, want in cases:
        assert got.dtype == dt
        np.testing.assert_allclose(values(got), round_to(dt, want), rtol=1e-6, atol=0)
    np.testing.assert_array_equal((a > b).cpu().numpy(), av > bv)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_reductions_and_matmul_accumulate_in_float32(device, dt):
    rng = np.random.default_rng(3)
    # 4096 values of about 1: a float16 running sum would stall at 2048 (its spacing there is 2).
    x, xv = halves(dt, device, rng.uniform(0.9, 1.1, 4096))
    s = x.sum()
    assert s.dtype == dt
    np.testing.assert_allclose(values(s), round_to(dt, xv.astype(np.float64).sum()), rtol=2**-8)
    m, mv, w, wv = halves(dt, device, rng.standard_normal((33, 70)), rng.standard_normal((70, 20)))
    np.testing.assert_allclose(values(m @ w), round_to(dt, mv @ wv), rtol=2**-7, atol=2**-7 * 8)
    np.testing.assert_allclose(values(m.mean(1)), round_to(dt, mv.mean(1)), rtol=2**-7, atol=1e-3)
    np.testing.assert_array_equal(m.argmax(1).cpu().numpy(), mv.argmax(1))
    np.testing.assert_array_equal(values(m.max(0).values), mv.max(0))
    np.testing.assert_allclose(values(F.softmax(m, dim=1)), round_to(dt, np.exp(mv) / np.exp(mv).sum(1, keepdims=True)),
                               rtol=2**-7, atol=2**-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", HALVES)
def test_training_step_keeps_the_dtype(device, dt):
    minitorch.manual_seed(0)
    model = minitorch.nn.Sequential(minitorch.nn.Conv2d(1, 4, 3), minitorch.nn.ReLU(), minitorch.nn.Flatten(),
                                    minitorch.nn.Linear(4 * 6 * 6, 3)).to(device)
    model.to(dt)
    assert all(p.dtype == dt for p in model.parameters())
    opt = minitorch.optim.Adam(model.parameters(), lr=1e-2)
    x = minitorch.randn(5, 1, 8, 8, device=device).to(dt)
    y = minitorch.tensor([0, 1, 2, 1, 0], device=device)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        assert loss.dtype == dt
        loss.backward()
        assert all(p.grad.dtype == dt for p in model.parameters())  # gradients in the leaf's dtype
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < losses[0] * 0.7, losses


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_matches_float32_math(device):
    rng = np.random.default_rng(4)
    x, xv = halves(F16, device, rng.standard_normal(50))
    x.requires_grad = True
    (x.tanh() * 3).sum().backward()
    assert x.grad.dtype == F16
    # backward runs float16 ops (1 - y * y rounds y first, as in PyTorch): a few float16 ulps of 3
    np.testing.assert_allclose(values(x.grad), 3 * (1 - np.tanh(xv) ** 2), rtol=0, atol=3 * 2**-9)


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_ops_and_aliasing(device):
    x = minitorch.tensor([1.0, 2.0, 3.0], device=device).to(F16)
    x.add_(0.5)
    x.mul_(x)  # an output that is also an input
    assert values(x).tolist() == [2.25, 6.25, 12.25]
    x[1:] = minitorch.tensor([70000.0, 0.1], device=device)  # copy with rounding: 70000 overflows
    assert values(x)[1] == np.inf and values(x)[2] == np.float32(np.float16(0.1))


# ---- interop ------------------------------------------------------------------------------

def test_numpy_float16_both_ways():
    a = np.array([0.5, 1e-3, 65504], np.float16)
    t = minitorch.from_numpy(a)
    assert t.dtype == F16
    a[0] = 2.0
    assert t[0].item() == 2.0  # shared memory
    back = t.numpy()
    assert back.dtype == np.float16 and np.shares_memory(back, a)
    assert minitorch.tensor(a).dtype == F16  # kept, no longer widened to float32
    np.testing.assert_array_equal(np.from_dlpack(t), a)


def test_bfloat16_numpy_needs_ml_dtypes():
    t = minitorch.tensor([1.0, 2.0], dtype=BF16)
    try:
        import ml_dtypes
    except ImportError:
        with pytest.raises(TypeError, match="ml_dtypes"):
            t.numpy()
        return
    arr = t.numpy()
    assert arr.dtype == ml_dtypes.bfloat16 and arr.astype(np.float32).tolist() == [1.0, 2.0]
    assert minitorch.from_numpy(arr).dtype == BF16


def test_finfo_of_the_16_bit_types():
    h = minitorch.finfo(F16)
    assert (h.bits, h.eps, h.max, h.tiny, h.resolution) == (16, 2.0**-10, 65504.0, 2.0**-14, 0.001)
    b = minitorch.finfo(BF16)
    assert (b.bits, b.eps, b.tiny, b.resolution, b.dtype) == (16, 2.0**-7, 2.0**-126, 0.01, "bfloat16")
    assert b.max == float(values(minitorch.tensor([3.3895313892515355e38]).to(BF16))[0]) and b.min == -b.max


def test_safetensors_round_trip_float16(tmp_path):
    sd = {"w": minitorch.tensor([[1.0, -2.5], [0.1, 7.0]]).to(F16)}
    minitorch.save(sd, tmp_path / "m.safetensors")
    back = minitorch.load(tmp_path / "m.safetensors")
    assert back["w"].dtype == F16
    np.testing.assert_array_equal(back["w"].numpy(), sd["w"].numpy())


def test_safetensors_and_pickle_carry_bfloat16(tmp_path):
    import pickle

    w = minitorch.tensor([[1.0, -2.5], [0.1, 3e38]]).to(BF16)
    sd = {"w": w, "h": minitorch.tensor([0.5]).to(F16), "n": minitorch.tensor([1, 2])}
    minitorch.save(sd, tmp_path / "m.safetensors")
    back = minitorch.load(tmp_path / "m.safetensors")
    assert {k: v.dtype for k, v in back.items()} == {k: v.dtype for k, v in sd.items()}
    for k in sd:
        np.testing.assert_array_equal(values(back[k]) if back[k].dtype.is_floating_point else back[k].numpy(),
                                      values(sd[k]) if sd[k].dtype.is_floating_point else sd[k].numpy())
    from safetensors import deserialize  # what other readers see: the standard BF16 code

    assert {n: e["dtype"] for n, e in deserialize((tmp_path / "m.safetensors").read_bytes())} == {
        "w": "BF16", "h": "F16", "n": "I64"}
    p = pickle.loads(pickle.dumps(minitorch.nn.Parameter(w)))
    assert p.dtype == BF16 and p.requires_grad and values(p).tolist() == values(w).tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_scalars_keep_float32_precision_forward_and_backward(device):
    """A Python number or a 0-dim float tensor meeting a float16 tensor is read at float32
    precision (PyTorch's opmath): 1e-8 is not rounded to float16's 0 first, in the forward
    product or in the saved operand the backward multiplies by."""
    w = minitorch.full((3,), 4096.0, dtype=F16, device=device, requires_grad=True)
    y = w * 1e-8
    assert values(y).tolist() == [np.float32(np.float16(4096 * np.float32(1e-8)))] * 3
    w.grad = None
    (w * 1e-8).sum().backward()
    assert values(w.grad).tolist() == [0.0] * 3  # 1e-8 itself is below float16's smallest subnormal
    w.grad = None
    (w * minitorch.tensor(1e-8, device=device) * 4096.0).sum().backward()
    np.testing.assert_allclose(values(w.grad), 4096 * 1e-8, rtol=2**-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_rand_stays_below_one_in_16_bits(device, name):
    """rand draws in float32 and rounds; a draw within half a step of 1 would round up to 1.0
    (0.2% of bfloat16 draws), so it becomes the largest value below 1 instead: rand, rand_like,
    uniform_ and the dropout masks built on it stay in [0, 1), as PyTorch's do. Every other
    value is the float32 draw rounded."""
    dt = getattr(minitorch, name)
    minitorch.manual_seed(0)
    x = minitorch.rand(200000, dtype=dt, device=device).float().cpu().numpy()
    minitorch.manual_seed(0)
    y = minitorch.rand(200000, device=device).to(dt).float().cpu().numpy()
    top = 1 - (2.0 ** -8 if name == "bfloat16" else 2.0 ** -11)
    assert x.max() == top and x.min() >= 0
    np.testing.assert_array_equal(x, np.where(y == 1.0, top, y))
    assert (y == 1.0).any()  # the case does happen with this seed
    assert minitorch.rand(0, dtype=dt, device=device).shape == (0,)
    u = minitorch.empty(50000, dtype=dt, device=device).uniform_(-1.0, 1.0).float().cpu().numpy()
    assert u.min() >= -1.0 and u.max() < 1.0
