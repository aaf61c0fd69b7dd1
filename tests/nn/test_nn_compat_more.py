"""PyTorch spellings that programs use and minitorch lacked: F's in-place activations
(``F.relu_`` ...), the ``*_with_indices`` pools, ``F.dropout3d`` / ``nn.Dropout3d``,
``F.pdist``, ``nn.init``'s deprecated names, and ``nn.DataParallel``: each against the form
minitorch already had, on every device, and PyTorch when installed."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import TORCH_SKIP_REASON
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.nn import init


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


INPLACE = [
    ("relu_", "relu", (), {}),
    ("elu_", "elu", (0.7,), {}),
    ("leaky_relu_", "leaky_relu", (0.2,), {}),
    ("hardtanh_", "hardtanh", (-0.5, 0.25), {}),
    ("selu_", "selu", (), {}),
    ("celu_", "celu", (1.3,), {}),
    ("threshold_", "threshold", (0.1, -2.0), {}),
]


@pytest.mark.parametrize("inplace, plain, args, kwargs", INPLACE, ids=[c[0] for c in INPLACE])
def test_functional_inplace_activations(device, inplace, plain, args, kwargs):
    x = minitorch.tensor(np.linspace(-2, 2, 12).reshape(3, 4), dtype=minitorch.float64, device=device)
    want = getattr(F, plain)(x, *args, **kwargs)
    version = x._version
    out = getattr(F, inplace)(x, *args, **kwargs)
    assert out is x and x._version > version
    np.testing.assert_array_equal(to_np(x), to_np(want))


def test_pools_with_indices(device):
    x = minitorch.randn(2, 3, 8, device=device)
    for got, want in [
        (F.max_pool1d_with_indices(x, 2), F.max_pool1d(x, 2, return_indices=True)),
        (F.max_pool2d_with_indices(x.reshape(2, 3, 2, 4), 2), F.max_pool2d(x.reshape(2, 3, 2, 4), 2,
                                                                            return_indices=True)),
        (F.max_pool3d_with_indices(x.reshape(2, 3, 2, 2, 2), 2), F.max_pool3d(x.reshape(2, 3, 2, 2, 2), 2,
                                                                               return_indices=True)),
        (F.adaptive_max_pool1d_with_indices(x, 3), F.adaptive_max_pool1d(x, 3, return_indices=True)),
        (F.adaptive_max_pool2d_with_indices(x.reshape(2, 3, 2, 4), 2),
         F.adaptive_max_pool2d(x.reshape(2, 3, 2, 4), 2, return_indices=True)),
        (F.adaptive_max_pool3d_with_indices(x.reshape(2, 3, 2, 2, 2), 1),
         F.adaptive_max_pool3d(x.reshape(2, 3, 2, 2, 2), 1, return_indices=True)),
    ]:
        assert isinstance(got, tuple) and len(got) == 2
        np.testing.assert_array_equal(to_np(got[0]), to_np(want[0]))
        np.testing.assert_array_equal(to_np(got[1]), to_np(want[1]))


@pytest.mark.parametrize("shape", [(4, 6, 2, 3, 3), (6, 2, 3, 3)])
def test_dropout3d_drops_whole_channels(device, shape):
    minitorch.manual_seed(0)
    x = minitorch.ones(shape, device=device)
    y = to_np(F.dropout3d(x, 0.5, training=True))
    maps = y.reshape((-1,) + shape[-3:]) if len(shape) == 5 else y.reshape((-1,) + shape[-3:])
    for m in maps:  # each channel's map all dropped or all kept (scaled by 2)
        assert np.all(m == 0) or np.all(m == 2.0)
    assert 0 < sum(np.all(m == 0) for m in maps) < len(maps)
    np.testing.assert_array_equal(to_np(F.dropout3d(x, 0.5, training=False)), to_np(x))
    layer = nn.Dropout3d(0.25).eval()
    assert layer(x) is x or np.array_equal(to_np(layer(x)), to_np(x))
    assert repr(nn.Dropout3d(0.25)) == "Dropout3d(p=0.25, inplace=False)"
    with pytest.raises(ValueError, match="dropout3d: expected a 4-D"):
        F.dropout3d(minitorch.ones(2, 3, 4, device=device))


def test_functional_pdist_is_pdist(device):
    x = minitorch.randn(5, 3, dtype=minitorch.float64, device=device)
    np.testing.assert_array_equal(to_np(F.pdist(x, 1.5)), to_np(minitorch.pdist(x, 1.5)))


@pytest.mark.parametrize("old, args", [
    ("uniform", (-0.5, 0.5)), ("normal", (0.0, 2.0)), ("constant", (0.3,)), ("eye", ()), ("xavier_uniform", ()),
    ("xavier_normal", ()), ("kaiming_uniform", ()), ("kaiming_normal", ()), ("orthogonal", ()),
    ("sparse", (0.5,)),
])
def test_init_deprecated_names(old, args):
    a, b = minitorch.empty(4, 6), minitorch.empty(4, 6)
    minitorch.manual_seed(3)
    getattr(init, old + "_")(a, *args)
    minitorch.manual_seed(3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`"):
        out = getattr(init, old)(b, *args)
    assert out is b
    np.testing.assert_array_equal(to_np(a), to_np(b))
    with pytest.warns(FutureWarning):
        init.dirac(minitorch.empty(2, 2, 3))


def test_data_parallel(device):
    minitorch.manual_seed(1)
    inner = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)
    if device == "cpu" and minitorch.cuda.is_available():
        with pytest.raises(RuntimeError, match="must have its parameters"):  # as PyTorch where CUDA is
            nn.DataParallel(inner)
        return
    model = nn.DataParallel(inner)
    assert model.module is inner
    assert list(model.state_dict()) == ["module." + k for k in inner.state_dict()]
    x = minitorch.randn(5, 3)  # on the CPU: moved to the model's device
    out = model(x)
    assert out.device.type == device
    np.testing.assert_allclose(to_np(out), to_np(inner(x.to(device))), rtol=1e-6)
    out.sum().backward()
    assert inner[0].weight.grad is not None
    with pytest.raises(TypeError, match="must be a Module"):
        nn.DataParallel(lambda x: x)
    if device == "cuda":
        with pytest.raises(RuntimeError, match="must have its parameters and buffers on device cuda:0"):
            nn.DataParallel(nn.Linear(2, 2))
        with pytest.warns(UserWarning, match="runs the module on one device"):
            nn.DataParallel(nn.Linear(2, 2).to(device), device_ids=[0, 0])


def test_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    a = np.linspace(-2, 2, 9)
    for inplace, plain, args, kwargs in INPLACE:
        t, m = torch.tensor(a), minitorch.tensor(a)
        getattr(torch.nn.functional, inplace)(t, *args, **kwargs)
        getattr(F, inplace)(m, *args, **kwargs)
        np.testing.assert_allclose(to_np(m), t.numpy(), rtol=1e-12, err_msg=inplace)
    lin = torch.nn.Linear(2, 3)
    assert list(torch.nn.DataParallel(lin).state_dict()) == list(nn.DataParallel(nn.Linear(2, 3)).state_dict())
    x = np.random.default_rng(0).standard_normal((2, 3, 8))
    tv, ti = torch.nn.functional.max_pool1d_with_indices(torch.tensor(x), 3)
    mv, mi = F.max_pool1d_with_indices(minitorch.tensor(x), 3)
    np.testing.assert_array_equal(to_np(mv), tv.numpy())
    np.testing.assert_array_equal(to_np(mi), ti.numpy())
    np.testing.assert_allclose(to_np(F.pdist(minitorch.tensor(x[0]))), torch.pdist(torch.tensor(x[0])).numpy(),
                               rtol=1e-12)


def test_data_parallel_moves_namedtuples_and_packed_sequences(device):
    import collections
    from minitorch.nn.utils.rnn import pack_sequence
    Pair = collections.namedtuple("Pair", "x y")

    class Sum(nn.Module):
        def forward(self, pair):
            return Pair(pair.x + pair.y, pair.x)

    if device == "cpu" and minitorch.cuda.is_available():
        pytest.skip("DataParallel needs the module on cuda:0 here")
    out = nn.DataParallel(Sum())(Pair(minitorch.ones(2), minitorch.ones(2)))
    assert isinstance(out, Pair) and out.x.tolist() == [2.0, 2.0] and out.x.device.type == device
    lstm = nn.LSTM(3, 2).to(device)
    packed = pack_sequence([minitorch.randn(4, 3), minitorch.randn(2, 3)])
    y, _ = nn.DataParallel(lstm)(packed)
    assert type(y).__name__ == "PackedSequence" and y.data.device.type == device
    assert y.batch_sizes.device.type == "cpu"
