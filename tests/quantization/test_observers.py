"""Observers and fake quantization (minitorch.ao.quantization) against PyTorch's results
(tests/quantization/workflow_goldens.npz, made by gen_workflow_goldens.py) and their rules."""
from pathlib import Path

import numpy as np
import pytest

import minitorch as mt
from minitorch.ao import quantization as tq

G = np.load(Path(__file__).with_name("workflow_goldens.npz"))
T = mt.tensor

OBSERVERS = {
    "minmax_affine": lambda: tq.MinMaxObserver(),
    "minmax_sym_qint8": lambda: tq.MinMaxObserver(dtype=mt.qint8, qscheme=mt.per_tensor_symmetric),
    "minmax_sym_quint8": lambda: tq.MinMaxObserver(qscheme=mt.per_tensor_symmetric),
    "minmax_reduce": lambda: tq.MinMaxObserver(reduce_range=True),
    "minmax_custom": lambda: tq.MinMaxObserver(quant_min=0, quant_max=127),
    "minmax_custom_sym_quint8": lambda: tq.MinMaxObserver(qscheme=mt.per_tensor_symmetric, quant_min=0,
                                                          quant_max=127),
    "minmax_qint8_affine_reduce": lambda: tq.MinMaxObserver(dtype=mt.qint8, reduce_range=True),
    "movavg": lambda: tq.MovingAverageMinMaxObserver(averaging_constant=0.1),
    "perch_affine0": lambda: tq.PerChannelMinMaxObserver(ch_axis=0),
    "perch_sym1": lambda: tq.PerChannelMinMaxObserver(ch_axis=1, dtype=mt.qint8, qscheme=mt.per_channel_symmetric),
    "movavg_perch": lambda: tq.MovingAveragePerChannelMinMaxObserver(averaging_constant=0.2, ch_axis=1),
    "hist_single": lambda: tq.HistogramObserver(),
    "hist_reduce_single": lambda: tq.HistogramObserver(reduce_range=True),
    "hist_sym_qint8_single": lambda: tq.HistogramObserver(dtype=mt.qint8, qscheme=mt.per_tensor_symmetric),
}


@pytest.mark.parametrize("name", list(OBSERVERS))
def test_observer_qparams_match_pytorch(name):
    obs = OBSERVERS[name]()
    assert obs(T(G["obs_x1"])) is not None
    if "single" not in name:  # two batches: running min/max or moving averages
        obs(T(G["obs_x2"]))
    scale, zp = obs.calculate_qparams()
    assert scale.dtype == mt.float32 and zp.dtype == mt.int32
    np.testing.assert_allclose(scale.numpy(), G[f"obs_{name}_scale"], rtol=1e-6)
    np.testing.assert_array_equal(zp.numpy(), G[f"obs_{name}_zp"])


def test_histogram_search_on_a_heavy_tail_matches_pytorch():
    obs = tq.HistogramObserver()
    obs(T(G["obs_xh"]))
    scale, zp = obs.calculate_qparams()
    np.testing.assert_allclose(scale.numpy(), G["obs_hist_tail_scale"], rtol=1e-6)
    np.testing.assert_array_equal(zp.numpy(), G["obs_hist_tail_zp"])


def test_histogram_over_batches_keeps_counts_and_range():
    x = mt.randn(600)
    a = tq.HistogramObserver(bins=256)
    a(x[:300])
    a(x[300:] * 3)  # widens the range: the old histogram is re-binned
    b = tq.HistogramObserver(bins=256)
    b(mt.cat([x[:300], x[300:] * 3]))
    assert a.histogram.sum().item() == 600
    assert a.min_val.item() == b.min_val.item() and a.max_val.item() == b.max_val.item()
    np.testing.assert_allclose(a.calculate_qparams()[0].numpy(), b.calculate_qparams()[0].numpy(), rtol=0.05)
    a(mt.tensor([float("inf"), 0.5]))  # infinities are ignored
    assert np.isfinite(a.max_val.item())


def test_uninitialized_observer_warns_and_returns_defaults():
    for obs in (tq.MinMaxObserver(), tq.PerChannelMinMaxObserver(), tq.HistogramObserver()):
        with pytest.warns(UserWarning, match="must run observer"):
            s, z = obs.calculate_qparams()
        assert s.tolist() == [1.0] and z.tolist() == [0]


def test_observer_repr_state_dict_and_with_args():
    obs = tq.MinMaxObserver()
    assert repr(obs) == "MinMaxObserver(min_val=inf, max_val=-inf)"
    obs(mt.tensor([-1.0, 3.0]))
    assert repr(obs) == "MinMaxObserver(min_val=-1.0, max_val=3.0)"
    assert list(obs.state_dict()) == ["eps", "min_val", "max_val"]
    factory = tq.MinMaxObserver.with_args(dtype=mt.qint8, qscheme=mt.per_tensor_symmetric)
    o1, o2 = factory(), factory()
    assert o1 is not o2 and o1.dtype is mt.qint8 and (o1.quant_min, o1.quant_max) == (-128, 127)
    assert factory.with_args(reduce_range=True)().quant_max == 63
    # per-channel statistics take their size from a checkpoint
    pc = tq.PerChannelMinMaxObserver()
    pc(mt.randn(3, 4))
    fresh = tq.PerChannelMinMaxObserver()
    fresh.load_state_dict(pc.state_dict())
    assert fresh.min_val.shape == (3,) and mt.equal(fresh.min_val, pc.min_val)


