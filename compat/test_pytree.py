"""`torch.utils._pytree` parity: flatten/unflatten, specs (repr, equality, JSON), key
paths, maps and errors over many containers, run the same way in both libraries."""

import collections
import dataclasses

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
import jtorch.utils._pytree  # noqa: E402,F401

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Pair:
    left: object
    right: object = None


class Box:
    def __init__(self, items, tag):
        self.items, self.tag = items, tag


TREES = [
    1,
    None,
    "s",
    [1, None, (2, 3)],
    {"b": 1, "a": [2, {"c": 3}]},
    Point(1, [2, 3]),
    collections.OrderedDict([("z", 1), ("y", (2,))]),
    collections.defaultdict(list, {"k": [1, 2]}),
    collections.deque([1, (2, 3)], maxlen=5),
    (),
    [],
    {},
    ([[]],),
    {"a": None, "b": ()},
    [Point(None, {"q": (None,)})],
]


def _describe(L, tree):
    pt = L.utils._pytree
    leaves, spec = pt.tree_flatten(tree)
    back = pt.tree_unflatten(leaves, spec)
    paths = [(pt.keystr(k), v) for k, v in pt.tree_flatten_with_path(tree)[0]]
    try:
        dumped = pt.treespec_dumps(spec)
        loaded = pt.treespec_loads(dumped) == spec
    except Exception as e:  # noqa: BLE001 - compared by type
        dumped, loaded = type(e).__name__, None
    return [
        repr(leaves),
        repr(spec),
        spec.num_leaves,
        spec.num_nodes,
        spec.num_children,
        spec.is_leaf(),
        pt.treespec_pprint(spec),
        repr(back),
        type(back).__name__,
        back == tree,
        paths,
        dumped,
        loaded,
        repr(pt.tree_map(lambda x: ("m", x), tree)),
    ]


@pytest.mark.parametrize("i", range(len(TREES)))
def test_flatten_unflatten_specs(i):
    assert _describe(jtorch, TREES[i]) == _describe(torch, TREES[i])


def _outcome(fn):
    try:
        return ("ok", repr(fn()))
    except Exception as e:  # noqa: BLE001 - the exception type and message are compared
        return (type(e).__name__, str(e))


