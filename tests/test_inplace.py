"""The in-place forms of ``ops/inplace.py`` (``exp_``, ``clamp_``, ``sigmoid_``, ..., ``normal_``,
``uniform_``) on every dtype minitorch has: each writes the out-of-place result into its
tensor when PyTorch's casting rule allows (bool < integer < floating point), and raises
PyTorch's RuntimeError when it does not."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON, to_numpy as _to_numpy
from minitorch.ops.inplace import INPLACE_OPS

DTYPES = [minitorch.float32, minitorch.float64, minitorch.float16, minitorch.bfloat16, minitorch.int64, minitorch.bool]
FLOATS = DTYPES[:4]

# Arguments for the ops that take some; a tensor argument has self's dtype.
ARGS = {"clamp": (-0.5, 0.5), "clamp_min": (0.0,), "clamp_max": (0.0,), "pow": (2,), "remainder": (2,),
        "fmod": (2,), "atan2": ([[0.5, -1.0, 2.0]],)}


def to_numpy(t) -> np.ndarray:
    """Values as NumPy (bfloat16 through float64: NumPy has no bfloat16 without ml_dtypes)."""
    return _to_numpy(t.double() if t.dtype == minitorch.bfloat16 else t)


def kind(dtype) -> int:
    """PyTorch's order of kinds for casting a result into a tensor."""
    return 2 if dtype.is_floating_point else 0 if dtype == minitorch.bool else 1


def operands(dtype, device, name):
    x = minitorch.tensor([[-1.5, 0.25, 2.0]], device=device).to(dtype)
    if name == "masked_fill":
        return x, (minitorch.tensor([[True, False, True]], device=device), 0.5)
    args = tuple(minitorch.tensor(a, device=device).to(dtype) if isinstance(a, list) else a
                 for a in ARGS.get(name, ()))
    return x, args


# In-place forms written on their own (one kernel into x) that keep the same contract.
OWN_WRITERS = ("clamp", "clamp_min", "clamp_max", "masked_fill")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", INPLACE_OPS + OWN_WRITERS)
def test_inplace_writes_the_out_of_place_result_or_raises(device, name, dtype):
    x, args = operands(dtype, device, name)
    before = to_numpy(x)
    try:
        want = getattr(x, name)(*args)
    except (TypeError, ValueError, RuntimeError) as e:  # the op itself refuses this dtype: so does op_
        with pytest.raises(type(e)):
            getattr(x, name + "_")(*args)
        np.testing.assert_array_equal(to_numpy(x), before)
        return
    if kind(want.dtype) > kind(dtype):
        # PyTorch: RuntimeError "result type Float can't be cast to the desired output type Long"
        with pytest.raises(RuntimeError, match=f"{name}_: result type {want.dtype.name} can't be cast to the "
                                               f"desired output type {dtype.name}"):
            getattr(x, name + "_")(*args)
        np.testing.assert_array_equal(to_numpy(x), before)
        return
    ptr = x.data_ptr()
    assert getattr(x, name + "_")(*args) is x
    assert x.dtype == dtype and x.data_ptr() == ptr
    np.testing.assert_array_equal(to_numpy(x), to_numpy(want.to(dtype)))


@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16], ids=lambda d: d.name)
def test_16_bit_inplace_math_matches_numpy(device, dtype):
    x = minitorch.tensor([-2.0, -0.5, 0.0, 1.0, 3.0], device=device).to(dtype)
    v = to_numpy(x).astype(np.float64)
    tol = dict(rtol=2**-7, atol=0)  # one bfloat16 rounding of a float32 result
    np.testing.assert_allclose(to_numpy(x.clone().exp_()).astype(np.float64), np.exp(v), **tol)
    np.testing.assert_allclose(to_numpy(x.clone().sigmoid_()).astype(np.float64), 1 / (1 + np.exp(-v)), **tol)
    np.testing.assert_array_equal(to_numpy(x.clone().clamp_(-1, 1)).astype(np.float64), np.clip(v, -1, 1))
    y = x.clone()
    assert y.exp_().dtype == dtype


