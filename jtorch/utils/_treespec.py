"""`TreeSpec`: the structure of a pytree (see `torch.utils._pytree`)."""

from __future__ import annotations

import dataclasses
import warnings
from collections import OrderedDict, defaultdict, deque
from typing import Any

from . import _pytree_nodes as _p

__all__ = ["TreeSpec", "LeafSpec", "PyTreeSpec"]


@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False)
class TreeSpec:
    """Matches `torch.utils._pytree.TreeSpec`: a node's type, its context (what rebuilding
    it needs besides the children: dict keys, the namedtuple class...) and child specs.
    A leaf's spec has type None."""

    type: Any
    _context: Any
    _children: list
    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type, context, children_specs) -> None:  # noqa: A002 - PyTorch's
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            nodes, leaves = 1, 1
        else:
            nodes = 1 + sum(c.num_nodes for c in children_specs)
            leaves = sum(c.num_leaves for c in children_specs)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", len(children_specs))

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        head = f"TreeSpec({self.type.__name__}, {self._context}, ["
        body = ""
        if self._children:
            indent += 2
            body = self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            body += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return head + body + "])"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (
            str(self.type) == str(other.type)
            and self._context == other._context
            and self._children == other._children
        )

    def __hash__(self) -> int:
        t, ctx = self.type, self._context
        if t is defaultdict:
            hashable = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            hashable = tuple(ctx)
        elif t is None or t in _p.BUILTIN_TYPES:
            hashable = ctx
        elif isinstance(ctx, _p.ConstantNode):
            hashable = ctx.value
        else:
            hashable = None  # a user context may not be hashable; equal specs still agree
        return hash((t, hashable, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self) -> list:
        warnings.warn(
            "`treespec.children_specs` is deprecated. Use `treespec.child(index)` "
            "to access a single child, or `treespec.children()` to get all "
            "children.",
            FutureWarning,
            stacklevel=2,
        )
        return self._children

    def is_leaf(self) -> bool:
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list:
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        return self._children[index]

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this spec's leaves (`tree` must have this structure
        as a prefix; dict types are interchangeable, keys must match)."""
        out: list = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out: list) -> None:
        if self.is_leaf():
            out.append(node)
            return
        node_type = _p._get_node_type(node)
        if self.type not in _p.BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = _p.SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(
                    f"Node arity mismatch; expected {self.num_children}, but got {len(children)}."
                )
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            both_dicts = self.type in _p.STANDARD_DICT_TYPES and node_type in _p.STANDARD_DICT_TYPES
            if not both_dicts and node_type != self.type:
                raise ValueError(
                    f"Node type mismatch; expected {self.type!r}, but got {node_type!r}."
                )
            if len(node) != self.num_children:
                raise ValueError(
                    f"Node arity mismatch; expected {self.num_children}, but got {len(node)}."
                )
            if both_dicts:
                keys = self._context if self.type is not defaultdict else self._context[1]
                got, want = set(node), set(keys)
                if got != want:
                    msg = ""
                    if want - got:
                        msg += f"; missing key(s): {want - got}"
                    if got - want:
                        msg += f"; extra key(s): {got - want}"
                    raise ValueError(f"Node keys mismatch{msg}.")
                children = [node[k] for k in keys]
            else:
                children, context = _p.SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:
                    raise ValueError(
                        f"Node context mismatch for node type {self.type!r}; "
                        f"expected {self._context!r}, but got {context!r}."
                    )
        for child, spec in zip(children, self._children, strict=True):
            spec._flatten_up_to(child, out)

    def unflatten(self, leaves):
        """The tree of this structure holding `leaves` in order."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                f"but the spec refers to a pytree that holds {self.num_leaves} "
                f"items ({self})."
            )
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for spec in self._children:
            end = start + spec.num_leaves
            children.append(spec.unflatten(leaves[start:end]))
            start = end
        return _p.SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """Matches `torch.utils._pytree.LeafSpec` (deprecated there: use `treespec.is_leaf()`)."""

    def __init__(self) -> None:
        if _leaf_spec_made:
            warnings.warn(
                "`isinstance(treespec, LeafSpec)` is deprecated, use "
                "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                FutureWarning,
                stacklevel=2,
            )
        super().__init__(None, None, [])

    __eq__ = TreeSpec.__eq__
    __hash__ = TreeSpec.__hash__


_leaf_spec_made = False
_LEAF_SPEC = LeafSpec()
_leaf_spec_made = True
