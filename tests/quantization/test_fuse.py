"""Module fusion (minitorch.ao.quantization.fuse_modules): batch-norm folding numerics, the
fused module types, fuse_modules_qat, errors."""
import numpy as np
import pytest

import minitorch as mt
import minitorch.nn as nn
from minitorch.ao import quantization as tq
from minitorch.ao.nn import intrinsic as nni


def _randomize_bn(bn):
    with mt.no_grad():
        bn.weight.copy_(1 + 0.3 * mt.randn(bn.num_features))
        bn.bias.copy_(0.2 * mt.randn(bn.num_features))
        bn.running_mean.copy_(0.5 * mt.randn(bn.num_features))
        bn.running_var.copy_(0.5 + mt.rand(bn.num_features))
    return bn


class Block(nn.Module):
    def __init__(self, conv_bias=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=conv_bias)
        self.bn = _randomize_bn(nn.BatchNorm2d(4))
        self.relu = nn.ReLU()
        self.seq = nn.Sequential(nn.Linear(64, 8), _randomize_bn(nn.BatchNorm1d(8)), nn.Linear(8, 6), nn.ReLU())

    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        x = nn.functional.adaptive_avg_pool2d(x, 4).flatten(1)
        return self.seq(x)


@pytest.mark.parametrize("conv_bias", [True, False])
def test_conv_bn_folding_matches_numpy_and_the_float_model(conv_bias):
    mt.manual_seed(0)
    m = Block(conv_bias).eval()
    x = mt.randn(2, 3, 8, 8)
    ref = m(x)
    fused = tq.fuse_modules(m, [["conv", "bn", "relu"], ["seq.0", "seq.1"], ["seq.2", "seq.3"]])
    assert type(fused.conv) is nni.ConvReLU2d and type(fused.bn) is nn.Identity and type(fused.relu) is nn.Identity
    assert type(fused.seq[0]) is nn.Linear and type(fused.seq[1]) is nn.Identity
    assert type(fused.seq[2]) is nni.LinearReLU
    assert type(m.conv) is nn.Conv2d  # not in place: the original is untouched
    np.testing.assert_allclose(fused(x).detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    # the folded weights against NumPy in float64
    w = m.conv.weight.detach().numpy().astype(np.float64)
    b = m.conv.bias.detach().numpy().astype(np.float64) if conv_bias else 0.0
    g, beta = m.bn.weight.detach().numpy(), m.bn.bias.detach().numpy()
    mean, var = m.bn.running_mean.numpy(), m.bn.running_var.numpy()
    s = g / np.sqrt(var + m.bn.eps)
    np.testing.assert_allclose(fused.conv[0].weight.detach().numpy(), w * s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(fused.conv[0].bias.detach().numpy(), (b - mean) * s + beta, rtol=1e-5, atol=1e-6)


def test_fuse_matches_pytorch_folding_golden():
    from pathlib import Path
    G = np.load(Path(__file__).with_name("workflow_goldens.npz"))
    conv, bn = nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4)
    conv.load_state_dict({"weight": mt.tensor(G["cnn_conv.weight"]), "bias": mt.tensor(G["cnn_conv.bias"])})
    bn.load_state_dict({k: mt.tensor(G["cnn_bn." + k]) for k in ("weight", "bias", "running_mean", "running_var")},
                       strict=False)
    fused = tq.fuse_conv_bn_eval(conv.eval(), bn.eval())
    np.testing.assert_allclose(fused.weight.detach().numpy(), G["cnn_fused_conv_w"], rtol=1e-6)
    np.testing.assert_allclose(fused.bias.detach().numpy(), G["cnn_fused_conv_b"], rtol=1e-6, atol=1e-7)


def test_fuse_in_place_single_group_and_reprs():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()).eval()
    out = tq.fuse_modules(m, ["0", "1"], inplace=True)
    assert out is m and type(m[0]) is nni.ConvReLU2d
    assert repr(m[0]) == ("ConvReLU2d(\n  (0): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))\n  (1): ReLU()\n)")


def test_fuse_modules_qat_keeps_batch_norm():
    m = Block().train()
    fused = tq.fuse_modules_qat(m, [["conv", "bn", "relu"], ["seq.0", "seq.1"]])
    assert type(fused.conv) is nni.ConvBnReLU2d and type(fused.seq[0]) is nni.LinearBn1d
    assert fused.conv[1] is not m.bn and type(fused.conv[1]) is nn.BatchNorm2d


def test_fusion_errors():
    m = Block().eval()
    with pytest.raises(NotImplementedError, match=r"Cannot fuse modules: \('ReLU', 'Conv2d'\)"):
        tq.fuse_modules(m, [["relu", "conv"]])
    with pytest.raises(AttributeError, match="no submodule 'nope'"):
        tq.fuse_modules(m, [["conv", "nope"]])
    with pytest.raises(RuntimeError, match="Fusion only for eval"):
        tq.fuse_modules(Block().train(), [["conv", "bn"]])
    mixed = Block().eval()
    mixed.bn.train()
    with pytest.raises(RuntimeError, match="same mode"):
        tq.fuse_modules(mixed, [["conv", "bn"]])
    with pytest.raises(TypeError, match="Incorrect types"):
        nni.ConvReLU2d(nn.Linear(2, 2), nn.ReLU())
