"""What an op is (DESIGN 3): the slot markers and promotion kinds a declaration uses, `OpDef`
(one record per op: with the kernel, the facts PyTorch keeps per op, as a line of its
`derivatives.yaml` does: the autograd node's name, whether the backward saves the result),
and the registry's tables (`OPS`, `NAMESPACES`, `METHODS`).

`_registry` declares ops into these tables and `_dispatch` runs them.
"""

from __future__ import annotations

import collections
import inspect
import operator
import os

import numpy as np

from .._tensor import Tensor


class _Slot:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


T = _Slot("T")  # tensor or scalar, promoted
TI = _Slot("TI")  # tensor passed as is (indices, masks, conditions); numbers are wrapped
TL = _Slot("TL")  # sequence of tensors, promoted together
S = _Slot("S")  # Python number passed traced (weakly typed), not promoted
_SLOTS = {"T": T, "TI": TI, "TL": TL, "S": S}

# Promotion kinds, named as PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND.
DEFAULT = "DEFAULT"
INT_TO_FLOAT = "INT_TO_FLOAT"
ALWAYS_BOOL = "ALWAYS_BOOL"
COMPLEX_TO_FLOAT = "COMPLEX_TO_FLOAT"
BOOL_TO_LONG = "BOOL_TO_LONG"
NONE = None  # the implementation handles dtypes itself

OPS: dict[str, "OpDef"] = {}
NAMESPACES: dict[str, dict] = collections.defaultdict(dict)  # "" is torch itself
METHODS: dict[str, object] = {}

_NO_JIT = os.environ.get("JTORCH_EAGER_JIT", "1") == "0"


def _freeze(v):
    """A hashable form of a static argument."""
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, Tensor):
        return _freeze(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def camel(name: str) -> str:
    """`log_softmax` -> `LogSoftmax`: PyTorch's autograd node names are the op's in CamelCase."""
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


class NodeRule:
    """The autograd node name of one call of an op that PyTorch names by overload.

    Wraps `rule`, a function whose parameters are names of the op's own parameters: it is
    called with the call's values of them (tensor slots as given: a `Tensor` or a Python
    number; statics as the kernel sees them). A rule that reads a static parameter names only
    calls whose statics are known (a kernel call); elsewhere (forward-mode AD) the op's fixed
    name applies.
    """

    __slots__ = ("rule", "picks", "reads_statics")

    def __init__(self, rule, op_name: str, slot_names: tuple, static_names: tuple):
        picks = []
        for p in inspect.signature(rule).parameters:
            if p in slot_names:
                picks.append((False, slot_names.index(p)))
            elif p in static_names:
                picks.append((True, static_names.index(p)))
            else:
                raise TypeError(
                    f"op {op_name}: the node-name rule reads {p!r}, which is not one of the "
                    f"op's parameters {slot_names + static_names}"
                )
        self.rule = rule
        self.picks = tuple(picks)
        self.reads_statics = any(s for s, _ in picks)

    def __call__(self, slot_values, statics):
        return self.rule(*[(statics if s else slot_values)[i] for s, i in self.picks])


class OpDef:
    """One declared op: its implementation, slots, promotion rule and compiled-kernel cache,
    what autograd records of a call (`autograd_name`, `node_rule`, `saves_result`,
    `wraps_numbers`, `grad_check`; see `_registry.op`), and `rows` (see `_rows`)."""

    def __init__(
        self,
        impl,
        name,
        promote,
        jit,
        returns,
        differentiable,
        view,
        check=None,
        scalar_opmath=False,
        *,
        node=None,
        saves_result=False,
        wraps_numbers=False,
        grad_check=None,
        rows=None,
    ):
        self.impl = impl
        self.scalar_opmath = scalar_opmath
        self.name = name
        self.promote = promote
        self.jit = jit and not _NO_JIT
        self.returns = returns
        self.differentiable = differentiable
        self.view = view
        self.check = check
        sig = inspect.signature(impl)
        self.params = list(sig.parameters.values())
        self.slots = []
        for i, p in enumerate(self.params):
            ann = p.annotation
            ann = _SLOTS.get(ann, ann) if isinstance(ann, str) else ann
            if isinstance(ann, _Slot):
                self.slots.append((i, ann))
        self.slot_pos = tuple(i for i, _ in self.slots)
        self.take_slots = _taker(self.slot_pos)
        self.slot_kinds = tuple(k for _, k in self.slots)
        self.static_pos = tuple(i for i in range(len(self.params)) if i not in self.slot_pos)
        self.static_names = tuple(self.params[i].name for i in self.static_pos)
        self.take_statics = _taker(self.static_pos)
        # The dispatcher's fast path takes only tensors, Python numbers and None in slots.
        self.fast = TL not in self.slot_kinds
        self.n_positional = sum(
            1 for p in self.params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
        self.has_varargs = any(p.kind == p.VAR_POSITIONAL for p in self.params)
        first_kw = self.n_positional + self.has_varargs
        self.kw_names = tuple(p.name for p in self.params[first_kw:])
        self.namedtuple = collections.namedtuple(name, returns) if returns else None
        if self.namedtuple is not None:
            self.namedtuple.__module__ = "torch.return_types"
            self.namedtuple.__qualname__ = name
            self.namedtuple.__repr__ = _return_types_repr
        self.saves_result = saves_result
        self.wraps_numbers = wraps_numbers
        self.grad_check = grad_check
        self.node_rule = None
        if callable(node):
            slot_names = tuple(self.params[i].name for i in self.slot_pos)
            self.node_rule = NodeRule(node, name, slot_names, self.static_names)
            node = None
        self.autograd_name = node or camel(name) + "Backward0"
        self.rows = rows  # a `_rows.Rows`: how an eager call runs at a bucketed row count
        if rows is not None:
            rows.bind(self)

    def __repr__(self):
        return f"<op {self.name}>"


def _taker(positions: tuple):
    """`args -> tuple(args[p] for p in positions)`, as cheap as Python allows."""
    if not positions:
        return lambda args: ()
    if len(positions) == 1:
        p = positions[0]
        return lambda args: (args[p],)
    return operator.itemgetter(*positions)


def invoke(op: "OpDef", args):
    """Calls the implementation with wrapper-ordered `args` (varargs arrive as one tuple)."""
    n = op.n_positional
    if op.has_varargs:
        return op.impl(*args[:n], *args[n], **dict(zip(op.kw_names, args[n + 1 :])))
    return op.impl(*args[:n], **dict(zip(op.kw_names, args[n:])))


def _return_types_repr(self):
    fields = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{fields})"
