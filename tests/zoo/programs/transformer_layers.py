"""Not a training program: the transformer layers' outputs, element by element, over
their options: TransformerDecoderLayer post-norm and pre-norm (``norm_first``), batch
first, a callable activation, float and bool masks (tgt_mask, memory_mask, both padding
masks), unbatched input, a TransformerDecoder with a final norm, and the gradient of
nn.Transformer's parameters; ``run`` returns every value, flattened."""
import numpy as np

from .common import data, init_weights


def run(torch, device="cpu", steps=3):
    nn = torch.nn
    F = torch.nn.functional
    out = []
    T, S, N, E = 4, 5, 2, 8

    def t(a):
        return torch.tensor(a, device=device)

    tgt, mem = data((T, N, E), 30), data((S, N, E), 31)
    causal = nn.Transformer.generate_square_subsequent_mask(T).to(device)
    mem_mask = t(data((T, S), 32))
    tgt_kpm = t(np.array([[False, False, False, True], [False] * 4]))
    mem_kpm = t(np.array([[False, False, True, True, False], [False] * 5]))
    for norm_first in (False, True):
        for batch_first in (False, True):
            for activation in ("relu", F.gelu):
                layer = nn.TransformerDecoderLayer(E, 2, dim_feedforward=12, dropout=0.0, activation=activation,
                                                   batch_first=batch_first, norm_first=norm_first)
                layer = init_weights(torch, layer, seed=3).to(device)
                x, m = (tgt.transpose(1, 0, 2), mem.transpose(1, 0, 2)) if batch_first else (tgt, mem)
                y = layer(t(x.copy()), t(m.copy()), tgt_mask=causal, memory_mask=mem_mask,
                          tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=mem_kpm)
                out.append(y)
    layer = init_weights(torch, nn.TransformerDecoderLayer(E, 4, dim_feedforward=6, dropout=0.0), seed=4).to(device)
    out.append(layer(t(tgt[:, 0].copy()), t(mem[:, 0].copy()), tgt_mask=causal < 0))  # unbatched, bool mask
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, 2, 12, 0.0), 2, norm=nn.LayerNorm(E))
    dec = init_weights(torch, dec, seed=5).to(device)
    out.append(dec(t(tgt), t(mem), tgt_mask=causal))  # (tgt_is_causal: PyTorch >= 2.0)
    model = nn.Transformer(E, 2, 1, 2, 12, 0.0, batch_first=True, norm_first=True)
    model = init_weights(torch, model, seed=6).to(device)
    y = model(t(mem.transpose(1, 0, 2).copy()), t(tgt.transpose(1, 0, 2).copy()), tgt_mask=causal,
              src_key_padding_mask=mem_kpm)
    (y * y).sum().backward()
    out.append(y)
    out += [p.grad for p in model.parameters()]
    return [float(v) for o in out for v in o.detach().cpu().numpy().reshape(-1)]