CALLS = {
    "map_multi": lambda pt: pt.tree_map(lambda a, b: (a, b), [1, {"k": 2}], [[9, 9], {"k": 8}]),
    "map_prefix_odict": lambda pt: pt.tree_map(
        lambda a, b: (a, b), {"a": 1, "b": 2}, collections.OrderedDict([("b", 3), ("a", 4)])
    ),
    "map_arity": lambda pt: pt.tree_map(lambda a, b: a, [1, 2], [1, 2, 3]),
    "map_keys": lambda pt: pt.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}),
    "map_type": lambda pt: pt.tree_map(lambda a, b: a, [1], (1,)),
    "map_namedtuple_ctx": lambda pt: pt.tree_map(lambda a, b: a, Point(1, 2), (1, 2)),
    "unflatten_len": lambda pt: pt.tree_unflatten([1, 2], pt.tree_structure([1])),
    "unflatten_swapped": lambda pt: pt.tree_unflatten(pt.tree_structure([1, 2]), [3, 4]),
    "map_only": lambda pt: pt.tree_map_only(int, lambda x: -x, [1, 2.5, "s", (3, True)]),
    "map_only_tuple": lambda pt: pt.tree_map_only((int, str), lambda x: x * 2, [1, 2.5, "s"]),
    "is_leaf": lambda pt: pt.tree_flatten(
        [[1, 2], (3, [4])], is_leaf=lambda x: isinstance(x, list) and len(x) == 1
    ),
    "all_any": lambda pt: (
        pt.tree_all(lambda x: x > 0, [1, (2,)]),
        pt.tree_any_only(str, lambda s: s == "x", [1, "x"]),
        pt.tree_all_only(int, lambda x: x > 1, [1, "x"]),
    ),
    "broadcast": lambda pt: [
        pt._broadcast_to_and_flatten(p, pt.tree_structure([1, (2, 3)]))
        for p in (0, [0, 1], [0, 1, 2], (0, 1))
    ],
    "spec_eq": lambda pt: (
        pt.tree_structure([1, 2]) == pt.tree_structure([3, 4]),
        pt.tree_structure([1]) == pt.tree_structure((1,)),
        hash(pt.tree_structure({"a": 1})) == hash(pt.tree_structure({"a": 2})),
    ),
    "leaf_checks": lambda pt: (
        pt.tree_is_leaf(None),
        pt.tree_is_leaf([1]),
        pt.tree_is_leaf((1,), is_leaf=lambda x: True),
        pt.is_namedtuple(Point),
        pt.is_namedtuple_instance(Point(1, 2)),
        pt.is_structseq_class(Point),
    ),
    "map_with_path": lambda pt: pt.tree_map_with_path(
        lambda k, v: pt.keystr(k), {"a": [1, Point(2, 3)]}
    ),
    "leaves_with_path": lambda pt: [
        (pt.keystr(k), v) for k, v in pt.tree_leaves_with_path((1, {"x": [2]}))
    ],
    "key_get": lambda pt: pt.key_get(
        {"a": [0, Point(5, 6)]}, (pt.MappingKey("a"), pt.SequenceKey(1), pt.GetAttrKey("y"))
    ),
    "children": lambda pt: [repr(c) for c in pt.tree_structure({"a": [1], "b": 2}).children()],
    "spec_builders": lambda pt: (
        repr(pt.treespec_tuple([pt.treespec_leaf()] * 2)),
        repr(pt.treespec_dict(a=pt.treespec_leaf())),
    ),
    "map_": lambda pt: (lambda acc: (pt.tree_map_(acc.append, [1, (2,)]), acc))([]),
    "flatten_up_to": lambda pt: pt.tree_structure([1, {"a": 2}]).flatten_up_to(
        [[1, 2], {"a": (3,)}]
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_calls(name):
    want = _outcome(lambda: CALLS[name](torch.utils._pytree))
    got = _outcome(lambda: CALLS[name](jtorch.utils._pytree))
    assert got == want


def _registered(L):
    pt = L.utils._pytree

    class Local(Box):
        pass

    class Holder(Pair):
        pass

    dataclasses.dataclass(Holder)

    pt.register_pytree_node(
        Local,
        lambda b: (b.items, b.tag),
        lambda v, tag: Local(list(v), tag),
        serialized_type_name="tests.Local",
        flatten_with_keys_fn=lambda b: (
            [(pt.SequenceKey(i), v) for i, v in enumerate(b.items)],
            b.tag,
        ),
    )
    pt.register_dataclass(Holder)
    tree = [Local([1, (2, 3)], "t"), Holder(4), Holder([5], {"z": 6})]
    leaves, spec = pt.tree_flatten(tree)
    out = [
        leaves,
        repr(spec).replace(Local.__qualname__, "Local").replace(Holder.__qualname__, "Holder"),
    ]
    back = pt.tree_unflatten([x * 10 for x in leaves], spec)
    out.append([back[0].items, back[0].tag, back[1].left, back[1].right, back[2].right])
    out.append([(pt.keystr(k), v) for k, v in pt.tree_flatten_with_path(tree)[0]])
    out.append(_outcome(lambda: pt.register_pytree_node(Local, None, None))[0])
    out.append(_outcome(lambda: pt.treespec_dumps(spec))[0])
    pt._deregister_pytree_node(Local)
    out.append(pt.tree_leaves([Local([1], "t")])[0].tag)
    return out


def test_registered_classes():
    assert _registered(jtorch) == _registered(torch)


def test_return_types_are_nodes():
    def run(L):
        pt = L.utils._pytree
        r = L.max(L.tensor([[1.0, 5.0], [3.0, 2.0]]), 1)
        leaves, spec = pt.tree_flatten(r)
        back = pt.tree_unflatten([x.tolist() for x in leaves], spec)
        return (
            repr(spec),
            type(back).__name__,
            list(back),
            _outcome(lambda: pt.treespec_dumps(spec)),
        )

    assert run(jtorch) == run(torch)


def test_constant_nodes():
    def run(L):
        pt = L.utils._pytree

        @dataclasses.dataclass(frozen=True)
        class Config:
            norm: str

        pt.register_constant(Config)
        leaves, spec = pt.tree_flatten([Config("l2"), 1])
        plain = _outcome(lambda: pt.register_constant(type("Plain", (), {})))
        return leaves, pt.tree_unflatten([7], spec)[0].norm, plain[0]

    assert run(jtorch) == run(torch)