def test_placeholder_and_noop_observers():
    p = tq.default_dynamic_quant_observer()
    assert p.dtype is mt.quint8 and p.is_dynamic
    assert repr(p) == "PlaceholderObserver(dtype=minitorch.quint8, is_dynamic=True)"
    x = mt.randn(3)
    assert p(x) is x
    with pytest.raises(RuntimeError, match="should not be called"):
        p.calculate_qparams()
    assert tq.NoopObserver().dtype is mt.float16


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(quant_min=1, quant_max=10), ValueError, "must include 0"),
    (dict(quant_min=0, quant_max=0), ValueError, "strictly less"),
    (dict(quant_min=-200, quant_max=200, dtype=None), ValueError, "maximum bit range"),
    (dict(dtype=mt.float32), ValueError, "data types"),
    (dict(qscheme=mt.per_channel_affine), ValueError, "per-tensor observer"),
    (dict(qscheme=mt.per_tensor_symmetric, reduce_range=True), NotImplementedError, "Cannot reduce range"),
])
def test_bad_observer_configs_raise(kwargs, err, match):
    with pytest.raises(err, match=match):
        tq.MinMaxObserver(**kwargs)


def test_bad_qconfig_and_backend():
    with pytest.raises(ValueError, match="observer instance"):
        tq.QConfig(activation=tq.MinMaxObserver(), weight=tq.default_weight_observer)
    with pytest.raises(ValueError, match="backend 'arm'"):
        tq.get_default_qconfig("arm")
    qc = tq.get_default_qconfig("x86")
    assert isinstance(qc.activation(), tq.HistogramObserver) and qc.activation().reduce_range
    assert qc.weight().qscheme is mt.per_channel_symmetric
    assert tq.get_default_qconfig("qnnpack").weight().qscheme is mt.per_tensor_symmetric
    assert tq.get_default_qat_qconfig("x86").weight().is_per_channel


# ---- fake quantization ----
def test_fake_quantize_per_tensor_forward_and_ste_backward_match_pytorch():
    x = T(G["fq_x"]).requires_grad_()
    y = mt.fake_quantize_per_tensor_affine(x, 0.05, 10, 0, 127)
    y.backward(T(G["fq_g"]))
    np.testing.assert_array_equal(y.detach().numpy(), G["fq_pt_y"])
    np.testing.assert_array_equal(x.grad.numpy(), G["fq_pt_grad"])  # zero where clamped


def test_fake_quantize_per_channel_forward_and_ste_backward_match_pytorch():
    x = T(G["fq_x"]).requires_grad_()
    y = mt.fake_quantize_per_channel_affine(x, T(G["fq_pc_scales"]), T(G["fq_pc_zps"]), 1, -128, 127)
    y.backward(T(G["fq_g"]))
    np.testing.assert_array_equal(y.detach().numpy(), G["fq_pc_y"])
    np.testing.assert_array_equal(x.grad.numpy(), G["fq_pc_grad"])


def test_fake_quantize_equals_quantize_dequantize_and_float64():
    x = mt.randn(5, 7) * 3
    q = mt.quantize_per_tensor(x, 0.07, 3, mt.quint8).dequantize()
    assert mt.equal(mt.fake_quantize_per_tensor_affine(x, 0.07, 3, 0, 255), q)
    x64 = x.double().requires_grad_()
    y = mt.fake_quantize_per_tensor_affine(x64, mt.tensor([0.07]), mt.tensor([3]), 0, 255)
    assert y.dtype == mt.float64
    y.sum().backward()
    assert set(x64.grad.tolist()[0]) <= {0.0, 1.0}


@pytest.mark.parametrize("call, err, match", [
    (lambda x: mt.fake_quantize_per_tensor_affine(x, 0.1, 0, 10, 0), ValueError, "quant_min"),
    (lambda x: mt.fake_quantize_per_tensor_affine(x, -0.1, 0, 0, 255), ValueError, "positive"),
    (lambda x: mt.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255), ValueError, "zero_point"),
    (lambda x: mt.fake_quantize_per_tensor_affine(x.long(), 0.1, 0, 0, 255), TypeError, "floating point"),
    (lambda x: mt.fake_quantize_per_channel_affine(x, mt.ones(3), mt.zeros(4), 1, 0, 255), ValueError,
     "scale to be 1-D with 4"),
    (lambda x: mt.fake_quantize_per_channel_affine(x, mt.ones(4), mt.zeros(4), 2, 0, 255), IndexError, "axis 2"),
])
def test_fake_quantize_bad_arguments(call, err, match):
    with pytest.raises(err, match=match):
        call(mt.randn(3, 4))


def test_fake_quantize_module_observes_then_quantizes_and_switches():
    fq = tq.default_fake_quant()
    x = mt.randn(4, 8)
    y = fq(x)
    s, z = fq.calculate_qparams()
    assert mt.equal(y, mt.fake_quantize_per_tensor_affine(x, s.item(), int(z.item()), 0, 127))
    assert fq.scale.item() == s.item()
    fq.apply(tq.disable_fake_quant)
    assert mt.equal(fq(x), x)
    fq.apply(tq.disable_observer)
    before = fq.activation_post_process.min_val.item()
    fq.apply(tq.enable_fake_quant)
    fq(x * 10)
    assert fq.activation_post_process.min_val.item() == before
    assert fq.observer_enabled.tolist() == [0] and fq.fake_quant_enabled.tolist() == [1]
    w = tq.default_per_channel_weight_fake_quant()
    wt = mt.randn(6, 3)
    out = w(wt)
    assert w.scale.shape == (6,) and (out - wt).abs().max().item() <= w.scale.max().item() / 2 + 1e-6
    fresh = tq.default_per_channel_weight_fake_quant()
    fresh.load_state_dict(w.state_dict())
    assert mt.equal(fresh(wt), out)
