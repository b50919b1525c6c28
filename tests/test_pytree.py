"""`torch.utils._pytree` (PyTorch's documented pytree semantics; no torch needed)."""

import collections
import dataclasses
import json

import pytest

import jtorch as torch
import jtorch.utils._pytree as pt

Point = collections.namedtuple("Point", "x y")


def test_none_is_a_leaf_and_dicts_keep_their_order():
    leaves, spec = pt.tree_flatten({"b": None, "a": [1, (2, None)]})
    assert leaves == [None, 1, 2, None]
    assert spec.context == ["b", "a"] and spec.num_leaves == 4
    assert pt.tree_unflatten(leaves, spec) == {"b": None, "a": [1, (2, None)]}


@pytest.mark.parametrize(
    "tree",
    [
        Point(1, [2]),
        collections.OrderedDict(z=1, y=2),
        collections.defaultdict(int, a=1),
        collections.deque([1, 2], maxlen=3),
        ((),),
        [[]],
        {},
    ],
)
def test_containers_round_trip_with_their_type(tree):
    leaves, spec = pt.tree_flatten(tree)
    back = pt.tree_unflatten(leaves, spec)
    assert type(back) is type(tree) and back == tree
    if isinstance(tree, collections.deque):
        assert back.maxlen == 3
    if isinstance(tree, collections.defaultdict):
        assert back.default_factory is int


def test_spec_repr_and_pprint():
    spec = pt.tree_structure([1, {"a": 2}])
    assert repr(spec) == "TreeSpec(list, None, [*,\n  TreeSpec(dict, ['a'], [*])])"
    assert pt.treespec_pprint(spec) == "[*, {'a': *}]"


def test_key_paths():
    tree = {"a": [1, Point(2, 3)]}
    got = [(pt.keystr(k), v) for k, v in pt.tree_leaves_with_path(tree)]
    assert got == [("['a'][0]", 1), ("['a'][1].x", 2), ("['a'][1].y", 3)]
    path = pt.tree_leaves_with_path(tree)[2][0]
    assert pt.key_get(tree, path) == 3


def test_map_with_prefix_trees_and_errors():
    assert pt.tree_map(lambda a, b: a + sum(b), [1, 2], [[1, 1], [2]]) == [3, 4]
    with pytest.raises(ValueError, match="Node arity mismatch"):
        pt.tree_map(lambda a, b: a, [1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="missing key"):
        pt.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="holds 1 items"):
        pt.tree_unflatten([1, 2], pt.tree_structure([1]))


def test_map_only_on_tensors():
    tree = {"w": torch.ones(2), "n": 3, "s": "x"}
    out = pt.tree_map_only(torch.Tensor, lambda t: t * 2, tree)
    assert out["w"].tolist() == [2.0, 2.0] and out["n"] == 3 and out["s"] == "x"
    assert pt.tree_any_only(torch.Tensor, lambda t: t.sum() > 1, tree)


def test_registered_class_and_serialization():
    class Box:
        def __init__(self, v):
            self.v = v

    pt.register_pytree_node(
        Box, lambda b: ([b.v], None), lambda vals, _: Box(vals[0]), serialized_type_name="tests.Box"
    )
    try:
        leaves, spec = pt.tree_flatten([Box((1, 2))])
        assert leaves == [1, 2]
        assert pt.tree_unflatten([3, 4], spec)[0].v == (3, 4)
        protocol, schema = json.loads(pt.treespec_dumps(spec))
        assert protocol == 1 and schema["children_spec"][0]["type"] == "tests.Box"
        assert pt.treespec_loads(pt.treespec_dumps(spec)) == spec
        with pytest.raises(ValueError, match="already registered"):
            pt.register_pytree_node(Box, None, None)
    finally:
        pt._deregister_pytree_node(Box)
    assert pt.tree_is_leaf(Box(1))


def test_dataclass_none_fields_stay_in_the_context():
    @dataclasses.dataclass
    class D:
        x: object
        y: object = None

    pt.register_dataclass(D)
    leaves, spec = pt.tree_flatten(D(1))
    assert leaves == [1] and spec.context == [["x"], ["y"]]
    assert pt.tree_unflatten([5], spec) == D(5)


def test_return_types_are_nodes():
    r = torch.max(torch.tensor([[1.0, 5.0], [3.0, 2.0]]), 1)
    leaves, spec = pt.tree_flatten(r)
    assert len(leaves) == 2 and spec.type is type(r) and spec.context is None


def test_broadcast_to_and_flatten():
    spec = pt.tree_structure([1, (2, 3)])
    assert pt._broadcast_to_and_flatten(0, spec) == [0, 0, 0]
    assert pt._broadcast_to_and_flatten([0, 1], spec) == [0, 1, 1]
    assert pt._broadcast_to_and_flatten([0, 1, 2], spec) is None
