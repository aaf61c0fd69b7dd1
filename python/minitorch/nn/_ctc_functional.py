"""``F.ctc_loss``: the Connectionist Temporal Classification loss (Graves et al., 2006), for
sequence models whose output frames outnumber the labels (speech, handwriting).

A target "cat" is aligned to T frames through paths of frame labels that collapse to it
once repeats are merged and blanks removed ("c-aa--t" -> "cat"). The loss is minus the log
of the total probability of all such paths, summed by dynamic programming over the
*extended* target: blanks around and between the labels, ``- c - a - t -`` (2S + 1 states).

The forward variable alpha[t, s] is the log-probability of all path prefixes of t + 1 frames
that end in state s. A state is reached from itself, from the state before, or, for a label
that differs from the label two states back, by skipping the blank between them:

    alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] if allowed) + lp[t, ext[s]]

and the loss is -logsumexp(alpha[T-1, 2S], alpha[T-1, 2S-1]) (ending on the last label or
the blank after it). Each frame is one step over the whole batch, written with tensor ops,
so autograd gives the gradient; a large negative number stands for log 0, which keeps the
gradients of unreachable states at 0 instead of NaN.

Gradient: this is the true derivative with respect to ``log_probs``. PyTorch's kernel
returns that derivative plus ``exp(log_probs)``, a term that vanishes through the
``log_softmax`` that produces ``log_probs``: the gradients with respect to the logits agree.
"""
from __future__ import annotations

from .. import _C
from ..ops.join import cat, stack

_LOG_ZERO = -1e30  # log 0, finite (float32 holds it): log-sum-exps of unreachable states stay finite
_IMPOSSIBLE = 1e29  # a loss above this had no alignment: +inf, as PyTorch


def _lengths(value, n: int, name: str) -> list:
    """input_lengths / target_lengths (tensor, list, tuple or int) as n ints."""
    if isinstance(value, _C.Tensor):
        if value.dtype.is_floating_point:
            raise RuntimeError(f"ctc_loss: {name} must be integral, got {value.dtype}")
        value = value.reshape(-1).tolist()
    elif isinstance(value, int):
        value = [value]
    else:
        value = [int(v) for v in value]
    if len(value) != n:
        raise RuntimeError(f"ctc_loss: {name} must be of size batch_size ({n}), got {len(value)}")
    return value


def _int64(values: list, device):
    from .. import tensor
    return tensor(values, dtype=_C.dtype.int64, device=device)


def _padded_targets(targets, target_lengths: list, n: int):
    """targets as (N, S_max) int64: padded rows, or a 1-D concatenation split by target_lengths."""
    if targets.dtype.is_floating_point or targets.dtype == _C.dtype.bool:
        raise RuntimeError(f"ctc_loss: targets must be int64 or int32, got {targets.dtype}")
    targets = targets.long()
    longest = max(target_lengths, default=0)
    if targets.dim() == 2:
        if targets.shape[0] != n:
            raise RuntimeError(f"ctc_loss: targets have {targets.shape[0]} rows for a batch of {n}")
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss)")
        return targets[:, :longest]
    if targets.dim() != 1:
        raise RuntimeError(f"ctc_loss: targets must be 1-D (concatenated) or 2-D (N, S), got shape "
                           f"{tuple(targets.shape)}")
    if sum(target_lengths) != targets.shape[0]:
        raise RuntimeError(f"Expected tensor to have size {sum(target_lengths)} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets' (while checking arguments for ctc_loss)")
    padded = _C._full((n, longest), 0, _C.dtype.int64, targets.device)
    start = 0
    for i, length in enumerate(target_lengths):
        if length:
            padded[i, :length] = targets[start:start + length]
        start += length
    return padded


