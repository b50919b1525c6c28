"""The pytree node registry (see `torch.utils._pytree`): which types are nodes, how each
flattens and unflattens, key entries for key paths, and the serialization names of node
types. `torch.utils._pytree` re-exports it; `TreeSpec` reads it."""

from __future__ import annotations

import dataclasses
import importlib
import threading
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, Iterable, NamedTuple

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], "tuple[list[tuple[Any, Any]], Any]"]
KeyPath = tuple

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(NamedTuple):
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: FlattenWithKeysFn | None


class _SerializeNodeDef(NamedTuple):
    typ: type
    serialized_type_name: str
    to_dumpable_context: ToDumpableContextFn | None
    from_dumpable_context: FromDumpableContextFn | None


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES: dict = {}
SUPPORTED_SERIALIZED_TYPES: dict = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict = {}
CONSTANT_NODES: set = set()


# -- key paths -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The position of a child in a sequence node: prints as `[0]`."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The key of a child in a mapping node: prints as `['a']`."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute holding a child (namedtuple fields, dataclasses): prints as `.name`."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: KeyPath) -> str:
    """A key path as text, e.g. `['a'][0].x`."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp: KeyPath):
    """The value at key path `kp` in `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# -- namedtuples and structseqs ------------------------------------------------


def is_namedtuple_class(cls) -> bool:
    """Whether `cls` is a namedtuple class (a tuple with `_fields`, `_make`, `_asdict`)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and all(type(f) is str for f in cls._fields)
        and callable(getattr(cls, "_make", None))
        and callable(getattr(cls, "_asdict", None))
    )


def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10


def is_structseq_class(cls) -> bool:
    """Whether `cls` is a C structseq (`os.stat_result`...), as PyTorch tests it."""
    return (
        isinstance(cls, type)
        and cls.__bases__ == (tuple,)
        and all(
            isinstance(getattr(cls, n, None), int)
            for n in ("n_fields", "n_sequence_fields", "n_unnamed_fields")
        )
        and not cls.__flags__ & _Py_TPFLAGS_BASETYPE
    )


def is_structseq(obj) -> bool:
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj) -> bool:
    return is_structseq_class(type(obj))


# -- the built-in nodes --------------------------------------------------------


def _seq_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return _seq_keys(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return _seq_keys(d), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    values, keys = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(keys, values)], keys


def _dict_unflatten(values, context):
    return dict(zip(context, values, strict=True))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    values, cls = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(cls._fields, values)], cls


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context) -> str:
    node = SUPPORTED_SERIALIZED_TYPES.get(context)
    if node is None or node.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        why = "didn't register" if node is None else "couldn't find"
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we {why} a "
            "serializated_type_name. Please register using `_register_namedtuple`."
        )
    return node.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(
            f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} because we "
            "couldn't find a serializated name."
        )
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_flatten_with_keys(d):
    return _dict_flatten_with_keys(d)


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values, strict=True))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, _dict_unflatten(values, keys))


def _defaultdict_serialize(context) -> dict:
    factory, keys = context
    return {
        "default_factory_module": factory.__module__,
        "default_factory_name": factory.__qualname__,
        "dict_context": keys,
    }


def _defaultdict_deserialize(dumpable_context) -> list:
    expected = {"default_factory_module", "default_factory_name", "dict_context"}
    if not isinstance(dumpable_context, dict) or set(dumpable_context) != expected:
        raise AssertionError(f"dumpable_context keys must be {expected}")
    module = importlib.import_module(dumpable_context["default_factory_module"])
    return [
        getattr(module, dumpable_context["default_factory_name"]),
        dumpable_context["dict_context"],
    ]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


# -- registration --------------------------------------------------------------


def _private_register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
) -> None:
    """Registers `cls` as a node, overwriting (with a warning) an earlier registration."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(
                f"{cls} is already registered as pytree node. Overwriting the "
                "previous registration.",
                stacklevel=2,
            )
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(
                f"Both to_dumpable_context and from_dumpable_context for {cls} "
                "must be None or registered."
            )
        name = (
            NO_SERIALIZED_TYPE_NAME_FOUND
            if serialized_type_name is None
            else (serialized_type_name)
        )
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(
            cls, name, to_dumpable_context, from_dumpable_context
        )
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def register_pytree_node(
    cls,
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: ToDumpableContextFn | None = None,
    from_dumpable_context: FromDumpableContextFn | None = None,
    flatten_with_keys_fn: FlattenWithKeysFn | None = None,
) -> None:
    """Matches `torch.utils._pytree.register_pytree_node`: `cls` becomes a node type.

    Raises ValueError if `cls` is registered already.
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        to_dumpable_context=to_dumpable_context,
        from_dumpable_context=from_dumpable_context,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    to_str_fn=None,
    maybe_from_str_fn=None,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
) -> None:
    """The deprecated spelling of `register_pytree_node` (overwrites silently... with a
    FutureWarning, as PyTorch's)."""
    warnings.warn(
        "`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
        "`torch.utils._pytree.register_pytree_node` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn(
            "`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use "
            "`to_dumpable_context` and `from_dumpable_context` instead.",
            FutureWarning,
            stacklevel=2,
        )
    _private_register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        to_dumpable_context=to_dumpable_context,
        from_dumpable_context=from_dumpable_context,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _deregister_pytree_node(cls) -> None:
    """Removes `cls` from the node types."""
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        node = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node.serialized_type_name, None)
        CONSTANT_NODES.discard(cls)


