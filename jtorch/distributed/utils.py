"""`torch.distributed.utils`: helpers DDP, FSDP and their users share.

The synchronising helpers broadcast from `src` over the group (over one rank, the states are
already everyone's); the argument helpers are plain Python, as in PyTorch.
"""

from __future__ import annotations

import dataclasses

from .._tensor import Tensor
from . import distributed_c10d as c10d

__all__: list = []


def _pack_kwargs(*args, **kwargs) -> tuple:
    """`(args + kwarg values, kwarg keys)`: kwargs turned positional, for the reentrant paths."""
    keys = tuple(kwargs)
    return tuple(args) + tuple(kwargs.values()), keys


def _unpack_kwargs(flat_args: tuple, kwarg_keys: tuple) -> tuple:
    if len(kwarg_keys) > len(flat_args):
        raise AssertionError(f"too many keys {len(kwarg_keys)} vs. {len(flat_args)}")
    if not kwarg_keys:
        return flat_args, {}
    n = len(flat_args) - len(kwarg_keys)
    return flat_args[:n], dict(zip(kwarg_keys, flat_args[n:]))


def _p_assert(cond, s: str, raise_assertion_error: bool = True) -> None:
    """PyTorch's assert that prints its message (an AssertionError when asked to raise)."""
    if not cond:
        print(s)
        if raise_assertion_error:
            raise AssertionError(s)


def _apply_to_tensors(fn, container):
    """`fn` applied to every tensor in nested lists, tuples, dicts and dataclasses."""

    def apply(x):
        if isinstance(x, Tensor):
            return fn(x)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                setattr(x, f.name, apply(getattr(x, f.name)))
            return x
        if isinstance(x, dict):
            return {k: apply(v) for k, v in x.items()}
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(apply(v) for v in x))
        if isinstance(x, (list, tuple, set)):
            return type(x)(apply(v) for v in x)
        return x

    return apply(container)


def _recursive_to(inputs, target_device, use_side_stream_for_tensor_copies: bool = False):
    """`inputs` with every tensor moved to `target_device`, wrapped in a tuple (PyTorch's)."""
    return (_apply_to_tensors(lambda t: t.to(target_device), inputs),) if inputs else ((),)


def _to_kwargs(inputs, kwargs, target_device, use_side_stream_for_tensor_copies: bool = False):
    moved_inputs = _recursive_to(inputs, target_device) if inputs else []
    moved_kwargs = _recursive_to(kwargs, target_device) if kwargs else []
    if len(moved_inputs) < len(moved_kwargs):
        moved_inputs.extend([() for _ in range(len(moved_kwargs) - len(moved_inputs))])
    elif len(moved_kwargs) < len(moved_inputs):
        moved_kwargs.extend([{} for _ in range(len(moved_inputs) - len(moved_kwargs))])
    return tuple(moved_inputs), tuple(moved_kwargs)


def _cast_forward_inputs(dtype, *args, **kwargs) -> tuple:
    """Floating tensors in args/kwargs cast to `dtype` (None: unchanged)."""
    if dtype is None:
        return args, kwargs

    def cast(t):
        return t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t

    return _apply_to_tensors(cast, args), _apply_to_tensors(cast, kwargs)


def _replace_by_prefix(state_dict: dict, old_prefix: str, new_prefix: str) -> None:
    if old_prefix == new_prefix:
        raise ValueError("old_prefix and new_prefix must be distinct")
    for key in list(state_dict):
        if key.startswith(old_prefix):
            state_dict[new_prefix + key[len(old_prefix) :]] = state_dict.pop(key)


def _verify_param_shape_across_processes(process_group, tensors, logger=None) -> None:
    """Checks the ranks hold parameters of the same shapes (one rank: nothing to compare)."""
    (process_group or c10d._get_default_group())


def _sync_params_and_buffers(
    process_group, module_states: list, broadcast_bucket_size: int, src: int
) -> None:
    """Broadcasts `module_states` from `src` (over one rank: already in sync)."""
    if module_states:
        c10d._broadcast_coalesced(process_group, module_states, broadcast_bucket_size, src)


def _sync_module_states(
    module,
    process_group,
    broadcast_bucket_size: int,
    src: int,
    params_and_buffers_to_ignore,
    broadcast_buffers: bool = True,
) -> None:
    """Matches PyTorch's: the module's parameters (and buffers) broadcast from `src`."""
    states = [
        p.detach() for n, p in module.named_parameters() if n not in params_and_buffers_to_ignore
    ]
    if broadcast_buffers:
        states += [
            b.detach() for n, b in module.named_buffers() if n not in params_and_buffers_to_ignore
        ]
    _sync_params_and_buffers(process_group, states, broadcast_bucket_size, src)


def _get_root_modules(modules: list) -> list:
    """The modules of `modules` that no other one of them contains."""
    roots, seen = [], set()
    for m in modules:
        if not any(m is not other and m in set(other.modules()) for other in modules):
            if id(m) not in seen:
                seen.add(id(m))
                roots.append(m)
    return roots
