"""`torch.nn.attention.flex_attention`: attention with user-defined score and mask functions.

jtorch computes it densely (all scores, then the mods, the mask and a softmax), in the working
precision of PyTorch's math reference, with PyTorch's argument checks and outputs (the
logsumexp and max-score statistics, -inf and a zero output for rows that attend to nothing).
It is differentiable through autograd and traceable by `jtorch.compile`; the score and mask
mods are run as described in `_mods`.

Two differences from PyTorch on CPU, where PyTorch refuses: backward works (as it does on
PyTorch's CUDA build), and `AuxRequest(max_scores=True)` is answered. A BlockMask's tables are
honoured as FlexAttention's kernels honour them (a full block is attended without its
mask_mod, an unlisted block not at all); PyTorch's CPU path applies the mask_mod alone, which
gives the same result whenever the tables were made from that mask_mod.
"""

from __future__ import annotations

import math
import typing
import warnings
from typing import Literal, NamedTuple, TypeAlias, TypedDict

from ... import compiler
from ..._dtype import bool as _bool
from ..._dtype import c10_name, int32
from ..._ops.nn import attention as _kernels
from ..._tensor import Tensor
from ._block_mask import (  # noqa: F401
    _DEFAULT_SPARSE_BLOCK_SIZE,
    _LARGE_SPARSE_BLOCK_SIZE,
    BlockMask,
    _adjust_num_blocks_and_indices,
    _broadcast_to_dim,
    _compute_dq_write_order_from_block_mask,
    _convert_block_mask_to_mask,
    _convert_mask_to_block_mask,
    _create_empty_block_mask,
    _dense_to_ordered,
    _ordered_to_dense,
    _round_up_to_multiple,
    _sliced_mask_mod_error,
    _transpose_ordered,
    create_block_mask,
)
from ._mods import (  # noqa: F401
    _apply_mod,
    _get_mod_type,
    _identity,
    _index_grid,
    _mask_mod_signature,
    _ModificationType,
    _score_mod_signature,
    _vmap_for_bhqkv,
    and_masks,
    create_mask,
    noop_mask,
    or_masks,
)

__all__ = [
    "BlockMask",
    "flex_attention",
    "AuxOutput",
    "AuxRequest",
    "FlexKernelOptions",
    "create_block_mask",
    "create_mask",
    "or_masks",
    "and_masks",
    "noop_mask",
]

# PyTorch's switch for running the mods uncompiled (to debug them); jtorch never compiles
# them behind the user's back, so it changes nothing here.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False

_WARNINGS_SHOWN: set[str] = set()

_Backend: TypeAlias = Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]


def _warn_once(warning_id: str, message: str, category: type[Warning] = UserWarning) -> None:
    """Each warning once per process, as PyTorch does."""
    if warning_id not in _WARNINGS_SHOWN:
        if not compiler.is_compiling():
            warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


class FlexKernelOptions(TypedDict, total=False):
    """Matches PyTorch's options for its Triton kernels (every key optional). jtorch checks
    `BACKEND` as PyTorch does; the tuning knobs do not change what XLA computes."""

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: _Backend


class AuxRequest(NamedTuple):
    """Request which auxiliary outputs to compute from flex_attention."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs from flex_attention (None where not requested)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def _apply_kernel_options(query, key, value, return_lse, kernel_options, return_aux=None) -> dict:
    """PyTorch's checks and defaults of `kernel_options` (what it passes to its kernels)."""
    options = {} if kernel_options is None else dict(kernel_options)
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. "
            "BACKEND supersedes the legacy knob; please drop FORCE_USE_FLEX_ATTENTION "
            "and only specify the desired BACKEND."
        )
    if "BACKEND" in options:
        valid = typing.get_args(_Backend)
        if options["BACKEND"] not in valid:
            raise ValueError(
                f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of {valid}"
            )
    for k, v in (
        ("BACKEND", "AUTO"),
        ("PRESCALE_QK", False),
        ("ROWS_GUARANTEED_SAFE", False),
        ("BLOCKS_ARE_CONTIGUOUS", False),
        ("WRITE_DQ", True),
    ):
        options.setdefault(k, v)
    output_lse = return_aux.lse if return_aux is not None else return_lse
    output_max = return_aux is not None and return_aux.max_scores
    if "OUTPUT_LOGSUMEXP" in options:
        raise AssertionError("OUTPUT_LOGSUMEXP must not be in kernel_options")
    options["OUTPUT_LOGSUMEXP"] = bool(output_lse) or _grad_enabled()
    if "OUTPUT_MAX" in options:
        raise AssertionError("OUTPUT_MAX must not be in kernel_options")
    if options["BACKEND"] == "FLASH" and output_max:
        raise NotImplementedError(
            "Returning max scores is not supported with BACKEND='FLASH'. "
            "Use return_aux=AuxRequest(lse=True) or omit max_scores."
        )
    options["OUTPUT_MAX"] = output_max
    return options


def _grad_enabled() -> bool:
    from ...autograd import grad_mode

    return grad_mode.is_grad_enabled()


