"""`torch.nn.parameter`: `Parameter`, `Buffer` and the uninitialized placeholders."""

from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor, wrap
from .._torch_function import disabled_torch_function_impl

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _empty():
    return wrap(jnp.zeros((0,), jnp.float32))


class _ParameterMeta(type):
    """PyTorch's: an instance of a tensor subclass made a parameter (it keeps its own class,
    see `Parameter.__new__`) is an instance of `Parameter` too."""

    def __instancecheck__(cls, instance) -> bool:
        if cls is Parameter and getattr(instance, "_is_param", False):
            return isinstance(instance, Tensor)
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """Matches `torch.nn.Parameter`: a leaf tensor a Module registers as a parameter.

    It shares storage with `data`, as PyTorch's does. A tensor subclass (a DTensor, say)
    stays an instance of its class, flagged `_is_param`, as in PyTorch.
    """

    # As in PyTorch: a Parameter takes no part in `__torch_function__` dispatch.
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            data = _empty()
        if type(data) is not Tensor and not issubclass(type(data), (Parameter, Buffer)):
            t = data.detach()
            if type(t) is not type(data):
                raise RuntimeError(
                    f"Creating a Parameter from an instance of type {type(data).__name__} "
                    f"requires that detach() returns an instance of the same type, but return "
                    f"type {type(t).__name__} was found instead. To use the type as a "
                    f"Parameter, please correct the detach() semantics defined by its "
                    f"__torch_dispatch__() implementation."
                )
            t.requires_grad_(requires_grad)
            t._is_param = True
            return t
        t = Tensor._make_subclass(cls, data, False)
        if requires_grad:
            t.requires_grad = True  # validates the dtype, as PyTorch does
        return t

    def __init__(self, *args, **kwargs):
        pass

    def __reduce_ex__(self, protocol):
        import numpy as np

        return (_rebuild_parameter, (type(self), np.asarray(self._array), self.requires_grad))


def _rebuild_parameter(cls, arr, requires_grad):
    return cls(wrap(jnp.asarray(arr)), requires_grad)


class Buffer(Tensor):
    """Matches `torch.nn.Buffer`: assigning one to a Module attribute registers a buffer."""

    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent: bool = True):
        if data is None:
            data = _empty()
        t = Tensor._make_subclass(cls, data, data.requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, *args, **kwargs):
        pass


class UninitializedTensorMixin:
    """A placeholder whose shape is known only at the first forward (the `Lazy*` modules)."""

    cls_to_become = None
    # PyTorch's placeholders override `__torch_function__` to reject ops before
    # materialisation; jtorch's take no part in dispatch, so that a lazy module does not turn
    # on `__torch_function__` checks for every op of the program.
    __torch_function__ = disabled_torch_function_impl

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Gives the placeholder real (uninitialised: zero) storage of `shape`."""
        from .. import _dtype

        if isinstance(shape, int):
            shape = (shape,)
        # Like PyTorch, the placeholder remembers the dtype it was created with.
        dt = (dtype or getattr(self, "_factory_dtype", None) or _dtype.get_default_dtype()).np
        self._rebind(wrap(jnp.zeros(tuple(shape), dt)))
        self._vc[0] += 1
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their "
            "attributes."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """Matches `torch.nn.UninitializedParameter`."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        t = Parameter.__new__(cls, _empty(), requires_grad)
        t._factory_dtype = dtype
        return t


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """Matches `torch.nn.UninitializedBuffer`."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        return Tensor._make_subclass(cls, _empty(), requires_grad)


def is_lazy(param) -> bool:
    return isinstance(param, UninitializedTensorMixin)
