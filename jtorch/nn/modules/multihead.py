"""`MultiheadAttention` (and the `NonDynamicallyQuantizableLinear` it projects out with)."""

from __future__ import annotations

import warnings

import jtorch

from ... import empty
from ..._tensor import Tensor
from .. import functional as F
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..parameter import Parameter
from .linear import Linear, NonDynamicallyQuantizableLinear  # noqa: F401  (PyTorch: linear)
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """PyTorch's `F._canonical_mask`: a bool mask becomes an additive float mask (-inf)."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype != jtorch.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
            f"same type for both instead.",
            stacklevel=3,
        )
    if not is_float:
        return mask.new_zeros(mask.shape, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


class MultiheadAttention(Module):
    """Matches `torch.nn.MultiheadAttention` (the general, non-fast path)."""

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got "
                f"embed_dim={embed_dim} and num_heads={num_heads} instead"
            )
        kw = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        if "_qkv_same_embed_dim" not in state:
            state["_qkv_same_embed_dim"] = True
        super().__setstate__(state)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(
            key_padding_mask,
            "key_padding_mask",
            _none_or_dtype(attn_mask),
            "attn_mask",
            query.dtype,
        )
        attn_mask = _canonical_mask(
            attn_mask, "attn_mask", None, "", query.dtype, check_other=False
        )
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = dict(
                use_separate_proj_weight=True,
                q_proj_weight=self.q_proj_weight,
                k_proj_weight=self.k_proj_weight,
                v_proj_weight=self.v_proj_weight,
            )
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            **separate,
        )
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Matches `MultiheadAttention.merge_masks`: one (B, H, L, L) mask and its type."""
        mask_type = None
        merged_mask = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1
                )
            merged_mask = expanded
            if key_padding_mask is not None:
                merged_mask = expanded + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1
                )
        return merged_mask, mask_type
