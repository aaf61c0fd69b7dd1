"""The in-place forms of ``ops/inplace.py`` (``exp_``, ``clamp_``, ``sigmoid_``, ..., ``normal_``,
``uniform_``) on every dtype minitorch has: each writes the out-of-place result into its
tensor when PyTorch's casting rule allows (bool < integer < floating point), and raises
PyTorch's RuntimeError when it does not."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import to_numpy as _to_numpy
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
    args = tuple(minitorch.tensor(a, device=device).to(dtype) if isinstance(a, list) else a
                 for a in ARGS.get(name, ()))
    return x, args


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", INPLACE_OPS)
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
