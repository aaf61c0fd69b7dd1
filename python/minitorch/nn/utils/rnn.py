"""``minitorch.nn.utils.rnn``: batching sequences of different lengths, padded
(``pad_sequence``) or packed (``PackedSequence``, what ``pack_padded_sequence`` makes and
the recurrent layers take: only the real time steps, no padding to compute on).

A packed batch keeps its sequences sorted longest first and stores them time step by time
step: at step t, the first ``batch_sizes[t]`` sequences (those longer than t) each give one
row of ``data``. ``sorted_indices[i]`` is the original position of sorted sequence i and
``unsorted_indices`` the inverse permutation (None when the input was already sorted).
"""
from __future__ import annotations

from typing import NamedTuple

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


def _int64(values, device=None):
    from ... import tensor
    return tensor(list(values), dtype=_C.dtype.int64, device=device)


class _PackedFields(NamedTuple):
    data: object
    batch_sizes: object
    sorted_indices: object = None
    unsorted_indices: object = None


class PackedSequence(_PackedFields):
    """Sequences of different lengths without their padding (see the module docstring):
    ``data`` (sum of lengths, *), ``batch_sizes`` (int64 on the CPU, one per time step),
    ``sorted_indices`` / ``unsorted_indices`` (int64 on data's device, or None; given
    sorted_indices alone, unsorted_indices is its inverse, as PyTorch's)."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            from ... import argsort
            unsorted_indices = argsort(sorted_indices)  # the inverse permutation
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """``data.to(...)``; the index tensors follow data's device, batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))  # noqa: E731
        return PackedSequence(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, *args, **kwargs) -> "PackedSequence":
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self) -> "PackedSequence":
        return self.to("cpu")

    def double(self) -> "PackedSequence":
        return self.to(_C.dtype.float64)

    def float(self) -> "PackedSequence":
        return self.to(_C.dtype.float32)

    def half(self) -> "PackedSequence":
        return self.to(_C.dtype.float16)

    def bfloat16(self) -> "PackedSequence":
        return self.to(_C.dtype.bfloat16)

    def long(self) -> "PackedSequence":
        return self.to(_C.dtype.int64)

    def int(self) -> "PackedSequence":
        return self.to(_C.dtype.int32)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _lengths_list(lengths) -> list:
    if isinstance(lengths, _C.Tensor):
        if lengths.dim() != 1:
            raise ValueError(f"lengths must be a 1-D tensor or a list, got shape {tuple(lengths.shape)}")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _packed_rows(batch_sizes: list, batch: int, device):
    """Where each row of packed data sits in a (T * batch) time-major flattening of the padded
    batch (sorted order): t * batch + b for b < batch_sizes[t]."""
    return _int64((t * batch + b for t, n in enumerate(batch_sizes) for b in range(n)), device)


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded batch (T, B, *) (``batch_first``: (B, T, *)) whose sequence b has
    ``lengths[b]`` real steps. With ``enforce_sorted`` the lengths must already decrease;
    otherwise the batch is sorted here and the order kept in the result to undo it later.

    >>> packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    >>> output, h_n = lstm(packed)
    """
    lens = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if not isinstance(input, _C.Tensor) or input.dim() < 2:
        raise ValueError("pack_padded_sequence: input must be a Tensor of at least 2 dims (T, B, *)")
    if len(lens) != input.shape[batch_dim]:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size="
                         f"{input.shape[batch_dim]})")
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    steps = input.shape[1 - batch_dim]
    if max(lens, default=0) > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({max(lens)}) exceeds the sequences' padded length "
                           f"({steps})")
    sorted_indices = unsorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])  # longest first, ties kept in order
        inverse = [0] * len(order)
        for pos, i in enumerate(order):
            inverse[i] = pos
        sorted_indices, unsorted_indices = _int64(order, input.device), _int64(inverse, input.device)
        input = input.index_select(batch_dim, sorted_indices)
        lens = [lens[i] for i in order]
    if batch_first:
        input = input.transpose(0, 1)
    longest = lens[0] if lens else 0
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(longest)]
    batch, trailing = input.shape[1], tuple(input.shape[2:])
    flat = input[:longest].reshape((longest * batch,) + trailing)
    data = flat.index_select(0, _packed_rows(batch_sizes, batch, input.device))
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``, padded (T, B, *)
    (``batch_first``: (B, T, *)) in the original batch order, T the longest length (or
    ``total_length``), lengths an int64 CPU tensor."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got {type(sequence).__name__}")
    data, sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    steps, batch = len(sizes), (sizes[0] if sizes else 0)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    trailing = tuple(data.shape[1:])
    flat = _C._full((steps * batch,) + trailing, padding_value, data.dtype, data.device)
    padded = flat.index_copy(0, _packed_rows(sizes, batch, data.device), data).reshape((steps, batch) + trailing)
    lengths = [sum(1 for n in sizes if n > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _int64(lengths)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of (L_i, *) tensors (``enforce_sorted``: longest first)."""
    seqs = list(sequences)
    return pack_padded_sequence(pad_sequence(seqs), [s.shape[0] for s in seqs], enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    """The list of (L_i, *) sequences in a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of (L_i, *) sequences in a packed batch, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
