"""The eager-mode workflows (minitorch.ao.quantization): static post-training quantization of a
small CNN against PyTorch's converted model on the same weights and calibration data
(workflow_goldens.npz), quantize_dynamic (Linear, LSTM), QAT, the quantized modules' reprs and
state dicts, and the errors for misuse."""
import copy
from pathlib import Path

import numpy as np
import pytest

import minitorch as mt
import minitorch.nn as nn
from minitorch.ao import quantization as tq
from minitorch.ao.nn import intrinsic as nni
from minitorch.ao.nn import quantized as nnq
from minitorch.ao.nn import qat as nnqat
from minitorch.ao.nn.intrinsic import qat as nniqat
from minitorch.ao.nn.quantized import dynamic as nnqd

G = np.load(Path(__file__).with_name("workflow_goldens.npz"))
T = mt.tensor


class Net(nn.Module):
    """QuantStub, Conv2d+BN+ReLU, max pool, Linear+ReLU, Linear, DeQuantStub (the goldens' model)."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(64, 16)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(16, 5)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(self.quant(x)))))
        return self.dequant(self.fc2(self.relu1(self.fc1(x.flatten(1)))))


def _golden_net():
    net = Net()
    net.load_state_dict({k[4:]: T(v) for k, v in G.items() if k.startswith("cnn_") and "." in k}, strict=False)
    return net.eval()


def _quantized(qconfig):
    fused = tq.fuse_modules(_golden_net(), [["conv", "bn", "relu"], ["fc1", "relu1"]])
    fused.qconfig = qconfig
    prepared = tq.prepare(fused)
    prepared(T(G["cnn_calib"]))
    return prepared, tq.convert(prepared)


@pytest.mark.parametrize("name, qconfig", [("default", tq.default_qconfig),
                                           ("fbgemm", tq.get_default_qconfig("fbgemm"))])
def test_static_quantization_of_a_cnn_matches_pytorch(name, qconfig):
    _, q = _quantized(qconfig)
    qparams = [q.quant.scale.item(), q.quant.zero_point.item(), q.conv.scale, q.conv.zero_point, q.fc1.scale,
               q.fc1.zero_point, q.fc2.scale, q.fc2.zero_point]
    np.testing.assert_allclose(qparams, G[f"cnn_{name}_qparams"], rtol=1e-6)
    out = q(T(G["cnn_test"]))
    assert out.dtype == mt.float32
    # PyTorch's converted model on the same weights and calibration data: equal up to one output step
    np.testing.assert_allclose(out.numpy(), G[f"cnn_{name}_out"], atol=q.fc2.scale * 1.01)
    # and within quantization error of the float model (test inputs beyond the calibrated range clip)
    err = np.abs(out.numpy() - G["cnn_float_out"])
    assert np.median(err) < 0.05 and err.mean() < 0.1


def test_prepared_and_converted_structure_reprs_and_state_dict():
    prepared, q = _quantized(tq.default_qconfig)
    assert type(prepared.conv) is nni.ConvReLU2d
    assert type(prepared.conv.activation_post_process) is tq.MinMaxObserver
    assert not hasattr(prepared.pool, "activation_post_process")  # pooling keeps its input's qparams
    assert not hasattr(prepared.dequant, "activation_post_process")
    assert type(q.quant) is nnq.Quantize and type(q.dequant) is nnq.DeQuantize
    assert type(q.conv) is nni.quantized.ConvReLU2d and type(q.fc1) is nni.quantized.LinearReLU
    assert type(q.fc2) is nnq.Linear
    assert not hasattr(q, "qconfig") and not hasattr(q.fc2, "activation_post_process")
    s, z = q.quant.scale.item(), q.quant.zero_point.item()
    assert repr(q.quant) == f"Quantize(scale=tensor([{s:.4f}]), zero_point=tensor([{z}]), dtype=minitorch.quint8)"
    assert repr(q.fc2) == (f"QuantizedLinear(in_features=16, out_features=5, scale={q.fc2.scale}, "
                           f"zero_point={q.fc2.zero_point}, qscheme=minitorch.per_tensor_affine)")
    assert repr(q.conv).startswith("QuantizedConvReLU2d(1, 4, kernel_size=(3, 3), stride=(1, 1), scale=")
    assert repr(q.conv).endswith(", zero_point=0, padding=(1, 1))")
    sd = q.state_dict()
    assert list(sd) == ["quant.scale", "quant.zero_point", "conv.weight", "conv.bias", "conv.scale", "conv.zero_point",
                        "fc1.scale", "fc1.zero_point", "fc1._packed_params.dtype", "fc1._packed_params._packed_params",
                        "fc2.scale", "fc2.zero_point", "fc2._packed_params.dtype",
                        "fc2._packed_params._packed_params"]
    w, b = sd["fc2._packed_params._packed_params"]
    assert w.dtype is mt.qint8 and b.dtype == mt.float32 and sd["fc2._packed_params.dtype"] is mt.qint8
    # a fresh converted model (calibrated on other data) loads the state and computes the same
    other = tq.fuse_modules(_golden_net(), [["conv", "bn", "relu"], ["fc1", "relu1"]])
    other.qconfig = tq.default_qconfig
    p2 = tq.prepare(other)
    p2(mt.randn(2, 1, 8, 8) * 5)
    q2 = tq.convert(p2)
    assert repr(q2.load_state_dict(sd)) == "<All keys matched successfully>"
    x = T(G["cnn_test"])
    assert mt.equal(q2(x), q(x))
    with pytest.raises(RuntimeError, match='Missing key.*"fc2.scale"'):
        q2.load_state_dict({k: v for k, v in sd.items() if k != "fc2.scale"})


def test_converted_model_round_trips_through_save_and_load(tmp_path):
    _, q = _quantized(tq.default_qconfig)
    mt.save(q.state_dict(), tmp_path / "q.safetensors")
    loaded = mt.load(tmp_path / "q.safetensors")
    assert loaded["fc1._packed_params.dtype"] is mt.qint8
    w, b = loaded["fc1._packed_params._packed_params"]
    assert w.dtype is mt.qint8 and w.qscheme() is mt.per_tensor_affine
    other = tq.fuse_modules(_golden_net(), [["conv", "bn", "relu"], ["fc1", "relu1"]])
    other.qconfig = tq.default_qconfig
    p2 = tq.prepare(other)
    p2(mt.randn(2, 1, 8, 8))
    q2 = tq.convert(p2)  # calibrated differently: its qparams differ until it loads the file
    q2.load_state_dict(loaded)
    x = T(G["cnn_test"])
    assert mt.equal(q2(x), q(x))
    # per-channel weights (x86 qconfig) too
    _, qx = _quantized(tq.get_default_qconfig("x86"))
    mt.save(qx.state_dict(), tmp_path / "qx.safetensors")
    loaded = mt.load(tmp_path / "qx.safetensors")
    assert loaded["conv.weight"].qscheme() is mt.per_channel_affine
    qx2 = copy.deepcopy(qx)
    qx2.load_state_dict(loaded)
    assert mt.equal(qx2(x), qx(x))


def test_quantize_with_run_fn_and_quant_wrapper():
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    wrapped = tq.QuantWrapper(model)
    wrapped.qconfig = tq.default_qconfig
    data = [mt.randn(16, 6) for _ in range(3)]

    def calibrate(m, batches):
        for b in batches:
            m(b)

    q = tq.quantize(wrapped, calibrate, [data])
    assert type(q.module[0]) is nnq.Linear and type(q.quant) is nnq.Quantize
    x = mt.randn(5, 6)
    np.testing.assert_allclose(q(x).numpy(), model(x).detach().numpy(), atol=0.1)
    assert type(wrapped.module[0]) is nn.Linear  # not in place


def test_float_functional_becomes_qfunctional():
    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
            self.fc = nn.Linear(4, 4)
            self.add = nnq.FloatFunctional()
            self.cat = nnq.FloatFunctional()

        def forward(self, x):
            x = self.quant(x)
            y = self.add.add_relu(self.fc(x), x)
            return self.dequant(self.cat.cat([y, x], dim=1))

    mt.manual_seed(1)
    m = Residual().eval()
    m.qconfig = tq.default_qconfig
    x = mt.randn(8, 4)
    ref = m(x)
    p = tq.prepare(m)
    assert type(p.add.activation_post_process) is tq.MinMaxObserver
    p(x)
    q = tq.convert(p)
    assert type(q.add) is nnq.QFunctional and q.add.scale == p.add.activation_post_process.calculate_qparams()[0].item()
    assert repr(q.add).startswith(f"QFunctional(\n  scale={q.add.scale}, zero_point={q.add.zero_point}")
    assert list(q.add.state_dict()) == ["scale", "zero_point"]
    out = q(x)
    assert out.shape == (8, 8)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), atol=0.1)
    with pytest.raises(RuntimeError, match="not intended to use the 'forward'"):
        q.add(x)


def test_quantize_dynamic_linear_matches_pytorch():
    lin = nn.Linear(12, 8)
    lin.load_state_dict({"weight": T(G["dyn_lin_w"]), "bias": T(G["dyn_lin_b"])})
    model = nn.Sequential(lin)
    q = tq.quantize_dynamic(model, {nn.Linear}, dtype=mt.qint8)
    assert type(q[0]) is nnqd.Linear and type(model[0]) is nn.Linear
    assert repr(q[0]) == ("DynamicQuantizedLinear(in_features=12, out_features=8, dtype=minitorch.qint8, "
                          "qscheme=minitorch.per_tensor_affine)")
    x = T(G["dyn_lin_x"])
    out = q(x)
    np.testing.assert_allclose(out.numpy(), G["dyn_lin_out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.numpy(), lin(x).detach().numpy(), atol=0.05)
    assert list(q.state_dict()) == ["0.scale", "0.zero_point", "0._packed_params.dtype",
                                    "0._packed_params._packed_params"]
    # per-channel weights through a qconfig dict keyed by name
    qc = tq.quantize_dynamic(model, {"0": tq.per_channel_dynamic_qconfig})
    assert qc[0].weight().qscheme() is mt.per_channel_affine
    np.testing.assert_allclose(qc(x).numpy(), lin(x).detach().numpy(), atol=0.05)


def test_quantize_dynamic_lstm_matches_pytorch():
    lstm = nn.LSTM(6, 5)
    lstm.load_state_dict({k[9:]: T(v) for k, v in G.items()
                          if k.startswith("dyn_lstm_") and k[9:] not in ("x", "out", "h")})
    q = tq.quantize_dynamic(nn.Sequential(lstm), dtype=mt.qint8)  # default spec: Linear and LSTM
    assert type(q[0]) is nnqd.LSTM and repr(q[0]) == "DynamicQuantizedLSTM(6, 5)"
    x = T(G["dyn_lstm_x"])
    y, (h, c) = q(x)
    np.testing.assert_allclose(y.numpy(), G["dyn_lstm_out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), G["dyn_lstm_h"], rtol=1e-5, atol=1e-5)
    yf, _ = lstm(x)
    np.testing.assert_allclose(y.numpy(), yf.detach().numpy(), atol=0.03)
    sd = q.state_dict()
    assert sd["0.weight_ih_l0"].dtype is mt.qint8 and sd["0.bias_hh_l0"].dtype == mt.float32


def test_quantize_dynamic_bidirectional_batch_first_lstm_is_close_to_float():
    mt.manual_seed(2)
    lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
    q = tq.quantize_dynamic(nn.Sequential(lstm), {nn.LSTM})
    x = mt.randn(3, 5, 4)
    y, (h, c) = q(x)
    yf, (hf, cf) = lstm(x)
    assert y.shape == yf.shape and h.shape == hf.shape and c.shape == cf.shape
    np.testing.assert_allclose(y.numpy(), yf.detach().numpy(), atol=0.05)


def _qat_model():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
            self.conv, self.bn, self.relu = nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU()
            self.fc = nn.Linear(4 * 6 * 6, 3)

        def forward(self, x):
            x = self.relu(self.bn(self.conv(self.quant(x))))
            return self.dequant(self.fc(x.flatten(1)))

    return M()


def test_qat_trains_and_converts():
    mt.manual_seed(0)
    model = _qat_model().train()
    model = tq.fuse_modules_qat(model, [["conv", "bn", "relu"]])
    model.qconfig = tq.get_default_qat_qconfig("x86")
    qat = tq.prepare_qat(model)
    assert type(qat.conv) is nniqat.ConvBnReLU2d and type(qat.fc) is nnqat.Linear
    assert isinstance(qat.fc.weight_fake_quant, tq.FakeQuantize)
    assert isinstance(qat.conv.activation_post_process, tq.FakeQuantize)
    x, target = mt.randn(16, 1, 8, 8), mt.randint(0, 3, (16,))
    opt = mt.optim.SGD(qat.parameters(), lr=0.1)
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(qat(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert qat.conv.weight.grad is not None and qat.fc.weight.grad.abs().sum().item() > 0
    qat.eval()
    ref = qat(x)
    q = tq.convert(qat)
    assert type(q.conv) is nni.quantized.ConvReLU2d and type(q.fc) is nnq.Linear
    out = q(x)
    # the converted model computes what the fake-quantized model simulated
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), atol=3 * q.fc.scale)


def test_quantize_qat_and_qat_module_errors():
    mt.manual_seed(0)
    model = nn.Sequential(tq.QuantStub(), nn.Linear(4, 4), nn.ReLU(), tq.DeQuantStub())
    model = tq.fuse_modules_qat(model.train(), [["1", "2"]])
    model.qconfig = tq.default_qat_qconfig

    def train(m, steps):
        opt = mt.optim.SGD(m.parameters(), lr=0.01)
        for _ in range(steps):
            opt.zero_grad()
            m(mt.randn(8, 4)).pow(2).mean().backward()
            opt.step()

    q = tq.quantize_qat(model, train, [2])
    assert type(q[1]) is nni.quantized.LinearReLU
    with pytest.raises(ValueError, match="qconfig must be provided"):
        nnqat.Linear(2, 2)
    with pytest.raises(RuntimeError, match="training mode"):
        tq.prepare_qat(nn.Sequential(nn.Linear(2, 2)).eval())


def test_workflow_errors():
    with pytest.warns(UserWarning, match="None of the submodule got qconfig"):
        tq.prepare(nn.Sequential(nn.Linear(2, 2)))
    m = nn.Sequential(tq.QuantStub(), nn.Linear(2, 2))
    m.qconfig = tq.default_qconfig
    with pytest.raises(TypeError, match="expected an nn.Module"):
        tq.prepare([m])
    m[1].qconfig = tq.default_qconfig
    with pytest.raises(RuntimeError, match="no activation_post_process: call prepare"):
        tq.convert(m)  # never prepared
    bad = nn.Sequential(nn.Linear(2, 2))
    bad.qconfig = "fbgemm"
    with pytest.raises(TypeError, match="qconfig must be a QConfig"):
        tq.prepare(bad)
    p = tq.prepare(m)
    p(mt.randn(3, 2))
    q = tq.convert(p)
    with pytest.raises(TypeError, match="expected a quantized input"):
        q[1](mt.randn(3, 2))  # a float tensor into a quantized Linear
    with pytest.raises(ValueError, match="Don't know how to quantize"):
        tq.quantize_dynamic(nn.Sequential(nn.Linear(2, 2)), {nn.Linear}, dtype=mt.float16)
    with pytest.raises(NotImplementedError, match="no dynamic quantized module for GRU"):
        tq.quantize_dynamic(nn.Sequential(nn.GRU(2, 2)), {nn.GRU})
    with pytest.raises(TypeError, match="qconfig_spec"):
        tq.quantize_dynamic(nn.Sequential(nn.Linear(2, 2)), "linear")


def test_quantization_alias_and_module_names():
    import minitorch.quantization as alias

    assert alias is tq and mt.quantization.prepare is tq.prepare
    assert nnq.MaxPool2d is nn.MaxPool2d
    qx = mt.quantize_per_tensor(mt.randn(1, 2, 4, 4), 0.1, 10, mt.quint8)
    assert nnq.MaxPool2d(2)(qx).dtype is mt.quint8
    relu6 = nnq.ReLU6()
    assert repr(relu6) == "QuantizedReLU6()"
    assert relu6(mt.quantize_per_tensor(mt.tensor([-1.0, 3.0, 9.0]), 0.1, 10, mt.quint8)).dequantize().tolist() == \
        pytest.approx([0.0, 3.0, 6.0])


def test_observers_and_qat_follow_the_model_device(device):
    mt.manual_seed(0)
    model = nn.Sequential(tq.QuantStub(), nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8, 3), tq.DeQuantStub()).train().to(device)
    model = tq.fuse_modules_qat(model, [["1", "2", "3"]])
    model.qconfig = tq.get_default_qat_qconfig("x86")
    qat = tq.prepare_qat(model)
    x = mt.randn(4, 1, 4, 4, device=device)
    qat(x).sum().backward()
    assert qat[1].weight.grad.device == x.device
    assert qat[1].activation_post_process.scale.device == x.device
    assert qat[5].weight_fake_quant.activation_post_process.min_val.device == x.device
    obs = tq.PerChannelMinMaxObserver(ch_axis=1).to(device)
    obs(x)
    s, z = obs.calculate_qparams()
    ref = tq.PerChannelMinMaxObserver(ch_axis=1)
    ref(x.cpu())
    assert mt.equal(s.cpu(), ref.calculate_qparams()[0])


def test_qconfig_none_keeps_a_submodule_float_and_qconfig_mapping():
    model = nn.Sequential(tq.QuantStub(), nn.Linear(4, 4), tq.DeQuantStub(), nn.Linear(4, 2))
    model.qconfig = tq.default_qconfig
    model[3].qconfig = None
    p = tq.prepare(model)
    p(mt.randn(5, 4))
    q = tq.convert(p)
    assert type(q[1]) is nnq.Linear and type(q[3]) is nn.Linear
    assert q(mt.randn(2, 4)).shape == (2, 2)
    mapping = (tq.QConfigMapping().set_global(tq.default_dynamic_qconfig).set_object_type(nn.LSTM, None)
               .set_module_name("1", tq.per_channel_dynamic_qconfig))
    net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4), nn.LSTM(4, 4))
    qd = tq.quantize_dynamic(net, mapping)
    assert type(qd[0]) is nnqd.Linear and type(qd[2]) is nn.LSTM
    assert qd[0].weight().qscheme() is mt.per_tensor_affine and qd[1].weight().qscheme() is mt.per_channel_affine
    assert type(tq.get_default_qconfig_mapping("qnnpack").global_qconfig.weight()) is tq.MinMaxObserver


@pytest.mark.parametrize("kind", ["conv", "linear"])
def test_qat_batch_norm_folding_is_exact_without_fake_quant(kind):
    mt.manual_seed(3)
    if kind == "conv":
        float_mod = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3))
        fused = nni.ConvBn2d(float_mod[0], float_mod[1])
        x = mt.randn(4, 2, 5, 5)
    else:
        float_mod = nn.Sequential(nn.Linear(5, 3), nn.BatchNorm1d(3))
        fused = nni.LinearBn1d(float_mod[0], float_mod[1])
        x = mt.randn(6, 5)
    with mt.no_grad():
        float_mod[1].running_mean.copy_(mt.randn(3) * 0.1)
        float_mod[1].running_var.copy_(mt.rand(3) + 0.5)
    fused.qconfig = tq.default_qat_qconfig
    qat_cls = nniqat.ConvBn2d if kind == "conv" else nniqat.LinearBn1d
    qat = qat_cls.from_float(fused)
    qat.apply(tq.disable_fake_quant)
    ref_model = copy.deepcopy(float_mod)
    for mode in ("train", "eval"):
        getattr(qat, mode)()
        getattr(ref_model, mode)()
        np.testing.assert_allclose(qat(x).detach().numpy(), ref_model(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    # and the quantized module convert makes from it computes the eval-mode output
    qat.apply(tq.enable_fake_quant)
    model = nn.Sequential(tq.QuantStub(tq.default_qat_qconfig), qat, tq.DeQuantStub())
    model.qconfig = tq.default_qat_qconfig
    prepared = tq.prepare(model, observer_non_leaf_module_list={qat_cls})
    prepared.eval()
    prepared(x)
    q = tq.convert(prepared)
    assert type(q[1]) is nnq.Conv2d if kind == "conv" else type(q[1]) is nnq.Linear
    np.testing.assert_allclose(q(x).numpy(), ref_model(x).detach().numpy(), atol=0.1)


def test_converted_mnist_sized_model_is_about_4x_smaller_on_disk(tmp_path):
    mt.manual_seed(0)
    model = nn.Sequential(tq.QuantStub(), nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 13 * 13, 128), nn.ReLU(), nn.Linear(128, 10), tq.DeQuantStub()).eval()
    model = tq.fuse_modules(model, [["1", "2"], ["5", "6"]])
    model.qconfig = tq.get_default_qconfig("x86")
    x = mt.randn(4, 1, 28, 28)
    q = tq.quantize(model, lambda m, data: m(data), [x])
    mt.save(model.state_dict(), tmp_path / "f.safetensors")
    mt.save(q.state_dict(), tmp_path / "q.safetensors")
    ratio = (tmp_path / "f.safetensors").stat().st_size / (tmp_path / "q.safetensors").stat().st_size
    assert ratio >= 3.5, ratio
    assert (q(x) - model(x)).abs().max().item() < 0.1


def test_quantized_models_move_to_the_device(device):
    """model.to(device) moves the int8 weights of converted and dynamic modules (plain
    attributes, not parameters), and the model gives the same outputs there."""
    _, converted = _quantized(tq.default_qconfig)
    x = T(G["cnn_calib"])
    ref = converted(x).numpy()
    out = converted.to(device)(x.to(device))
    assert converted.fc1._packed_params._weight_bias()[0].device.type == device
    np.testing.assert_allclose(out.cpu().numpy(), ref, atol=1e-6)

    lstm = nn.LSTM(6, 5)
    model = nn.Sequential(nn.Linear(6, 6), lstm)
    q = tq.quantize_dynamic(model, dtype=mt.qint8)
    xs = mt.randn(3, 2, 6)
    y_ref, _ = q(xs)
    y, _ = q.to(device)(xs.to(device))
    np.testing.assert_allclose(y.detach().cpu().numpy(), y_ref.detach().numpy(), atol=1e-5)