def test_float_result_into_an_integer_tensor_is_pytorchs_runtime_error(device):
    with pytest.raises(RuntimeError, match="exp_: result type float32 can't be cast to the desired output type int64"):
        minitorch.tensor([1, 2], device=device).exp_()
    with pytest.raises(RuntimeError, match="sqrt_: result type float32 can't be cast to the desired output type bool"):
        minitorch.tensor([True, False], device=device).sqrt_()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_random_fills_on_every_dtype(device, dtype):
    x = minitorch.zeros(1000, device=device).to(dtype)
    if dtype not in FLOATS:  # PyTorch: RuntimeError ("normal_kernel_cpu" not implemented for 'Long')
        for fill in (x.normal_, x.uniform_):
            with pytest.raises(RuntimeError, match="expected a floating point tensor"):
                fill()
        return
    minitorch.manual_seed(0)
    assert x.uniform_(2.0, 3.0) is x and x.dtype == dtype
    u = to_numpy(x).astype(np.float64)
    assert u.min() >= 2.0 and u.max() <= 3.0 and u.std() > 0.2
    assert x.normal_(5.0, 0.5) is x and x.dtype == dtype
    n = to_numpy(x).astype(np.float64)
    assert abs(n.mean() - 5.0) < 0.1 and abs(n.std() - 0.5) < 0.1


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_random_fills_draw_straight_into_contiguous_float_tensors():
    # One launch of the generator's kernel into x (it was a draw, a scale, a shift and a copy);
    # a strided x or a 16-bit one still draws aside and copies in.
    from conftest import launches
    x = minitorch.empty(64, 64, device="cuda")
    for fill in (lambda: x.uniform_(-2.0, 3.0), lambda: x.normal_(1.0, 0.5)):
        names = launches(fill)
        assert len(names) == 1 and names[0].startswith("random_kernel"), names
    u = to_numpy(minitorch.empty(40000, device="cuda").uniform_(-2.0, 3.0))
    assert -2.0 <= u.min() and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.05
    n = to_numpy(minitorch.empty(40000, device="cuda", dtype=minitorch.float64).normal_(1.0, 0.5))
    assert abs(n.mean() - 1.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    assert len(launches(lambda: x.t().uniform_())) > 1


# ---- the unary ops' in-place forms: one kernel that reads and writes x -----------------------

UNARY_INPLACE = [n for n in INPLACE_OPS if n in minitorch._C._unary_op_names]


def test_the_unary_forms_are_many():
    assert {"relu", "exp", "sigmoid", "tanh", "sqrt", "neg", "abs"} <= set(UNARY_INPLACE)


@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_forms_on_views_write_only_the_view(device, name):
    values = np.linspace(0.1, 2.0, 24) if name != "bitwise_not" else np.arange(24)
    base = minitorch.tensor(values.reshape(4, 6), device=device)
    view = base.t()[1:5:2]  # strided, offset: the map kernel's strided path, in place
    want_view = getattr(view, name)()
    want = to_numpy(base).copy()
    want.T[1:5:2] = to_numpy(want_view)
    assert getattr(view, name + "_")() is view
    np.testing.assert_array_equal(to_numpy(base), want)


def test_relu_in_a_graph_records_its_gradient(device):
    x = minitorch.tensor([[-1.0, 2.0, 0.5]], device=device, requires_grad=True)
    h = x * 2
    assert h.relu_() is h and h.grad_fn.name() == "ReluBackward0"
    (h * minitorch.tensor([[1.0, 2.0, 3.0]], device=device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[0.0, 4.0, 6.0]])
    s = x * 1
    s.sigmoid_()  # saves its output: the gradient reads the written values
    s.sum().backward()
    y = 1 / (1 + np.exp(-np.array([[-1.0, 2.0, 0.5]])))
    np.testing.assert_allclose(to_numpy(x.grad), [[0.0, 4.0, 6.0]] + y * (1 - y), rtol=1e-6)


def test_unary_forms_refuse_what_pytorch_refuses(device):
    leaf = minitorch.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="relu_: a leaf Variable that requires grad"):
        leaf.relu_()
    with pytest.raises(RuntimeError, match="relu_: unsupported operation: more than one element"):
        minitorch.ones(3, device=device).expand(2, 3).relu_()
    with pytest.raises(RuntimeError, match="exp_: result type float32 can't be cast to the desired output type int64"):
        minitorch.tensor([1, 2], device=device).exp_()


def test_a_graders_replacement_method_is_what_the_in_place_form_runs(monkeypatch):
    calls = []
    original = minitorch.Tensor.relu

    def relu(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(minitorch.Tensor, "relu", relu)
    x = minitorch.tensor([-1.0, 1.0])
    x.relu_()
    assert calls == [1] and x.tolist() == [0.0, 1.0]


@pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_unary_forms_launch_one_kernel_on_cuda():
    from minitorch.profiler import ProfilerActivity, profile
    x = minitorch.randn(8, 6, device="cuda")
    for name in ("relu_", "exp_", "sigmoid_", "tanh_", "neg_"):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            getattr(x, name)()
            getattr(x.t(), name)()
        assert [k.name.split("<")[0] for e in prof.events() for k in e.kernels] == ["dense_kernel", "map_kernel"]


def test_add_and_sub_take_alpha(device):
    x = minitorch.tensor([1.0, 2.0], device=device)
    y = minitorch.tensor([10.0, 20.0], device=device)
    assert x.add(y, alpha=2).tolist() == [21.0, 42.0] and x.sub(y, alpha=0.5).tolist() == [-4.0, -8.0]
    assert minitorch.add(x, y, alpha=3).tolist() == [31.0, 62.0] and minitorch.sub(x, 1, alpha=2).tolist() == [-1.0, 0.0]
    i = minitorch.tensor([1, 2], device=device)
    assert minitorch.add(i, 2, alpha=3).dtype == minitorch.int64  # 6 is still a Python number
    with pytest.raises(TypeError, match="alpha must not be a floating point number"):
        i.add(i, alpha=0.5)
    with pytest.raises(TypeError):
        minitorch.mul(x, y, alpha=2)
