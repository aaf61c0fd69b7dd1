"""Writes workflow_goldens.npz: PyTorch's results for the quantization workflows (observers'
qparams, fake quantization forward/backward, a small CNN through prepare/calibrate/convert,
quantize_dynamic on Linear and LSTM), on inputs and weights made here with NumPy.

Run with a Python that has PyTorch (1.13 here; CI has none and reads the committed file):

    /usr/bin/python3 tests/quantization/gen_workflow_goldens.py
"""
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.ao import quantization as tq

# fbgemm where this PyTorch build has it, else onednn (the same x86 int8 numerics)
torch.backends.quantized.engine = "fbgemm" if "fbgemm" in torch.backends.quantized.supported_engines else "onednn"
rng = np.random.default_rng(0)
out = {}


class Histogram2(tq.HistogramObserver):
    """PyTorch 2.x's histogram of one calibration batch: 1.13 passes int(min), int(max) to histc (a
    bug fixed since); the L2 search that follows is unchanged. Goldens calibrate with one batch."""

    def forward(self, x_orig):
        x = x_orig.detach()
        lo, hi = torch.aminmax(x)
        if self.min_val.item() != float("inf"):  # 1.13 hooks fused modules' observers twice: same batch
            assert lo == self.min_val and hi == self.max_val
            self.histogram += torch.histc(x, self.bins, min=lo.item(), max=hi.item())
            return x_orig
        self.min_val.resize_(lo.shape).copy_(lo)
        self.max_val.resize_(hi.shape).copy_(hi)
        torch.histc(x, self.bins, min=lo.item(), max=hi.item(), out=self.histogram)
        return x_orig


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- observers ----
x1, x2 = f32(4, 6, scale=2.0), f32(4, 6, scale=3.0) + 0.5
out["obs_x1"], out["obs_x2"] = x1, x2
OBSERVERS = {
    "minmax_affine": lambda: tq.MinMaxObserver(),
    "minmax_sym_qint8": lambda: tq.MinMaxObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric),
    "minmax_sym_quint8": lambda: tq.MinMaxObserver(qscheme=torch.per_tensor_symmetric),
    "minmax_reduce": lambda: tq.MinMaxObserver(reduce_range=True),
    "minmax_custom": lambda: tq.MinMaxObserver(quant_min=0, quant_max=127),
    "minmax_custom_sym_quint8": lambda: tq.MinMaxObserver(qscheme=torch.per_tensor_symmetric, quant_min=0,
                                                          quant_max=127),
    "minmax_qint8_affine_reduce": lambda: tq.MinMaxObserver(dtype=torch.qint8, reduce_range=True),
    "movavg": lambda: tq.MovingAverageMinMaxObserver(averaging_constant=0.1),
    "perch_affine0": lambda: tq.PerChannelMinMaxObserver(ch_axis=0),
    "perch_sym1": lambda: tq.PerChannelMinMaxObserver(ch_axis=1, dtype=torch.qint8,
                                                      qscheme=torch.per_channel_symmetric),
    "movavg_perch": lambda: tq.MovingAveragePerChannelMinMaxObserver(averaging_constant=0.2, ch_axis=1),
    "hist_single": lambda: Histogram2(),
    "hist_reduce_single": lambda: Histogram2(reduce_range=True),
    "hist_sym_qint8_single": lambda: Histogram2(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric),
}
for name, make in OBSERVERS.items():
    obs = make()
    obs(torch.from_numpy(x1))
    if "single" not in name:
        obs(torch.from_numpy(x2))
    s, z = obs.calculate_qparams()
    out[f"obs_{name}_scale"], out[f"obs_{name}_zp"] = s.numpy().astype(np.float32), z.numpy().astype(np.int64)
# a histogram over a heavy-tailed sample: the L2 search clips the tail
xh = np.concatenate([f32(2000), f32(20, scale=20.0)]).astype(np.float32)
out["obs_xh"] = xh
obs = Histogram2()
obs(torch.from_numpy(xh))
s, z = obs.calculate_qparams()
out["obs_hist_tail_scale"], out["obs_hist_tail_zp"] = s.numpy(), z.numpy().astype(np.int64)

