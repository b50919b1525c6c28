"""`torch.utils.dlpack`: exchanging tensors with other array libraries without copies."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor, wrap

__all__ = ["to_dlpack", "from_dlpack"]


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of the tensor's array (consumable once, as in PyTorch)."""
    return tensor._array.__dlpack__()


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor over an object implementing `__dlpack__` (numpy, jax, PyTorch, ...) or a
    DLPack capsule; zero-copy where jax can alias the memory."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if hasattr(ext_tensor, "__dlpack__"):
        return wrap(jax.dlpack.from_dlpack(ext_tensor))
    return wrap(jnp.asarray(jax.dlpack.from_dlpack(_Capsule(ext_tensor))))


class _Capsule:
    """Adapts a bare capsule to the `__dlpack__` protocol jax consumes."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: bare capsules come from host producers


def _tensor_dlpack(self, *args, **kwargs):
    return self._array.__dlpack__(*args, **kwargs)


def _tensor_dlpack_device(self):
    return self._array.__dlpack_device__()


Tensor.__dlpack__ = _tensor_dlpack
Tensor.__dlpack_device__ = _tensor_dlpack_device
