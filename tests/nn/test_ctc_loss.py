"""``F.ctc_loss`` / ``nn.CTCLoss``: losses and logit gradients against PyTorch's (golden_ctc.npz,
from make_golden_ctc.py: padded and concatenated targets, repeats, impossible alignments with
zero_infinity, blank last, empty targets, a long sequence), a brute-force sum over every
alignment, float64 gradcheck, every device, the unbatched form, and the argument errors."""
from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.testing import gradcheck

import ctc_cases

GOLDEN = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_ctc.npz"))


@pytest.mark.parametrize("name", sorted(ctc_cases.CASES))
def test_matches_pytorch(name):
    loss, grad = ctc_cases.run(minitorch, name)
    np.testing.assert_allclose(loss, GOLDEN[name + "/loss"], rtol=1e-10)
    np.testing.assert_allclose(grad, GOLDEN[name + "/grad"], rtol=1e-8, atol=1e-12)


def brute_force(lp: np.ndarray, target: list, blank: int) -> float:
    """-log of the summed probability of every frame labelling that collapses to target."""
    total = 0.0
    for path in itertools.product(range(lp.shape[1]), repeat=lp.shape[0]):
        merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
        if [c for c in merged if c != blank] == target:
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


@pytest.mark.parametrize("target, frames, blank", [([1, 2], 4, 0), ([1, 1], 4, 0), ([2], 3, 1), ([], 3, 0),
                                                     ([1, 1, 1], 4, 0)])
def test_matches_brute_force(device, target, frames, blank):
    rng = np.random.default_rng(len(target) + frames)
    x = rng.standard_normal((frames, 3))
    lp = x - np.log(np.exp(x).sum(1, keepdims=True))
    want = brute_force(lp, target, blank)
    got = F.ctc_loss(minitorch.tensor(lp, device=device), minitorch.tensor(target or [0], device=device)[None],
                     [frames], [len(target)], blank=blank, reduction="none")
    assert got.shape == () and got.device.type == device  # (T, C): the unbatched form
    if math.isinf(want):
        assert math.isinf(got.item())
    else:
        np.testing.assert_allclose(got.item(), want, rtol=1e-10)


def test_gradcheck_float64(device):
    rng = np.random.default_rng(3)
    x = minitorch.tensor(rng.standard_normal((5, 2, 4)), device=device, requires_grad=True)
    targets = minitorch.tensor([[1, 3, 3], [2, 0, 0]], device=device)
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, [5, 4], [3, 1]), (x,))
    # with respect to log_probs themselves: the true derivative (PyTorch's adds exp(log_probs))
    lp = minitorch.tensor(rng.standard_normal((4, 1, 3)), device=device, requires_grad=True)
    assert gradcheck(lambda lp: F.ctc_loss(lp, minitorch.tensor([[1, 2]], device=device), [4], [2]), (lp,))


def test_reductions_module_and_unbatched(device):
    rng = np.random.default_rng(4)
    lp = minitorch.tensor(rng.standard_normal((6, 2, 4)), device=device).log_softmax(2)
    targets, in_lens, tgt_lens = minitorch.tensor([[1, 2, 3], [3, 3, 0]], device=device), [6, 5], [3, 2]
    each = F.ctc_loss(lp, targets, in_lens, tgt_lens, reduction="none")
    np.testing.assert_allclose(F.ctc_loss(lp, targets, in_lens, tgt_lens, reduction="sum").item(),
                               each.sum().item(), rtol=1e-12)
    np.testing.assert_allclose(nn.CTCLoss()(lp, targets, in_lens, tgt_lens).item(),
                               (each.cpu().numpy() / np.array([3, 2])).mean(), rtol=1e-12)
    one = F.ctc_loss(lp[:, 0], targets[0], 6, 3, reduction="none")  # unbatched (T, C): a 0-dim loss
    assert one.shape == () and one.item() == pytest.approx(each[0].item(), rel=1e-12)
    int32 = F.ctc_loss(lp, targets.int(), minitorch.tensor(in_lens, device=device).int(), tuple(tgt_lens))
    assert int32.item() == pytest.approx(F.ctc_loss(lp, targets, in_lens, tgt_lens).item(), rel=1e-12)
    assert repr(nn.CTCLoss(blank=2, zero_infinity=True)) == "CTCLoss()"


def test_float32_and_impossible_is_inf(device):
    lp = minitorch.zeros(2, 1, 3, device=device).log_softmax(2)
    loss = F.ctc_loss(lp, minitorch.tensor([[1, 1]], device=device), [2], [2], reduction="none")
    assert loss.dtype == minitorch.float32 and math.isinf(loss.item())  # "1 1" needs 3 frames
    ok = F.ctc_loss(lp, minitorch.tensor([[1, 2]], device=device), [2], [2], reduction="none")
    assert ok.item() == pytest.approx(2 * math.log(3), rel=1e-6)


@pytest.mark.parametrize("call, error, match", [
    (lambda lp, t: F.ctc_loss(lp, t, [7, 2], [1, 1]), RuntimeError, "input_lengths to have value at most 4"),
    (lambda lp, t: F.ctc_loss(lp, t, [4], [1, 1]), RuntimeError, "input_lengths must be of size batch_size"),
    (lambda lp, t: F.ctc_loss(lp, t, [4, 4], [5, 1]), RuntimeError, "at least 5 at dimension 1"),
    (lambda lp, t: F.ctc_loss(lp, t, [4, 4], [1, 1], blank=3), RuntimeError, "blank must be in label range"),
    (lambda lp, t: F.ctc_loss(lp, t.float(), [4, 4], [1, 1]), RuntimeError, "targets must be int64 or int32"),
    (lambda lp, t: F.ctc_loss(lp[0], t, [4, 4], [1, 1]), RuntimeError, r"must be \(T, N, C\) or \(T, C\)|size"),
    (lambda lp, t: F.ctc_loss(lp, t, [4, 4], [1, 1], reduction="avg"), ValueError, "not a valid value"),
    (lambda lp, t: F.ctc_loss(lp, t.reshape(-1), [4, 4], [3, 2]), RuntimeError, "to have size 5 at dimension 0"),
    (lambda lp, t: F.ctc_loss(lp, t.reshape(-1), [4, 4], [1, 2]), RuntimeError, "to have size 3 at dimension 0"),
])
def test_errors(call, error, match):
    lp = minitorch.zeros(4, 2, 3).log_softmax(2)
    with pytest.raises(error, match=match):
        call(lp, minitorch.tensor([[1, 2], [2, 1]]))


@pytest.mark.parametrize("pad", [-1, 99, 0])
def test_padding_past_target_length_is_never_read(device, pad):
    """Padded (N, S) targets: values past each row's target_length may be anything (PyTorch
    never reads them)."""
    rng = np.random.default_rng(8)
    lp = minitorch.tensor(rng.standard_normal((5, 2, 4)), device=device).log_softmax(2)
    clean = F.ctc_loss(lp, minitorch.tensor([[1, 2, 3], [2, 0, 0]], device=device), [5, 5], [3, 1], reduction="none")
    padded = F.ctc_loss(lp, minitorch.tensor([[1, 2, 3], [2, pad, pad]], device=device), [5, 5], [3, 1],
                        reduction="none")
    np.testing.assert_allclose(padded.cpu().numpy(), clean.cpu().numpy(), rtol=1e-12)
