"""`torch.fx._pytree`: flattening a pytree to a given spec (`tree_flatten_spec`)."""

from __future__ import annotations

from collections import namedtuple

from ..utils._pytree import SUPPORTED_NODES, TreeSpec, _get_node_type, tree_flatten, tree_unflatten  # noqa: F401

__all__ = ["register_pytree_flatten_spec", "tree_flatten_spec"]

SUPPORTED_NODES_EXACT_MATCH: dict = {}
_FLATTEN_SPEC: dict = {}


def register_pytree_flatten_spec(cls, flatten_fn_spec, flatten_fn_exact_match_spec=None):
    """Matches `torch.fx._pytree.register_pytree_flatten_spec`: how `tree_flatten_spec`
    flattens `cls` given its spec."""
    _FLATTEN_SPEC[cls] = flatten_fn_spec
    SUPPORTED_NODES_EXACT_MATCH[cls] = flatten_fn_exact_match_spec


def tree_flatten_spec(pytree, spec: TreeSpec, exact_structural_match=False) -> list:
    """Matches `torch.fx._pytree.tree_flatten_spec`: `pytree`'s leaves in `spec`'s order."""
    if spec.is_leaf():
        return [pytree]
    if spec.type not in _FLATTEN_SPEC:
        raise RuntimeError(
            f"{type(pytree)} does not have a flatten_fn_spec associated with "
            "it. Please register one with "
            "torch.fx._pytree.register_pytree_flatten_spec.  If you have "
            "serialized your model, make sure that any custom pytrees have been "
            "registered before loading it."
        )
    children = _FLATTEN_SPEC[spec.type](pytree, spec)
    if exact_structural_match:
        exact = SUPPORTED_NODES_EXACT_MATCH.get(spec.type)
        if exact is not None and not exact(pytree, spec):
            raise RuntimeError(f"Cannot flatten pytree {pytree}, given spec: {spec}")
    out = []
    for child, child_spec in zip(children, spec.children()):
        out += tree_flatten_spec(child, child_spec, exact_structural_match)
    return out


def _dict_flatten_spec(d, spec):
    return [d[k] for k in spec.context]


def _list_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


def _tuple_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


def _namedtuple_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


for _cls, _fn in (
    (dict, _dict_flatten_spec),
    (list, _list_flatten_spec),
    (tuple, _tuple_flatten_spec),
    (namedtuple, _namedtuple_flatten_spec),
):
    register_pytree_flatten_spec(_cls, _fn)
