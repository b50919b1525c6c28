"""Containers: `Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`, `ParameterDict`."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from ..._ops.tensor_queries import typename
from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Container"]


def _abs_string_index(idx, size: int) -> str:
    """A list index as the (non-negative) string key its module or parameter is stored under."""
    idx = operator.index(idx)
    if not (-size <= idx < size):
        raise IndexError(f"index {idx} is out of range")
    return str(idx + size if idx < 0 else idx)


def _describe(key, p, type_name) -> str:
    """One line of ParameterList/ParameterDict's extra_repr."""
    if not isinstance(p, Tensor):
        return f"  ({key}): Object of type: {type(p).__name__}"
    size_str = "x".join(str(size) for size in p.size())
    device = "" if p.device.type == "cpu" else f" ({p.device})"
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_name(p)} of size {size_str}{device}]"


class Container(Module):
    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Matches `torch.nn.Sequential`."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module) -> None:
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        # keep the numbering
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{str(type(other))} is given."
            )
        ret = Sequential()
        for layer in self:
            ret.append(layer)
        for layer in other:
            ret.append(layer)
        return ret

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{str(type(other))} is given."
            )
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    __rmul__ = __mul__

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """Matches `torch.nn.ModuleList`."""

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        return _abs_string_index(idx, len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        """PyTorch's repr, which folds runs of identical modules into `(0-2): 3 x ...`."""
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            local = f"({start}): {b}"
            if start != end:
                local = f"({start}-{end}): {end - start + 1} x {b}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """Matches `torch.nn.ModuleDict`."""

    def __init__(self, modules: Mapping | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value "
                "pairs, but got " + type(modules).__name__
            )
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(
                    "ModuleDict update sequence element #"
                    + str(j)
                    + " should be Iterable; is"
                    + type(m).__name__
                )
            if not len(m) == 2:
                raise ValueError(
                    "ModuleDict update sequence element #"
                    + str(j)
                    + " has length "
                    + str(len(m))
                    + "; 2 is required"
                )
            self[m[0]] = m[1]


class ParameterList(Module):
    """Matches `torch.nn.ParameterList`: a list whose tensors are registered as parameters."""

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx) -> str:
        return _abs_string_index(idx, len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param) -> None:
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        return setattr(self, idx, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        # PyTorch names dtypes here (torch.float32), but legacy types in ParameterDict.
        return "\n".join(_describe(k, p, _legacy) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


def _legacy(t: Tensor) -> str:
    return str(t.dtype)


class ParameterDict(Module):
    """Matches `torch.nn.ParameterDict`."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not "
                f"a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of "
                "key/value pairs, but got " + type(parameters).__name__
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(
                        "ParameterDict update sequence element #"
                        + str(j)
                        + " should be Iterable; is"
                        + type(p).__name__
                    )
                if not len(p) == 2:
                    raise ValueError(
                        "ParameterDict update sequence element #"
                        + str(j)
                        + " has length "
                        + str(len(p))
                        + "; 2 is required"
                    )
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        # PyTorch names dtypes here (torch.float32), but legacy types in ParameterDict.
        return "\n".join(_describe(k, p, typename) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other):
        copy = self.copy()
        copy.update(other)
        return copy
