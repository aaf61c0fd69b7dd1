"""The PackedSequence cases of test_packed_sequence.py, for either library (make_golden_packed.py
runs them with PyTorch into golden_packed.npz): 2-layer RNN / GRU / LSTM, one or two
directions, on a batch of unsorted lengths packed with enforce_sorted=False; the padded
output, the final states, and the gradients of a loss of both for the input and every weight."""
from __future__ import annotations

import numpy as np

B, T, I, H = 4, 6, 3, 5
LENGTHS = [3, 6, 1, 4]
CASES = [(mode, bi, hx) for mode in ("LSTM", "GRU", "RNN") for bi in (False, True) for hx in (False, True)]


def name(case) -> str:
    mode, bi, hx = case
    return f"{mode}_{'bi' if bi else 'uni'}_{'hx' if hx else 'nohx'}"


def run(lib, case) -> dict:
    mode, bi, with_hx = case
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((B, T, I)), requires_grad=True)
    m = getattr(lib.nn, mode)(I, H, num_layers=2, batch_first=True, bidirectional=bi).double()
    weights = np.random.default_rng(1)
    with lib.no_grad():
        for _, p in m.named_parameters():
            p.copy_(lib.tensor(weights.uniform(-0.5, 0.5, tuple(p.shape))))
    hx = None
    if with_hx:
        shape = (2 * (2 if bi else 1), B, H)
        h0 = lib.tensor(weights.standard_normal(shape))
        hx = (h0, lib.tensor(weights.standard_normal(shape))) if mode == "LSTM" else h0
    packed = lib.nn.utils.rnn.pack_padded_sequence(x, LENGTHS, batch_first=True, enforce_sorted=False)
    out, h = m(packed, hx)
    padded, lengths = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    finals = h if isinstance(h, tuple) else (h,)
    ((padded ** 2).sum() + sum((f ** 3).sum() for f in finals)).backward()
    result = {"out": padded.detach().numpy(), "lengths": lengths.numpy(), "x_grad": x.grad.numpy()}
    for k, f in enumerate(finals):
        result[f"final{k}"] = f.detach().numpy()
    for n, p in m.named_parameters():
        result[f"grad_{n}"] = p.grad.numpy()
    return {key: np.array(v, dtype=np.float64) for key, v in result.items()}
