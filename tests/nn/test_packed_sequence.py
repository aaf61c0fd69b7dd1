"""PackedSequence: pack_padded_sequence / pad_packed_sequence / pack_sequence / unpad_sequence /
unpack_sequence against NumPy, and RNN / GRU / LSTM over packed batches against PyTorch
(golden_packed.npz from make_golden_packed.py: outputs, final states taken at each
sequence's own last step, gradients for the input and every weight), on every device."""
from __future__ import annotations

import os

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                    pad_sequence, unpack_sequence, unpad_sequence)

import packed_cases

GOLDEN = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_packed.npz"))


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


@pytest.mark.parametrize("case", packed_cases.CASES, ids=[packed_cases.name(c) for c in packed_cases.CASES])
def test_recurrent_layers_match_pytorch(case):
    got = packed_cases.run(minitorch, case)
    for key, value in got.items():
        want = GOLDEN[f"{packed_cases.name(case)}/{key}"]
        np.testing.assert_allclose(value, want, rtol=1e-9, atol=1e-12, err_msg=key)


def test_pack_and_pad_round_trip(device):
    x = minitorch.arange(24.0, device=device).reshape(3, 4, 2)  # (B, T, 2)
    packed = pack_padded_sequence(x, [2, 4, 1], batch_first=True, enforce_sorted=False)
    assert isinstance(packed, PackedSequence)
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1] and packed.batch_sizes.device.type == "cpu"
    assert packed.sorted_indices.tolist() == [1, 0, 2] and packed.unsorted_indices.tolist() == [1, 0, 2]
    assert packed.data.device.type == device and packed.is_cuda == (device == "cuda")
    # time-major rows of the sorted batch: step 0 of sequences 1, 0, 2, step 1 of 1, 0, ...
    np.testing.assert_array_equal(to_np(packed.data)[:, 0], [8, 0, 16, 10, 2, 12, 14])
    padded, lengths = pad_packed_sequence(packed, batch_first=True)
    assert lengths.tolist() == [2, 4, 1]
    want = to_np(x).copy()
    want[0, 2:] = 0
    want[2, 1:] = 0
    np.testing.assert_array_equal(to_np(padded), want)
    longer, _ = pad_packed_sequence(packed, padding_value=-1.0, total_length=6)  # time-major
    assert tuple(longer.shape) == (6, 3, 2) and to_np(longer)[5, 1, 0] == -1
    with pytest.raises(ValueError, match="at least the length of the longest sequence"):
        pad_packed_sequence(packed, total_length=3)


def test_pack_gradient_and_sorted_input(device):
    x = minitorch.randn(5, 2, 3, dtype=minitorch.float64, device=device, requires_grad=True)  # (T, B, *)
    packed = pack_padded_sequence(x, minitorch.tensor([5, 2]))
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    packed.data.sum().backward()
    mask = np.zeros((5, 2, 3))
    mask[:5, 0] = 1
    mask[:2, 1] = 1
    np.testing.assert_array_equal(to_np(x.grad), mask)  # padding gets no gradient


def test_pack_sequence_unpack_and_unpad(device):
    seqs = [minitorch.tensor([1.0, 2.0], device=device), minitorch.tensor([3.0, 4.0, 5.0], device=device),
            minitorch.tensor([6.0], device=device)]
    packed = pack_sequence(seqs, enforce_sorted=False)
    assert [to_np(s).tolist() for s in unpack_sequence(packed)] == [[1, 2], [3, 4, 5], [6]]
    padded = pad_sequence(seqs, batch_first=True)
    assert [to_np(s).tolist() for s in unpad_sequence(padded, [2, 3, 1], batch_first=True)] == [[1, 2], [3, 4, 5],
                                                                                              [6]]
    moved = packed.to(minitorch.float64)
    assert moved.data.dtype == minitorch.float64 and moved.batch_sizes is packed.batch_sizes
    assert packed.double().data.dtype == minitorch.float64 and packed.float().data.dtype == minitorch.float32


def test_packed_rnn_on_every_device_matches_padded_runs(device):
    """Each sequence of a packed batch gives what it gives alone (unpadded), both directions."""
    minitorch.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True).to(device)
    seqs = [minitorch.randn(n, 3, device=device) for n in (2, 5, 3)]
    out, (h, c) = lstm(pack_sequence(seqs, enforce_sorted=False))
    padded, lengths = pad_packed_sequence(out)
    assert lengths.tolist() == [2, 5, 3] and tuple(h.shape) == (4, 3, 4)
    for b, s in enumerate(seqs):
        alone, (hb, cb) = lstm(s.unsqueeze(1))
        np.testing.assert_allclose(to_np(padded[:len(s), b]), to_np(alone[:, 0]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(to_np(padded[len(s):, b]), 0)
        np.testing.assert_allclose(to_np(h[:, b]), to_np(hb[:, 0]), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(to_np(c[:, b]), to_np(cb[:, 0]), rtol=1e-5, atol=1e-6)


def test_errors():
    x = minitorch.zeros(4, 3, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(x, [1, 3, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        pack_padded_sequence(x, [3, 0, 0])
    with pytest.raises(ValueError, match="equal to batch_size"):
        pack_padded_sequence(x, [3, 2])
    with pytest.raises(RuntimeError, match="exceeds"):
        pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(TypeError, match="expected a PackedSequence"):
        pad_packed_sequence(x)
    gru = nn.GRU(2, 3)
    with pytest.raises(Exception, match="Expected hidden size"):
        gru(pack_padded_sequence(x, [4, 2, 1]), minitorch.zeros(1, 2, 3))


def test_packed_sequence_derives_unsorted_indices():
    p = pack_sequence([minitorch.ones(1, 1), 2 * minitorch.ones(3, 1)], enforce_sorted=False)
    q = PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
    assert q.unsorted_indices.tolist() == p.unsorted_indices.tolist()
    np.testing.assert_array_equal(to_np(pad_packed_sequence(q)[0]), to_np(pad_packed_sequence(p)[0]))
    assert PackedSequence(p.data, p.batch_sizes).sorted_indices is None
