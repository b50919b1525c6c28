"""`torch.nn.utils.rnn`: packed sequences and padding helpers.

A `PackedSequence` holds the steps of a batch of sequences sorted by decreasing
length, time step after time step: `data` (sum of lengths, *), `batch_sizes`
(how many sequences are still running at each step, an int64 CPU tensor) and
the permutation that sorted the batch. Packing and unpacking are gathers with
index arrays computed on the host from the lengths, so they are differentiable.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

import jtorch

from ..._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Matches `torch.nn.utils.rnn.PackedSequence`; build it with `pack_padded_sequence`."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(
            cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices)
        )

    def pin_memory(self):
        return self

    def to(self, *args, **kwargs):
        """Moves/casts `data` as `Tensor.to`; the indices follow `data`'s device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(data.device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs.setdefault("device", "cpu")
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=jtorch.double)

    def float(self):
        return self.to(dtype=jtorch.float)

    def half(self):
        return self.to(dtype=jtorch.half)

    def long(self):
        return self.to(dtype=jtorch.long)

    def int(self):
        return self.to(dtype=jtorch.int)

    def short(self):
        return self.to(dtype=jtorch.short)

    def char(self):
        return self.to(dtype=jtorch.int8)

    def byte(self):
        return self.to(dtype=jtorch.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """Matches `torch.nn.utils.rnn.invert_permutation`."""
    if permutation is None:
        return None
    return jtorch.argsort(permutation)


def _host_lengths(lengths) -> np.ndarray:
    return np.asarray(lengths.tolist(), dtype=np.int64)


def _pack_padded(input: Tensor, lengths: Tensor, batch_first: bool):
    """`torch._VF._pack_padded_sequence`: (data, batch_sizes) of a sorted padded batch."""
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        dev = str(lengths.device)
        raise RuntimeError(
            f"'lengths' argument should be a 1D CPU int64 tensor, but got "
            f"{lengths.ndim}D {dev} Long tensor"
        )
    lens = _host_lengths(lengths)
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if len(lens) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(lens)} (batch_size={batch})"
        )
    if np.any(lens <= 0):
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an "
            "element in 'lengths' that is <= 0"
        )
    if np.any(np.diff(lens) > 0):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when "
            "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
            "pack_padded_sequence and/or pack_sequence to sidestep this "
            "requirement if you do not need ONNX exportability."
        )
    if lens[0] > steps:
        # PyTorch reads past the end of the input here; jtorch refuses.
        raise RuntimeError(
            f"pack_padded_sequence: a length ({lens[0]}) is larger than the "
            f"padded sequence length ({steps})"
        )
    batch_sizes = (lens[None, :] > np.arange(lens[0])[:, None]).sum(1)
    t, b = np.nonzero(np.arange(batch)[None, :] < batch_sizes[:, None])  # time-major order
    flat = b * steps + t if batch_first else t * batch + b
    rows = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = rows.index_select(0, jtorch.tensor(flat, device=input.device))
    return data, jtorch.tensor(batch_sizes.astype(np.int64))


def pack_padded_sequence(
    input: Tensor, lengths, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Matches `torch.nn.utils.rnn.pack_padded_sequence`."""
    if not isinstance(lengths, Tensor):
        lengths = jtorch.as_tensor(lengths, dtype=jtorch.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=jtorch.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = jtorch.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def padded_index(batch_sizes: np.ndarray, steps: int) -> np.ndarray:
    """(steps, batch) rows of each padded position in packed data; N marks padding."""
    n = int(batch_sizes.sum())
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
    b = np.arange(batch_sizes[0])[None, :]
    idx = np.full((steps, batch_sizes[0]), n, dtype=np.int64)
    idx[: len(batch_sizes)] = np.where(b < batch_sizes[:, None], offsets[:, None] + b, n)
    return idx


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
):
    """Matches `torch.nn.utils.rnn.pad_packed_sequence`: (padded, lengths)."""
    bs = _host_lengths(sequence.batch_sizes)
    max_seq_length = len(bs)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                f"Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    idx = padded_index(bs, max_seq_length)
    if batch_first:
        idx = idx.T
    rest = tuple(data.shape[1:])
    rows = jtorch.cat([data, data.new_full((1,) + rest, padding_value)])
    padded = rows.index_select(0, jtorch.tensor(idx.reshape(-1), device=data.device))
    padded = padded.reshape(idx.shape + rest)
    lengths = jtorch.tensor((bs[None, :] > np.arange(bs[0])[:, None]).sum(1).astype(np.int64))
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        return (padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()])
    return padded, lengths


def pad_sequence(
    sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Matches `torch.nn.utils.rnn.pad_sequence`."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg "
            f"of type: {type(sequences)}"
        )
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    trailing = tuple(sequences[0].shape[1:])
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        shape = tuple(s.shape[1:])
        if shape != trailing:
            if len(shape) > len(trailing):
                raise RuntimeError(
                    f"expand(torch.FloatTensor{{{list(s.shape)}}}, size="
                    f"{[s.shape[0], *trailing]}): the number of sizes provided "
                    f"({len(trailing) + 1}) must be greater or equal to the "
                    f"number of dimensions in the tensor ({s.ndim})"
                )
            full = (1,) * (len(trailing) - len(shape)) + shape
            for d, (a, b) in enumerate(zip(trailing, full)):
                if a != b and b != 1:
                    raise RuntimeError(
                        f"The size of tensor a ({a}) must match the size of "
                        f"tensor b ({b}) at non-singleton dimension {d + 1}"
                    )
            s = s.reshape((s.shape[0],) + full).expand((s.shape[0],) + trailing)
        s = s.to(sequences[0].dtype)
        extra = max_len - s.shape[0]
        if extra:
            pad = s.new_full((extra,) + trailing, padding_value)
            s = jtorch.cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return jtorch.stack(rows, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """Matches `torch.nn.utils.rnn.unpad_sequence`.

    PyTorch transposes `padded_sequences` in place when `batch_first` is False; jtorch
    leaves the argument as it is.
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _host_lengths(lengths)
    if len(lens) != padded_sequences.shape[0]:
        raise ValueError(
            "zip() argument 2 is shorter than argument 1"
            if len(lens) < padded_sequences.shape[0]
            else "zip() argument 2 is longer than argument 1"
        )
    return [padded_sequences[i, : int(n)] for i, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Matches `torch.nn.utils.rnn.pack_sequence`."""
    lengths = jtorch.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """Matches `torch.nn.utils.rnn.unpack_sequence`."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
