"""`torch.nn.Module`: registration, traversal, state dicts, conversion, hooks, repr."""

from __future__ import annotations

import collections
import functools
import itertools
import warnings
from collections import OrderedDict
from collections.abc import Mapping

from ... import _dtype
from ..._device import device as _device_cls
from ..._tensor import Tensor, zero_grads
from ...autograd import grad_mode
from ...autograd._node import RemovableHandle, _add_hook
from ..parameter import Buffer, Parameter, is_lazy
from . import _lift
from ._hooks import (  # noqa: F401 (PyTorch's module holds the global hook tables)
    _call_with_hooks,
    _ExtraHandle,
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_forward_hooks,
    _global_forward_hooks_always_called,
    _global_forward_pre_hooks,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)

__all__ = [
    "Module",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return "torch.FloatTensor" if obj.dtype is _dtype.float32 else type(obj).__name__
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _addindent(s_: str, num_spaces: int) -> str:
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    rest = [(num_spaces * " ") + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


class _IncompatibleKeys(
    collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])
):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _prepend(hooks: dict, handle: RemovableHandle) -> None:
    hooks.move_to_end(handle.id, last=False)


class Module:
    """Matches `torch.nn.Module`."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword "
                f"argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- registration -------------------------------------------------------

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Matches `torch.nn.Module.register_buffer`."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Matches `torch.nn.Module.register_parameter`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' as a "
                "function of another Tensor, compute the value in the forward() "
                "method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Matches `torch.nn.Module.add_module`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """Matches `torch.nn.Module.get_submodule`."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *path, last = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, last):
            raise AttributeError(parent._get_name() + " has no attribute `" + last + "`")
        setattr(parent, last, module)

    def _get_owner(self, target: str, kind: str):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name

    def get_parameter(self, target: str) -> Parameter:
        """Matches `torch.nn.Module.get_parameter`."""
        mod, name = self._get_owner(target, "parameter")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """Matches `torch.nn.Module.get_buffer`."""
        mod, name = self._get_owner(target, "buffer")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be "
            "called. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def set_extra_state(self, state) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be "
            "called. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    # -- attribute protocol ------------------------------------------------

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(
                    self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set
                )
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module "
                        f"'{name}' (torch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer "
                            f"'{name}' (torch.nn.Buffer, torch.Tensor or None "
                            "expected)"
                        )
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                        remove_from(self.__dict__, self._parameters, self._modules)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        attrs = set(dir(self.__class__)) | set(self.__dict__)
        attrs |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(a for a in attrs if not a[:1].isdigit())

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)
        for name, default in (
            ("_forward_pre_hooks", OrderedDict),
            ("_forward_pre_hooks_with_kwargs", OrderedDict),
            ("_forward_hooks", OrderedDict),
            ("_forward_hooks_with_kwargs", OrderedDict),
            ("_forward_hooks_always_called", OrderedDict),
            ("_state_dict_hooks", OrderedDict),
            ("_state_dict_pre_hooks", OrderedDict),
            ("_load_state_dict_pre_hooks", OrderedDict),
            ("_load_state_dict_post_hooks", OrderedDict),
            ("_non_persistent_buffers_set", set),
            ("_backward_pre_hooks", OrderedDict),
        ):
            if name not in self.__dict__:
                self.__dict__[name] = default()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    # -- traversal ---------------------------------------------------------

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True):
        """Matches `torch.nn.Module.parameters`."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        """Matches `torch.nn.Module.named_parameters`."""
        yield from self._named_members(
            lambda m: m._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(
            lambda m: m._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Matches `torch.nn.Module.named_modules`."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                sub = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, sub, remove_duplicate)

    def apply(self, fn):
        """Matches `torch.nn.Module.apply`: `fn` on every submodule, then on this one."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and grads ---------------------------------------------------

    def train(self, mode: bool = True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def _lifted_state(self, prefix: str):
        """This module's state as `jtorch.compile` lifts it (nn/modules/_lift.py)."""
        return _lift.module_state(self, prefix)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Matches `torch.nn.Module.zero_grad`."""
        zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        return self

    # -- conversion --------------------------------------------------------

    def _apply(self, fn, recurse: bool = True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with grad_mode.no_grad():
                new = fn(param)
            # PyTorch keeps the Parameter object (param.data = new): references stay valid.
            param.data = new
            param._vc[0] += 1
            if param.grad is not None:
                with grad_mode.no_grad():
                    g = fn(param.grad)
                param.grad.data = g
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Matches `torch.nn.Module.to(device=None, dtype=None, non_blocking=False)`."""
        device, dtype, non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but "
                f"got desired dtype={dtype}"
            )

        def convert(t):
            if t.is_floating_point() or t.is_complex():
                return t.to(device, dtype, non_blocking)
            return t.to(device, None, non_blocking)

        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device=None):
        return self._apply(lambda t: t.to("xpu" if device is None else device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device=None, recurse: bool = True):
        from ... import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # -- state dict --------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Matches `torch.nn.Module.state_dict`: an OrderedDict with `_metadata`."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.",
                FutureWarning,
                stacklevel=2,
            )
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent.items())
            if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected '
                    "torch.Tensor or Tensor-like object from checkpoint but "
                    f"received {type(value)}"
                )
                continue
            lazy = is_lazy(param)
            if not lazy and param.ndim == 0 and value.ndim == 1:
                value = value[0]  # PyTorch's 0.3 -> 0.4 compatibility rule
            if not lazy and tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{value.shape} from checkpoint, the shape in current model "
                    f"is {param.shape}."
                )
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(value, Parameter):
                                value = Parameter(value, requires_grad=param.requires_grad)
                            else:
                                value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    elif lazy:
                        param.materialize(value.shape, dtype=value.dtype)
                        param.copy_(value)
                    else:
                        param.copy_(value)
            except Exception as ex:  # noqa: BLE001 - reported as PyTorch reports it
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions '
                    f"in the model are {param.size()} and whose dimensions in the "
                    f"checkpoint are {value.size()}, an exception occurred : "
                    f"{ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix) :].split(".", 1)
                    if len(head) > 1:
                        if head[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif head[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Matches `torch.nn.Module.load_state_dict`."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {
                        k: v for k, v in local_state.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible)
                if out is not None:
                    raise AssertionError(
                        "Hooks registered with "
                        "``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys "
                        "need to be modified, it should be done inplace."
                    )

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if missing_keys:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        return _add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        return _add_hook(self._state_dict_hooks, hook)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected,
        error_msgs)`."""
        return _add_hook(self._load_state_dict_pre_hooks, functools.partial(hook, self))

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        if with_module:
            return self.register_load_state_dict_pre_hook(hook)
        return _add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # -- hooks and calling -------------------------------------------------

    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Matches `torch.nn.Module.register_forward_pre_hook`."""
        h = _ExtraHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            _prepend(self._forward_pre_hooks, h)
        return h

    def register_forward_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """Matches `torch.nn.Module.register_forward_hook`."""
        h = _ExtraHandle(
            self._forward_hooks, self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        )
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            _prepend(self._forward_hooks, h)
        return h

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` may return a replacement grad_output."""
        h = _add_hook(self._backward_pre_hooks, hook)
        if prepend:
            _prepend(self._backward_pre_hooks, h)
        return h

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` may return a replacement grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks "
                "on a single Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        h = _add_hook(self._backward_hooks, hook)
        if prepend:
            _prepend(self._backward_hooks, h)
        return h

    def register_backward_hook(self, hook) -> RemovableHandle:
        """The legacy backward hook; jtorch runs it as a full backward hook."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks "
                "on a single Module. Please use only one of them."
            )
        self._is_full_backward_hook = False
        return _add_hook(self._backward_hooks, hook)

    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        if not (
            self._backward_hooks
            or self._backward_pre_hooks
            or self._forward_hooks
            or self._forward_pre_hooks
            or _global_backward_pre_hooks
            or _global_backward_hooks
            or _global_forward_hooks
            or _global_forward_pre_hooks
        ):
            return forward_call(*args, **kwargs)
        return _call_with_hooks(self, forward_call, args, kwargs)

    def _wrapped_call_impl(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    # -- repr --------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def compile(self, *args, **kwargs) -> None:
        """Matches `torch.nn.Module.compile`: later calls run the compiled forward."""
        import jtorch  # the assembled namespace, as PyTorch's Module.compile uses torch.compile

        self._compiled_call_impl = jtorch.compile(self._call_impl, *args, **kwargs)


def _parse_to(*args, **kwargs):
    """`Module.to`'s arguments as (device, dtype, non_blocking)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(
            f"to() received an invalid combination of arguments - got "
            f"unexpected keyword arguments {list(kwargs)}"
        )
    for a in args:
        if isinstance(a, _dtype.dtype):
            dtype = a
        elif isinstance(a, (str, _device_cls)) or (isinstance(a, int) and not isinstance(a, bool)):
            device = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            non_blocking = a
        else:
            raise TypeError(
                f"to() received an invalid combination of arguments - got ({type(a).__name__})"
            )
    return device, dtype, non_blocking
