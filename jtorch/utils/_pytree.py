"""`torch.utils._pytree`: PyTorch's pytrees (nested containers of leaves) and their specs.

Matches PyTorch's Python pytree: tuples, lists, dicts (insertion order kept), namedtuples,
`OrderedDict`, `defaultdict` and `deque` are nodes, as is every class given to
`register_pytree_node` / `register_dataclass` / `register_constant`; everything else,
`None` included, is a leaf. `TreeSpec` records a tree's structure (type, context and
children); specs serialize to PyTorch's JSON (`treespec_dumps`). jax's `jax.tree_util`
differs in both (it sorts dict keys and treats None as an empty node), so this is plain
Python rather than a layer over it. jtorch's `torch.return_types` results are their own
nodes (PyTorch registers its structseqs the same way).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from enum import Enum
from typing import Any, Callable, Iterable, NamedTuple

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
    "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path",
    "tree_unflatten", "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure",
    "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_",
    "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps",
    "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class",
    "is_namedtuple_instance", "is_structseq", "is_structseq_class", "is_structseq_instance",
]

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], "tuple[list[tuple[Any, Any]], Any]"]
FlattenFunc, UnflattenFunc, FlattenWithKeysFunc = FlattenFn, UnflattenFn, FlattenWithKeysFn
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
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj) -> bool:
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10


def is_structseq_class(cls) -> bool:
    """Whether `cls` is a C structseq (`os.stat_result`...), as PyTorch tests it."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, n, None), int)
                    for n in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & _Py_TPFLAGS_BASETYPE)


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
            "serializated_type_name. Please register using `_register_namedtuple`.")
    return node.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(
            f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} because we "
            "couldn't find a serializated name.")
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
    return {"default_factory_module": factory.__module__,
            "default_factory_name": factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable_context) -> list:
    expected = {"default_factory_module", "default_factory_name", "dict_context"}
    if not isinstance(dumpable_context, dict) or set(dumpable_context) != expected:
        raise AssertionError(f"dumpable_context keys must be {expected}")
    module = importlib.import_module(dumpable_context["default_factory_module"])
    return [getattr(module, dumpable_context["default_factory_name"]),
            dumpable_context["dict_context"]]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return _seq_keys(d), d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


# -- registration --------------------------------------------------------------


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None,
                                  flatten_with_keys_fn=None) -> None:
    """Registers `cls` as a node, overwriting (with a warning) an earlier registration."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the "
                          "previous registration.", stacklevel=2)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} "
                             "must be None or registered.")
        name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else (
            serialized_type_name)
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context,
                                                            from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def register_pytree_node(cls, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: ToDumpableContextFn | None = None,
                         from_dumpable_context: FromDumpableContextFn | None = None,
                         flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    """Matches `torch.utils._pytree.register_pytree_node`: `cls` becomes a node type.

    Raises ValueError if `cls` is registered already.
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None,
                          *, serialized_type_name=None, to_dumpable_context=None,
                          from_dumpable_context=None, flatten_with_keys_fn=None) -> None:
    """The deprecated spelling of `register_pytree_node` (overwrites silently... with a
    FutureWarning, as PyTorch's)."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning,
                  stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use "
                      "`to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls) -> None:
    """Removes `cls` from the node types."""
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        node = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node.serialized_type_name, None)
        CONSTANT_NODES.discard(cls)


def _register_namedtuple(cls, *, serialized_type_name: str) -> None:
    """Makes a namedtuple class serializable in specs under `serialized_type_name`."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def register_dataclass(cls, *, field_names=None, drop_field_names=None,
                       serialized_type_name=None) -> None:
    """Matches `torch.utils._pytree.register_dataclass`: the fields are the children
    (a field that is None is kept in the context, not as a child)."""
    drop = list(drop_field_names or [])
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
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

    _private_register_pytree_node(cls, flatten, unflatten,
                                  serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True)
class ConstantNode:
    """The context of a `register_constant` node: the constant itself."""

    value: Any


def register_constant(cls) -> None:
    """Matches `torch.utils._pytree.register_constant`: instances are nodes without leaves
    (the instance is kept in the spec); `cls` needs its own `__eq__` and `__hash__`."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` "
                        "implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default "
                        "`__hash__` implementation.")
    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, lambda x: ([], ConstantNode(x)),
                                      lambda _, context: context.value,
                                      flatten_with_keys_fn=lambda x: ([], ConstantNode(x)))
        CONSTANT_NODES.add(cls)


def is_constant_class(cls) -> bool:
    return isinstance(cls, type) and cls in CONSTANT_NODES


for _args in (
    (tuple, _tuple_flatten, _tuple_unflatten, "builtins.tuple", None, None,
     _tuple_flatten_with_keys),
    (list, _list_flatten, _list_unflatten, "builtins.list", None, None,
     _list_flatten_with_keys),
    (dict, _dict_flatten, _dict_unflatten, "builtins.dict", None, None,
     _dict_flatten_with_keys),
    (namedtuple, _namedtuple_flatten, _namedtuple_unflatten, "collections.namedtuple",
     _namedtuple_serialize, _namedtuple_deserialize, _namedtuple_flatten_with_keys),
    (OrderedDict, _ordereddict_flatten, _ordereddict_unflatten, "collections.OrderedDict",
     None, None, _ordereddict_flatten_with_keys),
    (defaultdict, _defaultdict_flatten, _defaultdict_unflatten, "collections.defaultdict",
     _defaultdict_serialize, _defaultdict_deserialize, _defaultdict_flatten_with_keys),
    (deque, _deque_flatten, _deque_unflatten, "collections.deque", None, None,
     _deque_flatten_with_keys),
):
    _private_register_pytree_node(_args[0], _args[1], _args[2], serialized_type_name=_args[3],
                                  to_dumpable_context=_args[4], from_dumpable_context=_args[5],
                                  flatten_with_keys_fn=_args[6])

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
        cls, lambda s: (list(s), None), lambda values, context: cls(*values),
        flatten_with_keys_fn=lambda s: ([(SequenceKey(i), v) for i, v in enumerate(s)], None))


# -- leaves, specs, flatten ------------------------------------------------------


def tree_is_leaf(tree, is_leaf=None) -> bool:
    """Whether `tree` is a leaf: not a registered node type (or `is_leaf(tree)` says so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None) -> bool:
    warnings.warn("torch.utils._pytree._is_leaf is private and will be removed in a future "
                  "release. Please use torch.utils._pytree.tree_is_leaf instead.",
                  FutureWarning, stacklevel=2)
    return tree_is_leaf(tree, is_leaf=is_leaf)


