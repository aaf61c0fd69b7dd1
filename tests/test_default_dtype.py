"""set_default_dtype / get_default_dtype: what Python floats, float factories, int -> float
ops and new layers make; the repr shows dtype= for what is not the default (PyTorch's rules)."""
from __future__ import annotations

import pytest

import minitorch
from minitorch import nn


@pytest.fixture
def float64_default():
    minitorch.set_default_dtype(minitorch.float64)
    yield
    minitorch.set_default_dtype(minitorch.float32)


def test_default_is_float32():
    assert minitorch.get_default_dtype() == minitorch.float32
    assert minitorch.tensor([1.5]).dtype == minitorch.float32


def test_float64_default_everywhere(float64_default, device):
    assert minitorch.get_default_dtype() == minitorch.float64
    assert minitorch.tensor([1.5], device=device).dtype == minitorch.float64
    assert minitorch.zeros(2, device=device).dtype == minitorch.float64
    assert minitorch.randn(2, device=device).dtype == minitorch.float64
    assert minitorch.arange(0.0, 1.0, 0.5, device=device).dtype == minitorch.float64
    i = minitorch.tensor([1, 2], device=device)
    assert i.exp().dtype == minitorch.float64
    assert (i * 0.5).dtype == minitorch.float64
    f32 = minitorch.ones(2, dtype=minitorch.float32, device=device)
    assert (f32 * 2.5).dtype == minitorch.float32          # a Python float keeps the tensor's dtype
    assert nn.Linear(3, 2).weight.dtype == minitorch.float64
    assert "dtype" not in repr(minitorch.tensor([1.5]))
    assert "dtype=minitorch.float32" in repr(minitorch.tensor([1.5], dtype=minitorch.float32))


def test_only_floating_defaults():
    with pytest.raises(TypeError, match="floating"):
        minitorch.set_default_dtype(minitorch.int64)
    with pytest.raises(TypeError):
        minitorch.set_default_dtype("float64")
    assert minitorch.get_default_dtype() == minitorch.float32
