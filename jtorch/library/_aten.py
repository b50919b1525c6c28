"""`torch.ops.aten.<name>`: PyTorch's ATen operators, as jtorch functions.

An ATen operator mostly shares its name and arguments with a torch function, a Tensor
method or an `nn.functional` function; those are used. The ATen-only operators programs
call are defined here by their ATen schemas.
"""

from __future__ import annotations

import builtins

__all__ = ["resolve"]


def _slice(self, dim: int = 0, start=None, end=None, step: int = 1):
    """aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None,
    SymInt step=1) -> Tensor(a)"""
    index = (builtins.slice(None),) * (dim % self.dim()) + (builtins.slice(start, end, step),)
    return self[index]


def _to_copy(
    self,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=None,
    non_blocking: bool = False,
    memory_format=None,
):
    """aten::_to_copy: always a new tensor, of `dtype` on `device`."""
    return self.to(device=device, dtype=dtype, non_blocking=non_blocking, copy=True)


def _sym_size(self, dim: int):
    return self.size(dim)


def _sym_stride(self, dim: int):
    return self.stride(dim)


def _sym_numel(self):
    return self.numel()


def _local_scalar_dense(self):
    return self.item()


def _assert_async(
    self, assert_msg: str = "Expected Tensor with single nonzero value, but got zero"
):
    """aten::_assert_async: raises when the one-element tensor is zero."""
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if not bool(self.item()):
        raise RuntimeError(assert_msg)


def _softmax(self, dim: int, half_to_float: bool):
    from ..nn import functional

    return functional.softmax(self, dim)


def _log_softmax(self, dim: int, half_to_float: bool):
    from ..nn import functional

    return functional.log_softmax(self, dim)


def _unsafe_view(self, size):
    return self.reshape(size)


def _lift_fresh_copy(self):
    return self.clone()


_ATEN_ONLY = {
    "slice": _slice,
    "_to_copy": _to_copy,
    "sym_size": _sym_size,
    "sym_stride": _sym_stride,
    "sym_numel": _sym_numel,
    "_local_scalar_dense": _local_scalar_dense,
    "_assert_async": _assert_async,
    "_softmax": _softmax,
    "_log_softmax": _log_softmax,
    "_unsafe_view": _unsafe_view,
    "lift_fresh_copy": _lift_fresh_copy,
}


def _method(name: str):
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)

    call.__name__ = name
    return call


def resolve(name: str):
    """The function `torch.ops.aten.<name>` calls, or None when jtorch has none."""
    if name in _ATEN_ONLY:
        return _ATEN_ONLY[name]
    import jtorch

    from .._tensor import Tensor

    fn = getattr(jtorch, name, None)
    if callable(fn) and not isinstance(fn, type):
        return fn
    if callable(getattr(Tensor, name, None)):
        return _method(name)
    fn = getattr(jtorch.nn.functional, name, None)
    if callable(fn) and not isinstance(fn, type):
        return fn
    return None
