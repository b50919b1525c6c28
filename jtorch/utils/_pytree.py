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

import functools
import importlib
import json
import types
import warnings
from collections import deque
from enum import Enum

from ._pytree_nodes import (  # noqa: F401 - the registry's names are this module's too
    _NODE_REGISTRY_LOCK,
    BUILTIN_TYPES,
    CONSTANT_NODES,
    DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL,
    NO_SERIALIZED_TYPE_NAME_FOUND,
    SERIALIZED_TYPE_TO_PYTHON_TYPE,
    STANDARD_DICT_TYPES,
    SUPPORTED_NODES,
    SUPPORTED_SERIALIZED_TYPES,
    ConstantNode,
    Context,
    DumpableContext,
    FlattenFn,
    FlattenWithKeysFn,
    FromDumpableContextFn,
    GetAttrKey,
    KeyPath,
    MappingKey,
    NodeDef,
    PyTree,
    SequenceKey,
    ToDumpableContextFn,
    UnflattenFn,
    _defaultdict_deserialize,
    _defaultdict_flatten,
    _defaultdict_flatten_with_keys,
    _defaultdict_serialize,
    _defaultdict_unflatten,
    _deque_flatten,
    _deque_flatten_with_keys,
    _deque_unflatten,
    _deregister_pytree_node,
    _dict_flatten,
    _dict_flatten_with_keys,
    _dict_unflatten,
    _get_node_type,
    _list_flatten,
    _list_flatten_with_keys,
    _list_unflatten,
    _namedtuple_deserialize,
    _namedtuple_flatten,
    _namedtuple_flatten_with_keys,
    _namedtuple_serialize,
    _namedtuple_unflatten,
    _odict_flatten,
    _odict_unflatten,
    _ordereddict_flatten,
    _ordereddict_flatten_with_keys,
    _ordereddict_unflatten,
    _private_register_pytree_node,
    _Py_TPFLAGS_BASETYPE,
    _register_namedtuple,
    _register_pytree_node,
    _register_return_type,
    _seq_keys,
    _SerializeNodeDef,
    _tuple_flatten,
    _tuple_flatten_with_keys,
    _tuple_unflatten,
    is_constant_class,
    is_namedtuple,
    is_namedtuple_class,
    is_namedtuple_instance,
    is_structseq,
    is_structseq_class,
    is_structseq_instance,
    key_get,
    keystr,
    register_constant,
    register_dataclass,
    register_pytree_node,
)
from ._treespec import _LEAF_SPEC, LeafSpec, PyTreeSpec, TreeSpec  # noqa: F401

__all__ = [
    "PyTree",
    "Context",
    "FlattenFn",
    "UnflattenFn",
    "DumpableContext",
    "ToDumpableContextFn",
    "FromDumpableContextFn",
    "PyTreeSpec",
    "TreeSpec",
    "LeafSpec",
    "keystr",
    "key_get",
    "register_pytree_node",
    "tree_is_leaf",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_unflatten",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_structure",
    "tree_map",
    "tree_map_with_path",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_all",
    "tree_any",
    "tree_all_only",
    "tree_any_only",
    "treespec_dumps",
    "treespec_loads",
    "treespec_pprint",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "is_structseq",
    "is_structseq_class",
    "is_structseq_instance",
]

FlattenFunc, UnflattenFunc, FlattenWithKeysFunc = FlattenFn, UnflattenFn, FlattenWithKeysFn


# -- leaves, specs, flatten ------------------------------------------------------


def tree_is_leaf(tree, is_leaf=None) -> bool:
    """Whether `tree` is a leaf: not a registered node type (or `is_leaf(tree)` says so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None) -> bool:
    warnings.warn(
        "torch.utils._pytree._is_leaf is private and will be removed in a future "
        "release. Please use torch.utils._pytree.tree_is_leaf instead.",
        FutureWarning,
        stacklevel=2,
    )
    return tree_is_leaf(tree, is_leaf=is_leaf)


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
            raise TypeError(
                f"Expected `treespec` to be an instance of PyTreeSpec but got "
                f"item of type {type(treespec)}."
            )
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
        tree_map_(
            lambda x, sub: out.extend([x] * tree_structure(sub, is_leaf).num_leaves),
            tree,
            full,
            is_leaf=is_leaf,
        )
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
        raise ValueError(
            f"Did not find a flatten_with_keys_fn for type: {node_type}. Please "
            "pass a flatten_with_keys_fn argument to register_pytree_node."
        )
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
            return {
                "__enum__": True,
                "fqn": f"{obj.__class__.__module__}:{obj.__class__.__qualname__}",
                "name": obj.name,
            }
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
            "_register_pytree_node call with a `serialized_type_name` kwarg."
        )
    if node.to_dumpable_context is None:
        try:
            context = json.dumps(spec.context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError(
                "Unable to serialize context. Please make the context json "
                "dump-able, or register a custom serializer using "
                "_register_pytree_node."
            ) from e
    else:
        context = node.to_dumpable_context(spec.context)
    return {
        "type": node.serialized_type_name,
        "context": context,
        "children_spec": [_to_json(c) for c in spec.children()],
    }


def _from_json(schema: dict) -> TreeSpec:
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
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
