"""`torch.nn.utils.parametrize`: tensors of a module computed from other tensors.

As in PyTorch, registering a parametrization on `module.weight` moves the parameter to
`module.parametrizations.weight.original` (or `original0`, `original1`, ... when
`right_inverse` returns several tensors), swaps the module's class for a subclass
`Parametrized<Name>` and installs a property `weight` on it that evaluates the
parametrizations on every access (or once per `cached()` block).
"""

from __future__ import annotations

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy
from typing import Sequence

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Matches `torch.nn.utils.parametrize.cached`: each parametrized tensor is computed once
    inside the block."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """PyTorch's `dest.set_(src)`: `dest` keeps its identity and takes `src`'s storage."""
    if dest is src:
        return
    dest.data = src
    dest._vc[0] += 1


class ParametrizationList(ModuleList):
    """Matches `torch.nn.utils.parametrize.ParametrizationList`: the parametrizations of one
    tensor, holding its unconstrained `original` tensor(s)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe

        original_shape = original.shape
        original_dtype = original.dtype
        with grad_mode.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors "
                f"(list, tuple...). Got {type(new).__name__}"
            )

        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the "
                    f"dtype.\noriginal.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            if original.device != new.device:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the "
                    f"device.\noriginal.device: {original.device}\n"
                    f"right_inverse(original).device: {new.device}"
                )
            # `original` keeps its identity, so an optimizer holding it still works.
            with grad_mode.no_grad():
                _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of "
                        f"tensors (list, tuple...). Got element {i} of the "
                        f"sequence with type {type(originali).__name__}."
                    )
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)

        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the "
                    "tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {z.dtype}"
                )
            if z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the "
                    "tensor, unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {z.shape}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Sets the original tensor(s) so that the parametrized tensor equals `value`."""
        with grad_mode.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype "
                        f"{value.dtype} while `original` has dtype "
                        f"{self.original.dtype}"
                    )
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors. "
                        f"Got {type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        "'right_inverse' must return a sequence of tensors of "
                        f"length {self.ntensors}. Got a sequence of length "
                        f"{len(value)}."
                    )
                for i, t in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(t, Tensor):
                        raise ValueError(
                            "'right_inverse' must return a sequence of tensors "
                            f"or reference-type opaques. Got element {i} of type "
                            f"{type(t).__name__}."
                        )
                    if original_i.dtype != t.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype "
                            f"{t.dtype} while `original{i}` has dtype "
                            f"{original_i.dtype}"
                        )
                    _maybe_set(original_i, t)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        idx = 1
        while hasattr(self, str(idx)):
            x = self[idx](x)
            idx += 1
        return x


def _inject_new_class(module: Module) -> None:
    """Gives `module` its own subclass `Parametrized<Name>`, where the properties go."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through "
            "state_dict(). See:\n"
            "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
            "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming"
            "-training"
        )

    dct = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        t = _cache.get(key)
        if t is None:
            t = _cache[key] = parametrization()
        return t

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_added(module, tensor_name, parametrization) -> None:
    """The checks PyTorch makes before stacking a parametrization on a parametrized tensor."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    if x.dtype != y.dtype:
        raise ValueError(
            "Registering a parametrization may not change the dtype of the tensor, "
            "unless the `unsafe` flag is enabled.\n"
            f"module.{tensor_name}.dtype: {y.dtype}\n"
            f"parametrization(module.{tensor_name}).dtype: {x.dtype}"
        )
    if x.shape != y.shape:
        raise ValueError(
            "Registering a parametrization may not change the shape of the tensor, "
            "unless the `unsafe` flag is enabled.\n"
            f"module.{tensor_name}.shape: {y.shape}\n"
            f"parametrization(module.{tensor_name}).shape: {x.shape}"
        )
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
        )
    if z.dtype != y.dtype:
        raise ValueError(
            "The tensor returned by parametrization.right_inverse must have the "
            f"same dtype as module.{tensor_name}, unless the `unsafe` flag is "
            f"enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
            f"returned dtype: {z.dtype}"
        )
    if z.shape != y.shape:
        raise ValueError(
            "The tensor returned by parametrization.right_inverse must have the "
            f"same shape as module.{tensor_name}, unless the `unsafe` flag is "
            f"enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
            f"returned shape: {z.shape}"
        )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Matches `torch.nn.utils.parametrize.register_parametrization`."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_added(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        # Built first, so that a failing check leaves the module untouched.
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Matches `torch.nn.utils.parametrize.is_parametrized`."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Matches `torch.nn.utils.parametrize.remove_parametrizations`."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with grad_mode.no_grad():
                t = getattr(module, tensor_name)
                # `original` keeps its identity (optimizers need not be updated).
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                "that is parametrized in terms of a sequence of tensors."
            )
        t = getattr(module, tensor_name)
        original = Parameter(t.detach()) if t.requires_grad else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """Matches `torch.nn.utils.parametrize.type_before_parametrizations`."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Matches `torch.nn.utils.parametrize.transfer_parametrizations_and_params`."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for param_func in from_module.parametrizations[name]:
            register_parametrization(to_module, name, param_func)
        src = from_module.parametrizations[name]
        dst = to_module.parametrizations[name]
        if hasattr(src, "original"):
            dst.original = src.original
        else:
            i = 0
            while hasattr(src, f"original{i}"):
                setattr(dst, f"original{i}", getattr(src, f"original{i}"))
                i += 1
    return to_module
