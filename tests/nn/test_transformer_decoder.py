"""``nn.TransformerDecoderLayer``, ``nn.TransformerDecoder`` and ``nn.Transformer``:
PyTorch's submodule names and state_dict keys, the causal mask, shapes (batch first,
unbatched), the decoder layer against its definition written with the layer's own
submodules, float64 gradcheck, and errors. (tests/zoo/programs/transformer_layers.py and
transformer.py compare the values and a training run with PyTorch's.)"""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

DEC_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
            "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
            "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight", "linear1.bias",
            "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
            "norm3.weight", "norm3.bias"]
ENC_KEYS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
            "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
            "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]


def to_np(t):
    return np.array(t.detach().cpu().numpy(), copy=True)


def arr(shape, seed):
    return minitorch.tensor(np.random.default_rng(seed).uniform(-1, 1, shape))


def test_structure_and_keys():
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6)
    assert [n for n, _ in layer.named_children()] == ["self_attn", "multihead_attn", "linear1", "dropout", "linear2",
                                                      "norm1", "norm2", "norm3", "dropout1", "dropout2", "dropout3"]
    assert list(layer.state_dict()) == DEC_KEYS and layer.activation is F.relu and layer.dropout.p == 0.1
    model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=6)
    assert list(model.state_dict()) == ([f"encoder.layers.0.{k}" for k in ENC_KEYS] + ["encoder.norm.weight",
                                        "encoder.norm.bias"] + [f"decoder.layers.{i}.{k}" for i in range(2)
                                                                for k in DEC_KEYS]
                                        + ["decoder.norm.weight", "decoder.norm.bias"])
    assert model.d_model == 4 and model.nhead == 2 and not model.batch_first
    d0, d1 = model.decoder.layers
    assert d0.linear1.weight is not d1.linear1.weight  # deep copies
    no_bias = nn.TransformerDecoderLayer(4, 2, 6, bias=False)
    assert not any(k.endswith("bias") for k in no_bias.state_dict())


def test_square_subsequent_mask(device):
    m = nn.Transformer.generate_square_subsequent_mask(3, device=device)
    want = np.array([[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]], np.float32)
    assert m.dtype == minitorch.float32 and m.device.type == device
    np.testing.assert_array_equal(to_np(m), want)
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=minitorch.float64).dtype == minitorch.float64


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_definition(device, norm_first):
    layer = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=norm_first, activation=nn.GELU())
    layer = layer.double().to(device)
    tgt, mem = arr((3, 2, 4), 1).to(device), arr((5, 2, 4), 2).to(device)
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=device, dtype=minitorch.float64)
    kpm = minitorch.tensor([[False, False, False, True, True], [False] * 5], device=device)

    def sa(x):
        return layer.self_attn(x, x, x, attn_mask=mask, need_weights=False)[0]

    def mha(x):
        return layer.multihead_attn(x, mem, mem, key_padding_mask=kpm, need_weights=False)[0]

    def ff(x):
        return layer.linear2(F.gelu(layer.linear1(x)))

    x = tgt
    if norm_first:
        x = x + sa(layer.norm1(x))
        x = x + mha(layer.norm2(x))
        want = x + ff(layer.norm3(x))
    else:
        x = layer.norm1(x + sa(x))
        x = layer.norm2(x + mha(x))
        want = layer.norm3(x + ff(x))
    got = layer(tgt, mem, tgt_mask=mask, memory_key_padding_mask=kpm, tgt_is_causal=True)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-12, atol=1e-12)


def test_batch_first_and_unbatched(device):
    model = nn.Transformer(4, 2, 1, 1, 6, dropout=0.0).double().to(device)
    bf = nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, batch_first=True).double().to(device)
    bf.load_state_dict(model.state_dict())
    src, tgt = arr((5, 2, 4), 3).to(device), arr((3, 2, 4), 4).to(device)
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=device, dtype=minitorch.float64)
    out = model(src, tgt, tgt_mask=mask)
    assert tuple(out.shape) == (3, 2, 4)
    out_bf = bf(src.transpose(0, 1), tgt.transpose(0, 1), tgt_mask=mask)
    np.testing.assert_allclose(to_np(out_bf.transpose(0, 1)), to_np(out), rtol=1e-12, atol=1e-12)
    single = model(src[:, 1], tgt[:, 1], tgt_mask=mask)
    np.testing.assert_allclose(to_np(single), to_np(out[:, 1]), rtol=1e-10, atol=1e-12)


def test_gradcheck_transformer(device):
    model = nn.Transformer(4, 2, 1, 1, 3, dropout=0.0, activation="gelu").double().to(device)
    src = arr((3, 1, 4), 5).to(device).requires_grad_()
    tgt = arr((2, 1, 4), 6).to(device).requires_grad_()
    mask = nn.Transformer.generate_square_subsequent_mask(2, device=device, dtype=minitorch.float64)
    g = arr((2, 1, 4), 7).to(device)
    assert gradcheck(lambda s, t: (model(s, t, tgt_mask=mask) * g).sum(), (src, tgt))


def test_errors():
    model = nn.Transformer(4, 2, 1, 1, 6)
    with pytest.raises(RuntimeError, match="batch number of src and tgt"):
        model(minitorch.zeros(3, 2, 4), minitorch.zeros(3, 1, 4))
    with pytest.raises(RuntimeError, match="feature number of src and tgt"):
        model(minitorch.zeros(3, 2, 4), minitorch.zeros(3, 2, 5))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerDecoderLayer(4, 2, activation="tanh")
    with pytest.raises(ValueError, match="num_layers"):
        nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2), -1)
