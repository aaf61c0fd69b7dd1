"""``minitorch.nn.utils.rnn``: batching sequences of different lengths."""
from __future__ import annotations

from ... import _C


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"):
    """Pads a list of (L_i, *) tensors with ``padding_value`` to the longest length L and
    stacks them: (L, B, *), or (B, L, *) with ``batch_first``. ``padding_side="left"``
    puts the padding before each sequence instead of after it.

    >>> pad_sequence([minitorch.tensor([1, 2, 3]), minitorch.tensor([4])], batch_first=True)
    tensor([[1, 2, 3],
            [4, 0, 0]])
    """
    from ... import cat, stack  # (the package's join ops; imported here, when the package is complete)

    if isinstance(sequences, _C.Tensor):
        sequences = list(sequences.unbind(0)) if sequences.dim() else [sequences]
    seqs = list(sequences)
    if not seqs:
        raise ValueError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    for i, s in enumerate(seqs):
        if not isinstance(s, _C.Tensor):
            raise TypeError(f"pad_sequence: expected a list of Tensors, got {type(s).__name__} at index {i}")
        if s.dim() == 0:
            raise ValueError(f"pad_sequence: sequence {i} is a 0-d tensor; each sequence needs a length dim")
        if tuple(s.shape[1:]) != tuple(seqs[0].shape[1:]):
            raise ValueError(f"pad_sequence: all sequences must have the same trailing dims, got "
                             f"{tuple(seqs[0].shape)} at index 0 and {tuple(s.shape)} at index {i}")
    longest = max(s.shape[0] for s in seqs)
    trailing = tuple(seqs[0].shape[1:])
    padded = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            fill = _C._full((missing,) + trailing, padding_value, s.dtype, s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)