# ---- fake quantize: forward and the straight-through backward ----
xf = f32(3, 4, 5, scale=2.0)
g = f32(3, 4, 5)
out["fq_x"], out["fq_g"] = xf, g
t = torch.from_numpy(xf).requires_grad_()
y = torch.fake_quantize_per_tensor_affine(t, 0.05, 10, 0, 127)
y.backward(torch.from_numpy(g))
out["fq_pt_y"], out["fq_pt_grad"] = y.detach().numpy(), t.grad.numpy()
scales = np.array([0.02, 0.05, 0.1, 0.013], np.float32)
zps = np.array([0, 3, -5, 1], np.int32)
t = torch.from_numpy(xf).requires_grad_()
y = torch.fake_quantize_per_channel_affine(t, torch.from_numpy(scales), torch.from_numpy(zps), 1, -128, 127)
y.backward(torch.from_numpy(g))
out["fq_pc_scales"], out["fq_pc_zps"] = scales, zps
out["fq_pc_y"], out["fq_pc_grad"] = y.detach().numpy(), t.grad.numpy()


# ---- static post-training quantization of a small CNN ----
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(16, 5)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(self.quant(x)))))
        x = torch.flatten(x, 1)
        return self.dequant(self.fc2(self.relu1(self.fc1(x))))


weights = {"conv.weight": f32(4, 1, 3, 3, scale=0.4), "conv.bias": f32(4, scale=0.1),
           "bn.weight": 1 + f32(4, scale=0.1), "bn.bias": f32(4, scale=0.1),
           "bn.running_mean": f32(4, scale=0.1), "bn.running_var": 1 + np.abs(f32(4, scale=0.2)),
           "fc1.weight": f32(16, 64, scale=0.15), "fc1.bias": f32(16, scale=0.1),
           "fc2.weight": f32(5, 16, scale=0.3), "fc2.bias": f32(5, scale=0.1)}
for k, v in weights.items():
    out["cnn_" + k] = v
calib = f32(16, 1, 8, 8)
test = f32(6, 1, 8, 8)
out["cnn_calib"], out["cnn_test"] = calib, test
for qname, qconfig in (("default", tq.default_qconfig), ("fbgemm", tq.QConfig(activation=Histogram2.with_args(reduce_range=True),
                                                        weight=tq.default_per_channel_weight_observer))):
    net = Net()
    net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=False)
    net.eval()
    out["cnn_float_out"] = net(torch.from_numpy(test)).detach().numpy()
    fused = tq.fuse_modules(net, [["conv", "bn", "relu"], ["fc1", "relu1"]])
    out["cnn_fused_conv_w"] = fused.conv[0].weight.detach().numpy()
    out["cnn_fused_conv_b"] = fused.conv[0].bias.detach().numpy()
    fused.qconfig = qconfig
    prepared = tq.prepare(fused)
    prepared(torch.from_numpy(calib))
    q = tq.convert(prepared)
    out[f"cnn_{qname}_out"] = q(torch.from_numpy(test)).numpy()
    out[f"cnn_{qname}_qparams"] = np.array([q.quant.scale.item(), q.quant.zero_point.item(), q.conv.scale,
                                            q.conv.zero_point, q.fc1.scale, q.fc1.zero_point, q.fc2.scale,
                                            q.fc2.zero_point], np.float64)

# ---- dynamic quantization ----
lin_w, lin_b, lin_x = f32(8, 12, scale=0.3), f32(8, scale=0.1), f32(5, 12)
lin = nn.Linear(12, 8)
lin.weight.data, lin.bias.data = torch.from_numpy(lin_w), torch.from_numpy(lin_b)
qlin = tq.quantize_dynamic(nn.Sequential(lin), {nn.Linear}, dtype=torch.qint8)
out.update(dyn_lin_w=lin_w, dyn_lin_b=lin_b, dyn_lin_x=lin_x, dyn_lin_out=qlin(torch.from_numpy(lin_x)).numpy())
lstm = nn.LSTM(6, 5, num_layers=1)
lstm_params = {k: f32(*v.shape, scale=0.4) for k, v in lstm.state_dict().items()}
lstm.load_state_dict({k: torch.from_numpy(v) for k, v in lstm_params.items()})
lstm_x = f32(4, 3, 6)
qlstm = tq.quantize_dynamic(nn.Sequential(lstm), {nn.LSTM}, dtype=torch.qint8)
y, (h, c) = qlstm(torch.from_numpy(lstm_x))
out.update({"dyn_lstm_" + k: v for k, v in lstm_params.items()})
out.update(dyn_lstm_x=lstm_x, dyn_lstm_out=y.detach().numpy(), dyn_lstm_h=h.detach().numpy())

np.savez_compressed(Path(__file__).with_name("workflow_goldens.npz"), **out)
print(f"wrote {len(out)} arrays")
