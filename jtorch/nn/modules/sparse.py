"""`Embedding` and `EmbeddingBag`: lookup tables."""

from __future__ import annotations

from ... import empty
from ...autograd import grad_mode
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_index(padding_idx, num_embeddings: int, what: str):
    """`padding_idx` made non-negative, checked as PyTorch checks it (with AssertionError)."""
    if padding_idx is None:
        return None
    if padding_idx > 0 and padding_idx >= num_embeddings:
        raise AssertionError(f"{what} must be within num_embeddings")
    if padding_idx < 0:
        if padding_idx < -num_embeddings:
            raise AssertionError(f"{what} must be within num_embeddings")
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _weight_param(module, weight, num_embeddings, embedding_dim, device, dtype, requires_grad):
    if weight is None:
        module.weight = Parameter(
            empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
            requires_grad=requires_grad,
        )
        module.reset_parameters()
    else:
        if list(weight.shape) != [num_embeddings, embedding_dim]:
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        module.weight = Parameter(weight, requires_grad=requires_grad)


class Embedding(Module):
    """Matches `torch.nn.Embedding`.

    `sparse=True` is accepted; the gradient is still a dense tensor.
    """

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "padding_idx",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "sparse",
    ]

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        _weight_param(self, _weight, num_embeddings, embedding_dim, device, dtype, not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        """Matches `torch.nn.Embedding.from_pretrained`: wraps a 2-D weight (frozen by default)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


class EmbeddingBag(Module):
    """Matches `torch.nn.EmbeddingBag`: sums, means or maxes of bags of embeddings."""

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "mode",
        "sparse",
        "include_last_offset",
        "padding_idx",
    ]

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight=None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings, "padding_idx")
        _weight_param(self, _weight, num_embeddings, embedding_dim, device, dtype, True)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        # PyTorch formats every field with repr() here: mode='mean'.
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        max_norm=None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx=None,
    ) -> EmbeddingBag:
        """Matches `torch.nn.EmbeddingBag.from_pretrained`."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