from ._treespec import LeafSpec, PyTreeSpec, TreeSpec, _LEAF_SPEC  # noqa: E402


def treespec_leaf() -> TreeSpec:
    """The spec of a leaf."""
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /) -> TreeSpec:
    """A tuple spec from child specs."""
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs) -> TreeSpec:
    """A dict spec from child specs."""
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d.keys()), list(d.values()))


def tree_flatten(tree, is_leaf=None) -> tuple[list, TreeSpec]:
    """Matches `torch.utils._pytree.tree_flatten`: (leaves in order, spec)."""
    leaves: list = []

    def walk(node) -> TreeSpec:
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec: TreeSpec):
    """Matches `torch.utils._pytree.tree_unflatten` (the arguments may come swapped)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got "
                            f"item of type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """The leaves of `tree`, in order, as an iterator."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None) -> list:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def arg_tree_leaves(*args, **kwargs) -> list:
    """The leaves of `(args, kwargs)`."""
    leaves = []
    for a in args:
        leaves.extend(tree_iter(a))
    for a in kwargs.values():
        leaves.extend(tree_iter(a))
    return leaves


# -- maps and predicates ---------------------------------------------------------


def tree_map(func, tree, *rests, is_leaf=None):
    """Matches `torch.utils._pytree.tree_map`: `func` over the leaves of `tree` (and the
    matching subtrees of `rests`, which need `tree`'s structure as a prefix)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    args = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *args))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Like `tree_map`, for the side effect: returns `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    args = [leaves] + [spec.flatten_up_to(r) for r in rests]
    deque(map(func, *args), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """Makes `func` apply only to leaves of the given types (or passing the predicate)."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec: TreeSpec, is_leaf=None):
    """`tree` (a prefix of `treespec`'s structure) repeated out to its leaves, or None."""
    full = tree_unflatten([0] * treespec.num_leaves, treespec)
    out: list = []
    try:
        tree_map_(lambda x, sub: out.extend([x] * tree_structure(sub, is_leaf).num_leaves),
                  tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return out


# -- key paths over trees --------------------------------------------------------


def _key_paths(path: tuple, tree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield path, tree
        return
    node_type = _get_node_type(tree)
    node = SUPPORTED_NODES.get(node_type)
    if node is None:
        yield path, tree
        return
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. Please "
                         "pass a flatten_with_keys_fn argument to register_pytree_node.")
    children, _ = node.flatten_with_keys_fn(tree)
    for k, child in children:
        yield from _key_paths((*path, k), child, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None) -> tuple[list, TreeSpec]:
    """Like `tree_flatten`, each leaf with its key path: ([(path, leaf)], spec)."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None) -> list:
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Like `tree_map`; `func` gets each leaf's key path first."""
    path_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*path_leaves)) + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns, strict=True))


# -- serialized specs ------------------------------------------------------------


class EnumEncoder(json.JSONEncoder):
    """JSON for enum members in contexts, as PyTorch writes them."""

    def default(self, obj):
        if isinstance(obj, Enum):
            return {"__enum__": True, "fqn": f"{obj.__class__.__module__}:"
                    f"{obj.__class__.__qualname__}", "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj: dict):
    if "__enum__" in obj:
        module, _, name = obj["fqn"].partition(":")
        cls = importlib.import_module(module)
        for attr in name.split("."):
            cls = getattr(cls, attr)
        return cls[obj["name"]]
    return obj


def _to_json(spec: TreeSpec) -> dict:
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    node = SUPPORTED_SERIALIZED_TYPES.get(spec.type)
    if node is None:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    if node.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"No registered serialization name for {spec.type} found. Please update your "
            "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if node.to_dumpable_context is None:
        try:
            context = json.dumps(spec.context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json "
                            "dump-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = node.to_dumpable_context(spec.context)
    return {"type": node.serialized_type_name, "context": context,
            "children_spec": [_to_json(c) for c in spec.children()]}


def _from_json(schema: dict) -> TreeSpec:
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not "
                                  "registered.")
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    node = SUPPORTED_SERIALIZED_TYPES[typ]
    if node.from_dumpable_context is None:
        context = json.loads(schema["context"], object_hook=enum_object_hook)
    else:
        context = node.from_dumpable_context(schema["context"])
    return TreeSpec(typ, context, [_from_json(c) for c in schema["children_spec"]])


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """Matches `torch.utils._pytree.treespec_dumps`: the spec as PyTorch's JSON."""
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return json.dumps((protocol, _to_json(treespec)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized: str) -> TreeSpec:
    """Matches `torch.utils._pytree.treespec_loads`."""
    protocol, schema = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return _from_json(schema)


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self) -> str:
        return "*"


_asterisk = _Asterisk()


def treespec_pprint(treespec: TreeSpec) -> str:
    """The tree with `*` for each leaf, e.g. `(*, [*, *])`."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))