def _shift(alpha, k: int, neg):
    """alpha moved k states to the right along dim 1, log 0 coming in."""
    n, length = alpha.shape
    if k >= length:
        return neg.expand(n, length)
    return cat([neg.expand(n, k), alpha[:, :length - k]], 1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False):
    """The CTC loss of ``log_probs`` (T, N, C) (log-softmax outputs: T frames, N sequences,
    C classes including ``blank``; unbatched (T, C)) against ``targets``: (N, S) padded
    label rows or a 1-D concatenation of all targets, with each sequence's
    ``input_lengths`` (frames used, at most T) and ``target_lengths``.

    ``reduction='mean'`` divides each loss by its target length, then averages over the
    batch; ``'sum'`` adds them; ``'none'`` returns the (N,) losses. A target no alignment
    fits (more labels, with their necessary blanks, than frames) has an infinite loss;
    ``zero_infinity=True`` makes it 0, with a 0 gradient.

    >>> loss = F.ctc_loss(logits.log_softmax(2), targets, input_lengths, target_lengths)
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not isinstance(log_probs, _C.Tensor) or not log_probs.dtype.is_floating_point:
        raise TypeError("ctc_loss: log_probs must be a floating-point tensor")
    batched = log_probs.dim() == 3
    if log_probs.dim() == 2:  # unbatched (T, C), target (S,)
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    elif not batched:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError(f"blank must be in label range: blank is {blank}, classes are {C}")
    in_lens = _lengths(input_lengths, N, "input_lengths")
    tgt_lens = _lengths(target_lengths, N, "target_lengths")
    for v in in_lens:
        if not 0 <= v <= T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {v} "
                               "(while checking arguments for ctc_loss)")
    if any(v < 0 for v in tgt_lens):
        raise RuntimeError(f"ctc_loss: target_lengths must be non-negative, got {tgt_lens}")
    device, dtype = log_probs.device, log_probs.dtype
    labels = _padded_targets(targets.to(device), tgt_lens, N)
    L = 2 * labels.shape[1] + 1
    ext = _C._full((N, L), blank, _C.dtype.int64, device)  # blank, l1, blank, l2, ..., blank
    if L > 1:
        # past its target_length a row's padding is never read (any value, -1 too, as PyTorch)
        real = _C._arange(0, labels.shape[1], 1, _C.dtype.int64, device).unsqueeze(0) < _int64(tgt_lens, device)[:, None]
        ext[:, 1::2] = _C.where(real, labels, _C._full((), blank, _C.dtype.int64, device))
    # The skip s-2 -> s: onto a label that differs from the label two states back.
    skip = ext != blank
    if L > 2:
        repeat = _C._full((N, L), True, _C.dtype.bool, device)
        repeat[:, 2:] = ext[:, 2:] == ext[:, :-2]
        skip = skip & ~repeat
    neg = _C._full((), _LOG_ZERO, dtype, device)
    tgt = _int64(tgt_lens, device)
    frames = _int64(in_lens, device)
    huge = _C._full((), -_LOG_ZERO, dtype, device)
    if T:
        lp = log_probs.gather(2, ext.unsqueeze(0).expand(T, N, L))  # each state's log-probability, (T, N, L)
        pos = _C._arange(0, L, 1, _C.dtype.int64, device).unsqueeze(0)
        alpha = _C.where(pos < 1 + (tgt > 0).long().unsqueeze(1), lp[0], neg)  # state 0, and 1 with a label
        alphas = [alpha]
        for t in range(1, T):
            two_back = _C.where(skip, _shift(alpha, 2, neg), neg)
            alpha = stack([alpha, _shift(alpha, 1, neg), two_back]).logsumexp(0) + lp[t]
            alphas.append(alpha)
        # Each sequence's alpha at its last frame, then its two end states.
        last = (frames - 1).clamp(min=0).reshape(1, N, 1).expand(1, N, L)
        rows = stack(alphas).gather(0, last).squeeze(0)
        end_blank = rows.gather(1, (2 * tgt).unsqueeze(1)).squeeze(1)
        end_label = _C.where(tgt > 0, rows.gather(1, (2 * tgt - 1).clamp(min=0).unsqueeze(1)).squeeze(1), neg)
        losses = -stack([end_blank, end_label]).logsumexp(0)
    else:
        losses = huge.expand(N)
    # 0 frames: an empty target has probability 1, any other none
    losses = _C.where(frames == 0, _C.where(tgt == 0, neg * 0, huge), losses)
    bad = losses > _IMPOSSIBLE
    losses = _C.where(bad, _C._full((), 0.0 if zero_infinity else float("inf"), dtype, device), losses)
    if reduction == "none":
        return losses if batched else losses.squeeze(0)
    if reduction == "sum":
        return losses.sum()
    return (losses / tgt.clamp(min=1).to(dtype)).mean()
