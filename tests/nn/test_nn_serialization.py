"""``minitorch.save`` / ``minitorch.load``: safetensors round trips and error cases.

Like PyTorch's state_dict workflow, a model saved from any device loads back to the CPU
(or to ``map_location``) and into a module on any device; the file itself does not
depend on where the tensors lived."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest

import minitorch
from minitorch import nn
from conftest import TORCH_SKIP_REASON


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))


def test_save_load_state_dict_round_trip(tmp_path, device):
    model = mlp().to(device)
    path = tmp_path / "model.safetensors"
    minitorch.save(model.state_dict(), path)
    assert path.stat().st_size > 0
    loaded = minitorch.load(path)
    assert set(loaded) == {"1.weight", "1.bias", "3.weight", "3.bias"}
    for k, v in model.state_dict().items():
        assert isinstance(loaded[k], minitorch.Tensor)
        assert loaded[k].device.type == "cpu", k  # like torch.load(..., map_location="cpu")
        assert loaded[k].dtype == v.dtype
        assert tuple(loaded[k].shape) == tuple(v.shape)
        np.testing.assert_array_equal(to_np(loaded[k]), to_np(v))
    x = np.random.default_rng(0).standard_normal((4, 2, 6)).astype(np.float32)
    expected = to_np(model(minitorch.tensor(x, device=device)))
    # into a CPU module and into a module on the device: values copied where each lives
    for where in ("cpu", device):
        other = mlp().to(where)
        assert tuple(other.load_state_dict(loaded)) == ([], [])
        for n, p in other.named_parameters():
            assert p.device.type == where, n
        np.testing.assert_allclose(to_np(other(minitorch.tensor(x, device=where))), expected, rtol=1e-5, atol=1e-6)


def test_load_map_location(tmp_path, device):
    model = mlp()
    minitorch.save(model.state_dict(), tmp_path / "m.safetensors")
    loaded = minitorch.load(tmp_path / "m.safetensors", map_location=device)
    for k, v in model.state_dict().items():
        assert loaded[k].device.type == device, k
        np.testing.assert_array_equal(to_np(loaded[k]), to_np(v))
    other = mlp().to(device)
    other.load_state_dict(loaded)
    np.testing.assert_array_equal(to_np(other[3].bias), to_np(model[3].bias))


def test_save_load_str_path_and_dtypes(tmp_path, device):
    sd = {"a": minitorch.tensor(np.arange(6, dtype=np.float64).reshape(2, 3), device=device),
          "b": minitorch.tensor(np.array([1, -2, 3], np.int64), device=device),
          "c": minitorch.tensor(np.array([True, False]), device=device)}
    path = str(tmp_path / "mixed.safetensors")
    minitorch.save(sd, path)
    loaded = minitorch.load(path)
    for k, v in sd.items():
        assert loaded[k].dtype == v.dtype, k
        assert tuple(loaded[k].shape) == tuple(v.shape), k
        np.testing.assert_array_equal(to_np(loaded[k]), to_np(v))


def test_save_load_zero_dim_tensor_keeps_shape(tmp_path, device):
    # A 0-dim tensor (a scalar buffer such as a step count) must come back 0-dim.
    path = tmp_path / "scalar.safetensors"
    minitorch.save({"step": minitorch.tensor(2.5, device=device)}, path)
    loaded = minitorch.load(path)["step"]
    assert tuple(loaded.shape) == ()
    assert loaded.item() == 2.5


def test_module_with_scalar_buffer_round_trip(tmp_path, device):
    model = nn.Linear(2, 2)
    model.register_buffer("count", minitorch.tensor(7))
    model.to(device)
    minitorch.save(model.state_dict(), tmp_path / "m.safetensors")
    other = nn.Linear(2, 2)
    other.register_buffer("count", minitorch.tensor(0))
    other.to(device)
    other.load_state_dict(minitorch.load(tmp_path / "m.safetensors"))
    assert other.count.item() == 7 and other.count.device.type == device
    np.testing.assert_array_equal(to_np(other.weight), to_np(model.weight))


def test_save_nested_dict_loads_back_nested(tmp_path, device):
    # as PyTorch's: the structure comes back (a large tensor is stored as "model.w", the small
    # ones packed together in "minitorch.small")
    path = tmp_path / "nested.safetensors"
    minitorch.save({"model": {"w": minitorch.ones(100, device=device), "b": minitorch.ones(2, device=device)},
                    "step": minitorch.tensor(3, device=device)}, path)
    loaded = minitorch.load(path)
    assert set(loaded) == {"model", "step"} and set(loaded["model"]) == {"w", "b"}
    np.testing.assert_array_equal(to_np(loaded["model"]["w"]), np.ones(100, np.float32))
    np.testing.assert_array_equal(to_np(loaded["model"]["b"]), np.ones(2, np.float32))
    assert loaded["step"].dtype == minitorch.int64 and loaded["step"].shape == () and loaded["step"].item() == 3
    from safetensors.numpy import load_file
    assert set(load_file(str(path))) == {"model.w", "minitorch.small"}


def test_save_noncontiguous_tensor(tmp_path, device):
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = minitorch.tensor(arr, device=device).T
    assert not t.is_contiguous()
    minitorch.save({"t": t}, tmp_path / "t.safetensors")
    np.testing.assert_array_equal(to_np(minitorch.load(tmp_path / "t.safetensors")["t"]), arr.T)


def test_loaded_tensors_are_independent_of_model(tmp_path, device):
    model = nn.Linear(3, 2).to(device)
    minitorch.save(model.state_dict(), tmp_path / "m.safetensors")
    loaded = minitorch.load(tmp_path / "m.safetensors", map_location=device)
    before = to_np(loaded["weight"])
    with minitorch.no_grad():
        model.weight.fill_(9.0)
    np.testing.assert_array_equal(to_np(loaded["weight"]), before)


def test_file_readable_by_safetensors_numpy(tmp_path, device):
    from safetensors.numpy import load_file

    model = nn.Linear(3, 2).to(device)
    minitorch.save(model.state_dict(), tmp_path / "m.safetensors")
    arrays = load_file(str(tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(arrays["weight"], to_np(model.weight))
    np.testing.assert_array_equal(arrays["bias"], to_np(model.bias))


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.bfloat16], ids=["float32", "bfloat16"])
def test_saved_file_has_a_normal_files_permissions_and_is_written_whole(tmp_path, dtype):
    # mode 666 less the umask, like any new file (safetensors' save_file gave 600: a TA could not read it)
    path = tmp_path / "ckpt.safetensors"
    old = os.umask(0o022)
    try:
        minitorch.save({"w": minitorch.ones(2, 3).to(dtype)}, path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        os.umask(0o027)
        minitorch.save({"w": minitorch.ones(2, 3).to(dtype)}, tmp_path / "group.safetensors")
        assert stat.S_IMODE((tmp_path / "group.safetensors").stat().st_mode) == 0o640
        os.chmod(path, 0o664)  # overwriting keeps the file's own permissions
        minitorch.save({"w": minitorch.zeros(1).to(dtype)}, path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o664
    finally:
        os.umask(old)
    assert minitorch.load(path)["w"].shape == (1,)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.safetensors", "group.safetensors"]  # no leftovers
    with pytest.raises(TypeError):  # a failed save leaves the old file as it was
        minitorch.save({"w": minitorch.ones(5), "bad": object()}, path)
    assert minitorch.load(path)["w"].shape == (1,)


def test_load_truncated_file_value_error(tmp_path):
    path = tmp_path / "m.safetensors"
    minitorch.save(mlp().state_dict(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a valid safetensors file"):
        minitorch.load(path)


@pytest.mark.parametrize("content", [b"", b"garbage!", b"\xff" * 64, b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}xxxxx"])
def test_load_garbage_file_value_error(tmp_path, content):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError):
        minitorch.load(path)


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.safetensors"):
        minitorch.load(tmp_path / "nope.safetensors")


@pytest.mark.parametrize("obj", [{"a": np.ones(2)}, [object()], {"a": {"b": {1, 2}}}, {minitorch.ones(1): 1}])
def test_save_unsupported_object_type_error(tmp_path, obj):
    with pytest.raises(TypeError, match="save"):
        minitorch.save(obj, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()


def test_tensors_parameters_and_modules_pickle_like_pytorchs(device):
    # pickle (and multiprocessing) copy values, dtype, device, requires_grad and the
    # Parameter class; minitorch.save stays the way to write files (no pickle to load).
    import pickle

    model = nn.Linear(3, 2).to(device)
    back = pickle.loads(pickle.dumps(model))
    assert type(back.weight) is nn.Parameter and back.weight.requires_grad
    assert back.weight.device.type == device and back.weight.tolist() == model.weight.tolist()
    x = minitorch.arange(6, device=device).reshape(2, 3).t()
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == x.tolist() and y.dtype == minitorch.int64 and not y.requires_grad
    assert pickle.loads(pickle.dumps(minitorch.tensor(2.5))).shape == ()
    with pytest.raises(RuntimeError, match="not a leaf"):
        pickle.dumps(minitorch.ones(2, requires_grad=True) * 2)


def test_file_readable_by_torch(tmp_path, device):
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    st_torch = pytest.importorskip("safetensors.torch")
    ours = mlp().to(device)
    minitorch.save(ours.state_dict(), tmp_path / "m.safetensors")
    theirs = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    theirs.load_state_dict(st_torch.load_file(str(tmp_path / "m.safetensors")))
    x = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)
    expected = theirs(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(to_np(ours(minitorch.tensor(x, device=device))), expected, rtol=1e-5, atol=1e-6)