def _register_namedtuple(cls, *, serialized_type_name: str) -> None:
    """Makes a namedtuple class serializable in specs under `serialized_type_name`."""
    _private_register_pytree_node(
        cls,
        _namedtuple_flatten,
        _namedtuple_unflatten,
        serialized_type_name=serialized_type_name,
        to_dumpable_context=_namedtuple_serialize,
        from_dumpable_context=_namedtuple_deserialize,
        flatten_with_keys_fn=_namedtuple_flatten_with_keys,
    )


def register_dataclass(
    cls, *, field_names=None, drop_field_names=None, serialized_type_name=None
) -> None:
    """Matches `torch.utils._pytree.register_dataclass`: the fields are the children
    (a field that is None is kept in the context, not as a child)."""
    drop = list(drop_field_names or [])
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError(
                "field_names must be specified with a list of all fields used to "
                f"initialize {cls}, as it is not a dataclass."
            )
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in drop]
    else:
        init = {f.name for f in dataclasses.fields(cls) if f.init} - set(drop)
        if init != set(field_names):
            msg = "field_names does not include all dataclass fields.\n"
            if init - set(field_names):
                msg += f"Missing fields in `field_names`: {init - set(field_names)}.\n"
            if set(field_names) - init:
                msg += f"Unexpected fields in `field_names`: {set(field_names) - init}.\n"
            raise ValueError(msg)
    names = list(field_names)

    def flatten(obj):
        values, present, absent = [], [], []
        for n in names:
            v = getattr(obj, n)
            (absent if v is None else present).append(n)
            if v is not None:
                values.append(v)
        return values, [present, absent]

    def unflatten(values, context):
        present, absent = context
        return cls(**dict(zip(present, values, strict=True)), **dict.fromkeys(absent))

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values)], present

    _private_register_pytree_node(
        cls,
        flatten,
        unflatten,
        serialized_type_name=serialized_type_name,
        flatten_with_keys_fn=flatten_with_keys,
    )


@dataclasses.dataclass(frozen=True)
class ConstantNode:
    """The context of a `register_constant` node: the constant itself."""

    value: Any


def register_constant(cls) -> None:
    """Matches `torch.utils._pytree.register_constant`: instances are nodes without leaves
    (the instance is kept in the spec); `cls` needs its own `__eq__` and `__hash__`."""
    if cls.__eq__ is object.__eq__:
        raise TypeError(
            "register_constant(cls) expects `cls` to have a non-default `__eq__` implementation."
        )
    if cls.__hash__ is None:
        raise TypeError(
            "register_constant(cls) expects `cls` to have a non-default `__hash__` implementation."
        )
    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(
            cls,
            lambda x: ([], ConstantNode(x)),
            lambda _, context: context.value,
            flatten_with_keys_fn=lambda x: ([], ConstantNode(x)),
        )
        CONSTANT_NODES.add(cls)


def is_constant_class(cls) -> bool:
    return isinstance(cls, type) and cls in CONSTANT_NODES


for _args in (
    (
        tuple,
        _tuple_flatten,
        _tuple_unflatten,
        "builtins.tuple",
        None,
        None,
        _tuple_flatten_with_keys,
    ),
    (list, _list_flatten, _list_unflatten, "builtins.list", None, None, _list_flatten_with_keys),
    (dict, _dict_flatten, _dict_unflatten, "builtins.dict", None, None, _dict_flatten_with_keys),
    (
        namedtuple,
        _namedtuple_flatten,
        _namedtuple_unflatten,
        "collections.namedtuple",
        _namedtuple_serialize,
        _namedtuple_deserialize,
        _namedtuple_flatten_with_keys,
    ),
    (
        OrderedDict,
        _ordereddict_flatten,
        _ordereddict_unflatten,
        "collections.OrderedDict",
        None,
        None,
        _ordereddict_flatten_with_keys,
    ),
    (
        defaultdict,
        _defaultdict_flatten,
        _defaultdict_unflatten,
        "collections.defaultdict",
        _defaultdict_serialize,
        _defaultdict_deserialize,
        _defaultdict_flatten_with_keys,
    ),
    (
        deque,
        _deque_flatten,
        _deque_unflatten,
        "collections.deque",
        None,
        None,
        _deque_flatten_with_keys,
    ),
):
    _private_register_pytree_node(
        _args[0],
        _args[1],
        _args[2],
        serialized_type_name=_args[3],
        to_dumpable_context=_args[4],
        from_dumpable_context=_args[5],
        flatten_with_keys_fn=_args[6],
    )

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _get_node_type(tree) -> Any:
    """The registry key of `tree`'s node: every namedtuple class counts as `namedtuple`."""
    t = type(tree)
    if is_namedtuple_class(t):
        if t.__module__ == "torch.return_types":
            if t not in SUPPORTED_NODES:
                _register_return_type(t)
            return t
        return namedtuple
    return t


def _register_return_type(cls) -> None:
    """jtorch's `torch.return_types` classes are namedtuples; PyTorch's are structseqs that
    torch registers as their own nodes (no context): they are registered the same way."""
    _private_register_pytree_node(
        cls,
        lambda s: (list(s), None),
        lambda values, context: cls(*values),
        flatten_with_keys_fn=lambda s: ([(SequenceKey(i), v) for i, v in enumerate(s)], None),
    )
