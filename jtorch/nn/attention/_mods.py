"""Score and mask modifications for flex attention: what they are, and running them.

A `score_mod(score, b, h, q_idx, kv_idx)` or `mask_mod(b, h, q_idx, kv_idx)` is a user's
Python function written for one (batch, head, query, key) position. PyTorch runs it under
four nested `vmap`s. jtorch first calls it once with index tensors shaped to broadcast
against each other (b: (B,1,1,1), h: (1,H,1,1), q_idx: (1,1,L,1), kv_idx: (1,1,1,S)): every
elementwise mod (causal, sliding windows, ALiBi, soft-capping, document masks that index a
tensor with `q_idx`) then covers the whole grid in one pass. A mod whose result does not
have the grid's broadcast shape (chained indexing `bias[b][0][q_idx]`, a reduction) or that
fails on broadcast indices runs under `jtorch.vmap` instead, as in PyTorch.
"""

from __future__ import annotations

import enum
import inspect
from typing import Callable

from ... import accelerator, arange, isneginf, zeros
from ..._dtype import bool as _bool
from ..._dtype import int64
from ..._tensor import Tensor
from ...func import vmap

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]


class _ModificationType(enum.Enum):
    """Matches PyTorch's: a score_mod takes 5 positional arguments, a mask_mod 4."""

    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn) -> _ModificationType:
    """Tells a score_mod from a mask_mod by its number of positional arguments without
    defaults, as PyTorch does."""
    if hasattr(fn, "__code__"):
        code = fn.__code__
        n = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        n = sum(
            1
            for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty
        )
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return _ModificationType.SCORE_MOD if n == 5 else _ModificationType.MASK_MOD


def _identity(
    score: Tensor, batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor
) -> Tensor:
    return score


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=_bool, device=batch.device)


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=_bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_ones((), dtype=_bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _vmap_for_bhqkv(fn, prefix: tuple, suffix: tuple = (), out_dims=0, group_dim=False):
    """Matches PyTorch's helper: `fn` vmapped over kv_idx, q_idx, head and batch (and a group
    dimension between head and query when `group_dim`), innermost first."""
    dims = [(None, None, None, 0), (None, None, 0, None), (None, 0, None, None)]
    if group_dim:
        dims.append((None, 0, None, None))
    dims.append((0, None, None, None))
    for d in dims:
        fn = vmap(fn, in_dims=prefix + d + suffix, out_dims=out_dims)
    return fn


def _index_grid(shape: tuple, dtype, device) -> tuple:
    """The b, h, q_idx, kv_idx index tensors of a (B, H, L, S) grid, each 1-D."""
    return tuple(arange(n, dtype=dtype, device=device) for n in shape)


def _broadcasts_to(shape: tuple, full: tuple) -> bool:
    if len(shape) > len(full):
        return False
    return all(s in (1, f) for s, f in zip(shape[::-1], full[::-1]))


def _apply_mod(fn, lead: tuple, grid: tuple, shape: tuple) -> Tensor:
    """`fn(*lead, b, h, q_idx, kv_idx)` over every position of the (B, H, L, S) grid.

    Args:
      lead: the arguments before the indices: `(score,)` for a score_mod, with score of the
        full grid shape; `()` for a mask_mod.
      grid: the four 1-D index tensors (`_index_grid`).
      shape: (B, H, L, S).

    Returns a tensor that broadcasts to `shape` (one of exactly `shape` from the vmap path).
    """
    b, h, q, kv = (
        g.view(*(n if i == j else 1 for j in range(4))) for i, (g, n) in enumerate(zip(grid, shape))
    )
    try:
        out = fn(*lead, b, h, q, kv)
    except Exception:  # not elementwise on broadcast indices: vmap raises the real error
        out = None
    if isinstance(out, Tensor) and _broadcasts_to(tuple(out.shape), shape):
        return out
    return _vmap_for_bhqkv(fn, prefix=(0,) * len(lead))(*lead, *grid)


def create_mask(
    mod_fn, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int, device=None
) -> Tensor:
    """Matches `torch.nn.attention.flex_attention.create_mask`: the (B, H, Q_LEN, KV_LEN)
    mask of a mask_mod, or of where a score_mod leaves a score above -inf."""
    if device is None:
        device = accelerator.current_accelerator() or "cpu"
    shape = (1 if B is None else B, 1 if H is None else H, Q_LEN, KV_LEN)
    grid = _index_grid(shape, int64, device)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = _apply_mod(mod_fn, (zeros(*shape, device=device),), grid, shape)
        return ~isneginf(out.expand(*shape))
    return _apply_mod(mod_fn, (), grid, shape).expand(*shape).contiguous()
