"""The CTC cases of test_ctc_loss.py, for either library (make_golden_ctc.py runs them with
PyTorch into golden_ctc.npz): logits from a fixed NumPy generator, the loss of their
log_softmax, and the gradient with respect to the logits."""
from __future__ import annotations

import numpy as np

# name: (T, N, C, targets, input_lengths, target_lengths, kwargs)
CASES = {
    "padded": (6, 3, 5, [[1, 2, 2], [3, 1, 0], [4, 0, 0]], [6, 5, 2], [3, 2, 1], {}),
    "concatenated": (7, 3, 4, [1, 1, 2, 3, 2, 1], [7, 7, 4], [3, 2, 1], {}),
    "repeats_need_blanks": (5, 2, 3, [[1, 1, 1], [2, 2, 0]], [5, 3], [3, 2], {"reduction": "none"}),
    "impossible_zero_infinity": (4, 2, 3, [[1, 1, 1], [2, 0, 0]], [4, 4], [3, 1],
                                 {"reduction": "none", "zero_infinity": True}),
    "sum_blank_last": (8, 4, 6, [[0, 1, 2, 3], [4, 4, 0, 0], [2, 0, 0, 0], [1, 2, 3, 4]], [8, 6, 3, 8], [4, 2, 1, 0],
                       {"blank": 5, "reduction": "sum"}),
    "empty_targets": (3, 2, 3, [[0], [0]], [3, 1], [0, 0], {"reduction": "none"}),
    "long": (40, 2, 7, [[1, 2, 3, 4, 5, 6, 1, 2], [6, 6, 5, 5, 0, 0, 0, 0]], [40, 31], [8, 4], {}),
}


def run(lib, name: str):
    """(loss, gradient of loss.sum() with respect to the logits) as NumPy arrays."""
    T, N, C, targets, in_lens, tgt_lens, kwargs = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    x = lib.tensor(rng.standard_normal((T, N, C)), requires_grad=True)
    loss = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(np.array(targets, dtype=np.int64)),
                                      lib.tensor(in_lens), lib.tensor(tgt_lens), **kwargs)
    loss.sum().backward()
    return np.array(loss.detach().numpy(), dtype=np.float64), np.array(x.grad.numpy(), dtype=np.float64)