def _validate(query: Tensor, key: Tensor, value: Tensor, block_mask, enable_gqa: bool) -> None:
    """PyTorch's argument checks, in its order and with its messages."""
    if query.is_nested or key.is_nested or value.is_nested:
        raise NotImplementedError(
            "flex_attention does not support NestedTensor inputs, including "
            "torch.compile(flex_attention) with jagged NestedTensor inputs. "
            "Convert inputs to dense tensors before calling flex_attention."
        )
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            f"Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device}, key.device: {key.device}, and value.device: "
            f"{value.device} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            f"Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            f"instead."
        )
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"Expect query and key/value to have the same embedding dimension "
            f"but got E={query.size(-1)} and E={key.size(-1)}."
        )
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(
            f"Expect query and key/value to have the same number of heads "
            f"but got Hq={query.size(-3)} and Hkv={key.size(-3)}. "
            f"Try setting enable_gqa=True for GQA."
        )
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(
            f"Expect number of query heads to be a multiple of kv heads for GQA "
            f"but got Hq={query.size(1)} and Hkv={key.size(1)}."
        )
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(
                f"Expect query and key/value to have the same batch size, "
                f"or non-none block_mask, but got block_mask=None, "
                f"Bq={query.size(0)}, and Bkv={key.size(0)}."
            )
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(
                f"Expect query and key/value to have the same batch size, "
                f"or block_mask and query to have the same batch size, but got "
                f"Bq={query.size(0)}, Bkv={key.size(0)}, "
                f"B_block_mask={block_mask.kv_num_blocks.size(0)}."
            )
        if key.size(0) != 1:
            raise RuntimeError(
                f"Bq and Bkv must broadcast. Got Bq={query.size(0)} and Bkv={key.size(0)}"
            )


def _validate_lengths(query: Tensor, key: Tensor, block_mask: BlockMask) -> None:
    if block_mask.BLOCK_SIZE[0] == block_mask.BLOCK_SIZE[1] == _LARGE_SPARSE_BLOCK_SIZE:
        return  # the "no mask" block mask
    q_len, kv_len = block_mask.shape[-2], block_mask.shape[-1]
    if query.size(-2) > q_len or key.size(-2) > kv_len:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={query.size(-2)} and kv_len={key.size(-2)}. As the block mask was created "
            "for a smaller length than you're using it for, you likely need to create a new "
            "block mask."
        )
    if query.size(-2) < q_len or key.size(-2) < kv_len:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={query.size(-2)} and kv_len={key.size(-2)}. As the block mask was created "
            "for a larger length than you're using it for, you can either 1. create a new "
            "block mask with the correct length, or 2. 'adjust' the existing block mask to the "
            "correct length by calling block_mask._adjust(q_len, kv_len). This essentially "
            "'crops' the block mask to the upper left corner, which does not work for all "
            "mask_mods!"
        )


def flex_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    score_mod: _score_mod_signature | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: FlexKernelOptions | None = None,
    *,
    return_aux: AuxRequest | None = None,
):
    """Matches `torch.nn.attention.flex_attention.flex_attention`.

    Args:
      query: (B, Hq, L, E). key: (B or 1, Hkv, S, E). value: (B or 1, Hkv, S, Ev).
      score_mod: `score_mod(score, b, h, q_idx, kv_idx)` -> the modified score.
      block_mask: where attention is allowed (its mask_mod and tables).
      scale: defaults to 1 / sqrt(E).
      enable_gqa: let Hq be a multiple of Hkv (query head h reads key/value head h // (Hq/Hkv)).
      return_lse: deprecated form of `return_aux=AuxRequest(lse=True)`.
      return_aux: which statistics to return next to the output, as an `AuxOutput`.

    Returns:
      The output (B, Hq, L, Ev) in query's dtype; with `return_lse`, also the logsumexp
      (B, Hq, L); with `return_aux`, also an `AuxOutput`.
    """
    _validate(query, key, value, block_mask, enable_gqa)
    if score_mod is None:
        score_mod = _identity
    if block_mask is not None:
        if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
            raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
        _validate_lengths(query, key, block_mask)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if block_mask is not None and query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(
            f"Expect q/k/v and block_mask to be on the same device but got "
            f"{query.device} and {block_mask.kv_num_blocks.device}."
        )
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. "
            "return_lse is deprecated, please use return_aux=AuxRequest(lse=True) instead."
        )
    if return_lse:
        _warn_once(
            "deprecated_return_lse",
            "return_lse is deprecated and will be removed in v2.10. "
            "Please use return_aux=AuxRequest(lse=True) instead.",
            category=FutureWarning,
        )
    _apply_kernel_options(query, key, value, return_lse, kernel_options, return_aux)

    B, Hq, L, _ = query.shape
    S = key.size(-2)
    shape = (B, Hq, L, S)
    groups = Hq // key.size(1)
    grid = _index_grid(shape, int32, query.device)
    scores = _kernels.flex_scores(query, key, float(scale), groups)
    if score_mod is not _identity:
        scores = _apply_mod(score_mod, (scores,), grid, shape)
    allowed = None
    if block_mask is not None:
        mask = _apply_mod(block_mask.mask_mod, (), grid, shape)
        if mask.dtype != _bool:
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a "
                f"tensor with dtype {c10_name(mask.dtype)}"
            )
        allowed = _kernels.flex_block_mask(
            block_mask.kv_num_blocks,
            block_mask.kv_indices,
            block_mask.full_kv_num_blocks,
            block_mask.full_kv_indices,
            mask,
            shape,
            tuple(block_mask.BLOCK_SIZE),
        )
    out, lse, max_scores = _kernels.flex_softmax(scores, allowed, value, shape, groups, query.dtype)

    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    lse = lse if want_lse and lse.numel() > 0 else None
    if return_aux is not None:
        max_scores = max_scores if return_aux.max_scores and max_scores.numel() > 0 else None
        return out, AuxOutput(lse=lse, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
