"""The node every step of the backward graph is (`Node`: edges, hooks, metadata), the handle
that removes a hook, and which dtypes carry gradients. Public as `torch.autograd.graph`'s."""

from __future__ import annotations

import collections
import itertools
import weakref

import jax.numpy as jnp
import numpy as np

from .. import _tracebacks
from .._tensor import Tensor, wrap
from . import anomaly_mode

_seq = itertools.count()

# The dtypes that can carry gradients (numpy's view of jax's dtypes; bfloat16 has kind 'V').
DIFF_DTYPES = frozenset(
    np.dtype(d)
    for d in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64, jnp.complex64, jnp.complex128)
)


class RemovableHandle:
    """Matches `torch.utils.hooks.RemovableHandle`: `remove()` unregisters the hook.

    As in PyTorch, the handle holds its hooks dict (and `extra_dict`s) weakly; jtorch's own
    hook tables are plain dicts, which cannot be weakly referenced, and are held directly.
    """

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (_ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(_ref(d) for d in extra_dict)
        else:
            self.extra_dict_ref = ()

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        self.hooks_dict_ref = _ref(collections.OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(_ref(d) for d in extra)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _ref(d):
    """A weak reference to `d`, or (a plain dict cannot have one) a strong one."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


def _add_hook(hooks: dict, fn) -> RemovableHandle:
    h = RemovableHandle(hooks)
    hooks[h.id] = fn
    return h


class Node:
    """Matches `torch.autograd.graph.Node`: one step of the backward graph."""

    __slots__ = (
        "_edges",
        "_seq",
        "_name",
        "_pre_hooks",
        "_hooks",
        "_tensor_pre_hooks",
        "_retains",
        "_freed",
        "metadata_",
        "_trace",
        "__weakref__",
    )

    def __init__(self, name: str, edges: tuple):
        self._name = name
        self._edges = edges
        self._seq = next(_seq)
        self._pre_hooks = None
        self._hooks = None
        self._tensor_pre_hooks = None  # {output_nr: {id: hook}} from Tensor.register_hook
        self._retains = None  # {output_nr: weakref to tensor} from retain_grad()
        self._freed = False
        self.metadata_ = None
        # anomaly mode: where in the user's code the forward op ran, for backward's errors
        self._trace = _tracebacks.user_stack(2) if anomaly_mode._enabled else None

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{self.name().rpartition('::')[2]} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self._edges)

    @property
    def metadata(self) -> dict:
        if self.metadata_ is None:
            self.metadata_ = {}
        return self.metadata_

    def register_hook(self, fn) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after this node; it may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        return _add_hook(self._hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """`fn(grad_outputs)` runs before this node; it may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return _add_hook(self._tensor_pre_hooks.setdefault(output_nr, {}), fn)

    def _register_retain(self, output_nr: int, t: Tensor) -> None:
        if self._retains is None:
            self._retains = {}
        self._retains[output_nr] = weakref.ref(t)

    # The engine's interface: how many outputs, and grads of inputs from grads of outputs.
    n_outputs = 1

    def apply(self, grads: tuple, create_graph: bool) -> tuple:
        raise NotImplementedError

    def release(self) -> None:
        self._freed = True

    def __call__(self, *grads):
        """Applies this node's backward to Tensor grads (`node(grad)` as in PyTorch)."""
        out = self.apply(tuple(g._array if isinstance(g, Tensor) else g for g in grads), False)
        res = tuple(wrap(g) if g is not None and not isinstance(g, Tensor) else g for g in out)
        return res[0] if len(res) == 1 else res
