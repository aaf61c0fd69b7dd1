"""Quantized tensors (python/minitorch/_quantized.py) against PyTorch 1.13's on the same inputs
(golden.npz, written by make_golden.py), and their Tensor-like behaviour and errors."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F

G = np.load(pathlib.Path(__file__).with_name("golden.npz"))
QDT = {"quint8": minitorch.quint8, "qint8": minitorch.qint8, "qint32": minitorch.qint32}
f = minitorch.from_numpy


@pytest.mark.parametrize("name", list(QDT))
def test_quantize_per_tensor_matches_pytorch(name, device):
    c = f"per_tensor_{name}"
    scale, zp = G[f"{c}/qparams"]
    q = minitorch.quantize_per_tensor(f(G[f"{c}/x"]).to(device), scale, int(zp), QDT[name])
    assert q.dtype == QDT[name] and q.is_quantized and q.qscheme() is minitorch.per_tensor_affine
    assert q.q_scale() == scale and q.q_zero_point() == zp and q.device.type == device
    r = q.int_repr()
    assert r.dtype == QDT[name].storage
    np.testing.assert_array_equal(r.cpu().numpy(), G[f"{c}/int_repr"])  # ties to even, clamping
    np.testing.assert_array_equal(q.dequantize().cpu().numpy(), G[f"{c}/dequant"])
    np.testing.assert_array_equal(minitorch.dequantize(q).cpu().numpy(), G[f"{c}/dequant"])


@pytest.mark.parametrize("name", list(QDT))
def test_quantize_per_channel_matches_pytorch(name, device):
    c = f"per_channel_{name}"
    axis = int(G[f"{c}/axis"])
    q = minitorch.quantize_per_channel(f(G[f"{c}/x"]).to(device), f(G[f"{c}/scales"]), f(G[f"{c}/zero_points"]),
                                       axis, QDT[name])
    assert q.qscheme() is minitorch.per_channel_affine and q.q_per_channel_axis() == axis
    np.testing.assert_array_equal(q.q_per_channel_scales().numpy(), G[f"{c}/scales"])
    assert q.q_per_channel_scales().dtype == minitorch.float64
    np.testing.assert_array_equal(q.q_per_channel_zero_points().numpy(), G[f"{c}/zero_points"])
    np.testing.assert_array_equal(q.int_repr().cpu().numpy(), G[f"{c}/int_repr"])
    np.testing.assert_array_equal(q.dequantize().cpu().numpy(), G[f"{c}/dequant"])


@pytest.mark.parametrize("name", ["quint8", "qint8"])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_quantize_per_tensor_dynamic_matches_pytorch(name, reduce_range):
    c = f"dynamic/{name}_{int(reduce_range)}"
    q = minitorch.quantize_per_tensor_dynamic(f(G["dynamic/x"]), QDT[name], reduce_range)
    scale, zp = G[f"{c}/qparams"]
    assert q.q_zero_point() == zp and np.float32(q.q_scale()) == np.float32(scale)
    np.testing.assert_array_equal(q.int_repr().numpy(), G[f"{c}/int_repr"])


def test_round_trip_error_is_half_a_step():
    x = minitorch.randn(1000)
    q = minitorch.quantize_per_tensor(x.clamp(-2, 2), 4 / 255, 128, minitorch.quint8)
    assert float((q.dequantize() - x.clamp(-2, 2)).abs().max()) <= 0.5 * 4 / 255 + 1e-6


def test_bad_qparams_are_refused_as_pytorch_does():
    x = minitorch.randn(4)
    with pytest.raises(RuntimeError, match="zero_point"):
        minitorch.quantize_per_tensor(x, 0.1, -1, minitorch.quint8)  # negative zero point for quint8
    with pytest.raises(RuntimeError, match="zero_point"):
        minitorch.quantize_per_tensor(x, 0.1, 128, minitorch.qint8)
    with pytest.raises(RuntimeError, match="scale"):
        minitorch.quantize_per_tensor(x, 0.0, 0, minitorch.quint8)
    with pytest.raises(RuntimeError, match="quantized dtype"):
        minitorch.quantize_per_tensor(x, 0.1, 0, minitorch.uint8)
    with pytest.raises(RuntimeError, match="floating"):
        minitorch.quantize_per_tensor(minitorch.arange(4), 0.1, 0, minitorch.quint8)
    with pytest.raises(RuntimeError, match=r"size \(2,\)"):
        minitorch.quantize_per_channel(minitorch.randn(2, 3), minitorch.ones(3), minitorch.zeros(3), 0,
                                       minitorch.qint8)
    with pytest.raises(RuntimeError, match="zero_points"):
        minitorch.quantize_per_channel(minitorch.randn(2, 3), minitorch.ones(2),
                                       minitorch.tensor([0, -1]), 0, minitorch.quint8)
    q = minitorch.quantize_per_tensor(x, 0.1, 0, minitorch.qint8)
    with pytest.raises(RuntimeError, match="per-channel"):
        q.q_per_channel_scales()
    qc = minitorch.quantize_per_channel(minitorch.randn(2, 3), minitorch.ones(2), minitorch.zeros(2), 0,
                                        minitorch.qint8)
    with pytest.raises(RuntimeError, match="per-tensor"):
        qc.q_scale()


def test_dtypes_and_repr():
    assert repr(minitorch.quint8) == "minitorch.quint8" and minitorch.qint32.is_quantized
    assert not minitorch.qint8.is_floating_point and minitorch.qint8.itemsize == 1
    q = minitorch.quantize_per_tensor(minitorch.tensor([-1.0, 0.0, 1.0, 2.0]), 0.1, 10, minitorch.quint8)
    assert repr(q) == ("tensor([-1.,  0.,  1.,  2.], size=(4,), dtype=minitorch.quint8,\n"
                       "       quantization_scheme=minitorch.per_tensor_affine, scale=0.1, zero_point=10)")
    qc = minitorch.quantize_per_channel(minitorch.tensor([[-1.0, 0.0], [1.0, 2.0]]),
                                        minitorch.tensor([0.1, 0.01]), minitorch.tensor([10, 0]), 0,
                                        minitorch.quint8)
    assert "quantization_scheme=minitorch.per_channel_affine" in repr(qc) and "axis=0" in repr(qc)


def test_shape_methods_keep_the_qparams():
    q = minitorch.quantize_per_tensor(minitorch.randn(2, 3, 4), 0.05, 3, minitorch.qint8)
    assert q.shape == (2, 3, 4) and q.size(1) == 3 and q.dim() == 3 and q.numel() == 24 and len(q) == 2
    for v in (q.reshape(6, 4), q.view(-1), q.flatten(1), q.permute(2, 0, 1).contiguous(), q.clone(), q[1],
              q.transpose(0, 1), q.unsqueeze(0).squeeze(0)):
        assert v.q_scale() == 0.05 and v.q_zero_point() == 3 and v.dtype == minitorch.qint8
    np.testing.assert_array_equal(q.reshape(6, 4).int_repr().numpy(), q.int_repr().numpy().reshape(6, 4))
    np.testing.assert_array_equal(q.transpose(0, 1).int_repr().numpy(), q.int_repr().numpy().transpose(1, 0, 2))
    assert q.equal(q.clone()) and not q.equal(minitorch.quantize_per_tensor(q.dequantize(), 0.05, 4, minitorch.qint8))


def test_relu_and_pooling_on_quantized_tensors(device):
    x = minitorch.randn(2, 3, 6, 6).to(device)
    q = minitorch.quantize_per_tensor(x, 0.05, 70, minitorch.quint8)
    r = F.relu(q)
    np.testing.assert_array_equal(r.int_repr().cpu().numpy(), np.maximum(q.int_repr().cpu().numpy(), 70))
    assert r.q_zero_point() == 70
    for fn in (lambda t: F.max_pool2d(t, 2), lambda t: F.avg_pool2d(t, 2), lambda t: F.adaptive_avg_pool2d(t, 1)):
        out = fn(q)
        assert out.dtype == minitorch.quint8 and out.q_scale() == 0.05
        ref = fn(q.dequantize()).cpu().numpy()
        assert np.abs(out.dequantize().cpu().numpy() - ref).max() <= 0.5 * 0.05 + 1e-6
    # max pooling commutes with the monotone quantization: exact
    m = F.max_pool2d(q, 2).int_repr().cpu().numpy()
    np.testing.assert_array_equal(m, q.int_repr().cpu().numpy().reshape(2, 3, 3, 2, 3, 2).max((3, 5)))
    assert F.flatten(q, 1).shape == (2, 108)


def test_relu_per_channel():
    qc = minitorch.quantize_per_channel(minitorch.randn(3, 4), minitorch.tensor([0.1, 0.2, 0.3]),
                                        minitorch.tensor([5, 0, 9]), 0, minitorch.quint8)
    expect = np.maximum(qc.int_repr().numpy(), np.array([[5], [0], [9]]))
    np.testing.assert_array_equal(qc.relu().int_repr().numpy(), expect)


def _could_not_run(op):
    return pytest.raises(NotImplementedError, match=rf"Could not run 'aten::{op}(\.\w+)?' with arguments from the "
                                                    rf"'Quantized(CPU|CUDA)' backend")


def test_unsupported_ops_name_the_op(device):
    q = minitorch.quantize_per_tensor(minitorch.randn(3, 3).to(device), 0.1, 10, minitorch.quint8)
    with _could_not_run("add"):
        minitorch.add(q, q)
    with _could_not_run("add"):
        q + 1
    with _could_not_run("mul"):
        2 * q
    with _could_not_run("sum"):
        q.sum()
    with _could_not_run("matmul"):
        minitorch.matmul(q, q)
    with _could_not_run("matmul"):
        q @ q
    with _could_not_run("exp"):
        minitorch.exp(q)
    with _could_not_run("softmax"):
        q.softmax(0)
    with pytest.raises(RuntimeError, match="dequantize"):
        q.to(minitorch.float32)
    with pytest.raises(TypeError, match="int_repr"):
        q.numpy()


def test_make_per_tensor_quantized_tensor_keeps_the_integers():
    ints = minitorch.tensor([0, 5, 255], dtype=minitorch.uint8)
    q = minitorch._make_per_tensor_quantized_tensor(ints, 0.5, 5)
    assert q.dtype == minitorch.quint8
    np.testing.assert_array_equal(q.dequantize().numpy(), [-2.5, 0.0, 125.0])
    q8 = minitorch._make_per_channel_quantized_tensor(minitorch.tensor([[1, -1], [2, 3]], dtype=minitorch.int8),
                                                      minitorch.tensor([0.5, 0.25]), minitorch.tensor([0, 1]), 0)
    np.testing.assert_array_equal(q8.dequantize().numpy(), [[0.5, -0.5], [0.25, 0.5]])


def test_save_and_load_keep_the_qparams(tmp_path):
    q = minitorch.quantize_per_tensor(minitorch.randn(3, 4), 0.1, 10, minitorch.quint8)
    qc = minitorch.quantize_per_channel(minitorch.randn(3, 40), minitorch.tensor([0.1, 0.2, 0.3]),
                                        minitorch.tensor([0, 1, -2]), 0, minitorch.qint8)
    q32 = minitorch.quantize_per_tensor(minitorch.randn(5), 0.001, -7, minitorch.qint32)
    state = {"fc.weight": qc, "fc.bias": minitorch.ones(3), "x": q, "acc": q32, "dtype": minitorch.qint8}
    minitorch.save(state, tmp_path / "q.safetensors")
    back = minitorch.load(tmp_path / "q.safetensors")
    assert back["fc.weight"].equal(qc) and back["x"].equal(q) and back["acc"].equal(q32)
    assert back["dtype"] is minitorch.qint8 and back["fc.weight"].q_per_channel_axis() == 0
    assert back["fc.weight"].q_per_channel_scales().dtype == minitorch.float64
    assert back["fc.weight"].q_per_channel_zero_points().dtype == minitorch.int64
    # an ordinary safetensors reader sees the integers; the per-channel qparams and the other small
    # tensors share the entry "minitorch.small"
    from safetensors.numpy import load_file

    raw = load_file(tmp_path / "q.safetensors")
    np.testing.assert_array_equal(raw["fc.weight"], qc.int_repr().numpy())
    assert set(raw) == {"fc.weight", "minitorch.small"}
