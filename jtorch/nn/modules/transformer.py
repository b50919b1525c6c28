"""`Transformer`, `TransformerEncoder(Layer)`, `TransformerDecoder(Layer)`."""

from __future__ import annotations

import copy
import warnings
from typing import Any, Callable

import jtorch

from ..._tensor import Tensor
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .multihead import MultiheadAttention, _canonical_mask, _none_or_dtype
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    return jtorch.triu(jtorch.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    size = src.size()
    if len(size) == 2:
        return size[0]
    return size[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None) -> bool:
    """True when `is_causal` says so, or (when it is None) `mask` is the causal mask."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if mask.size() == causal.size():
            make_causal = bool((mask == causal).all())
        else:
            make_causal = False
    return make_causal


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class Transformer(Module):
    """Matches `torch.nn.Transformer`."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                **kw,
            )
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                **kw,
            )
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != tgt.size(
            0 if self.batch_first else 1
        ):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float mask with -inf above the diagonal and 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


def _why_not_nested(layer) -> str:
    """Why TransformerEncoder cannot use PyTorch's nested-tensor path ('' when it can)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (
            f"{name}.self_attn.batch_first was not True(use batch_first for better "
            f"inference performance)"
        )
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """Matches `torch.nn.TransformerEncoder`.

    PyTorch runs inference with a key padding mask on nested tensors, which leaves zeros
    at the padded positions; jtorch computes padded and zeroes those positions instead.
    """

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: "TransformerEncoderLayer",
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def _nested(self, src: Tensor, padding_mask, mask) -> bool:
        """Whether PyTorch would take its nested-tensor path for this call."""
        first = self.layers[0]
        if not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3:
            return False
        if padding_mask is None or mask is not None:
            return False
        keep = ~padding_mask.isinf() if padding_mask.dtype.is_floating_point else ~padding_mask
        if getattr(self, "mask_check", True):
            # left aligned: every row keeps a prefix of its positions
            if not bool((keep == (keep.cumprod(-1) > 0)).all()):
                return False
        attn = first.self_attn
        args = (
            src,
            attn.in_proj_weight,
            attn.in_proj_bias,
            attn.out_proj.weight,
            attn.out_proj.bias,
            first.norm1.weight,
            first.norm1.bias,
            first.norm2.weight,
            first.norm2.bias,
            first.linear1.weight,
            first.linear1.bias,
            first.linear2.weight,
            first.linear2.bias,
        )
        return not (
            jtorch.is_grad_enabled() and any(x is not None and x.requires_grad for x in args)
        )

    def forward(self, src: Tensor, mask=None, src_key_padding_mask=None, is_causal=None) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", _none_or_dtype(mask), "mask", src.dtype
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        nested = self._nested(src, src_key_padding_mask, mask)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if nested:
            output = output.masked_fill(src_key_padding_mask.isinf().unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """Matches `torch.nn.TransformerDecoder`."""

    __constants__ = ["norm"]

    def __init__(
        self, decoder_layer: "TransformerDecoderLayer", num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Matches `torch.nn.TransformerEncoderLayer`: self-attention and a feed-forward block."""

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(
        self, src: Tensor, src_mask=None, src_key_padding_mask=None, is_causal: bool = False
    ) -> Tensor:
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask,
            "src_key_padding_mask",
            _none_or_dtype(src_mask),
            "src_mask",
            src.dtype,
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(
                self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal
            )
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(
                x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal)
            )
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Matches `torch.nn.TransformerDecoderLayer`: self-, cross-attention and feed-forward."""

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            self.activation = _get_activation_fn(activation)
        else:
            self.activation = activation

    def __setstate__(self, state):
        if "activation" not in state:
            state["activation"] = F.relu
        super().__setstate__(state)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
