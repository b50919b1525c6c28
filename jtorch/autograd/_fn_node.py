"""`FnNode`: a node whose forward was a jax function and whose backward is its VJP, compiled
once per (kernel, differentiated inputs) (DESIGN 5, 6); the saved-tensor hooks' packing of
what that backward reads; and the backward recorded as ops of its own under
`create_graph=True`."""

from __future__ import annotations

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.array import ArrayImpl as _ArrayImpl

from .. import _dtype, _programs, _stored
from .._tensor import AutogradMeta as Meta
from .._tensor import Tensor, wrap
from . import _names
from ._node import Node

# ---------------------------------------------------------------------------
# Nodes whose backward is a jax VJP


def _fill_ct(c, o):
    """The cotangent for output `o`: zeros when none flowed; torch's complex convention."""
    if c is None:
        if jnp.issubdtype(o.dtype, jnp.inexact):
            return jnp.zeros(o.shape, o.dtype)
        return np.zeros(o.shape, jax.dtypes.float0)
    if c.dtype != o.dtype:
        c = c.astype(o.dtype)
    # PyTorch's gradients are conjugate Wirtinger derivatives; jax's cotangents are the
    # conjugates of those, both flowing in and out of a VJP.
    return jnp.conj(c) if jnp.iscomplexobj(c) else c


def _merge(args, mask, diff):
    it = iter(diff)
    full = []
    for a, m in zip(args, mask):
        if m is True:
            full.append(next(it))
        elif type(m) is tuple:
            full.append(tuple(next(it) if mm else x for x, mm in zip(a, m)))
        else:
            full.append(a)
    return full


def _pick(args, mask):
    diff = []
    for a, m in zip(args, mask):
        if m is True:
            diff.append(a)
        elif type(m) is tuple:
            diff.extend(x for x, mm in zip(a, m) if mm)
    return diff


# Backwards per (kernel, differentiated inputs); a kernel is per shape, so is its backward.
_BWD = _programs.ProgramCache("vjps")


def backward_of(fn, mask):
    """The cached backward `bwd(args, cts) -> grads of the masked args` of `fn(*args)`."""
    key = (fn, mask)
    b = _BWD.get(key)
    if b is not None:
        return b

    def bwd(args, cts):
        out, vjp = jax.vjp(lambda *d: fn(*_merge(args, mask, d)), *_pick(args, mask))
        leaves, tree = jax.tree_util.tree_flatten(out)
        grads = vjp(tree.unflatten([_fill_ct(c, o) for c, o in zip(cts, leaves)]))
        return tuple(jnp.conj(g) if jnp.iscomplexobj(g) else g for g in grads)

    # A kernel that is not compiled (data-dependent shapes) cannot be traced by jit either.
    b = jax.jit(bwd) if hasattr(fn, "lower") else bwd
    if type(fn) is _stored.StoredKernel:  # (kept by jtorch's own key, as its kernel is)
        # (the forward's arguments fix what the backward receives: named by them alone)
        b = _stored.program(b, "vjp", fn.key, mask, named_by=1)
    return _BWD.put(key, b)


def ahead_jobs(nodes) -> list:
    """Jobs compiling the backwards of `nodes` that have none yet (`_programs.ahead`): a
    graph's first backward then compiles its VJPs side by side, not one by one as it reaches
    them. Nodes of one output, the common case (the gradient a node receives is then an array
    of its output's shape and dtype: the signature compiled for)."""
    jobs, seen = [], set()
    for node in nodes:
        if type(node) is not FnNode or node.n_outputs != 1 or node._freed or node._packed:
            continue
        b = backward_of(node._fn, node._mask)
        if not hasattr(b, "lower") or not _stored.unmade(b) or id(b) in seen:
            continue
        seen.add(id(b))  # (made once: loaded by its key, or compiled)
        jobs.append(functools.partial(_compile_backward, b, node._fn, node._args))
    return jobs


def _compile_backward(b, fn, args) -> None:
    placed = [a for a in jax.tree_util.tree_leaves(args) if isinstance(a, jax.Array)]
    if not placed:
        return

    def cotangents():  # (asked for only where the program compiles)
        cts = _cotangents(fn, args, placed[0].sharding)
        if len(cts) != 1 or cts[0] is None:
            raise ValueError("no single cotangent: left to the call")
        return (cts,)

    _stored.make_ahead(b, args, more=cotangents)


def _cotangents(fn, args, sharding=None) -> tuple:
    """What the backward of `fn(*args)` receives, as avals: per output, its shape and dtype,
    or None where the output has no gradient (an integer or bool output)."""
    leaves = jax.tree_util.tree_leaves(jax.eval_shape(lambda *a: fn(*a), *args))
    return tuple(
        jax.ShapeDtypeStruct(o.shape, o.dtype, sharding=sharding)
        if jnp.issubdtype(o.dtype, jnp.inexact)
        else None
        for o in leaves
    )


def _flat_backward(b, n_args):
    """`b(args, cts)` as a function of `*args, *cts`, to record it as a node itself."""
    key = ("flat", b, n_args)
    f = _BWD.get(key)
    if f is None:
        f = (
            jax.jit(lambda *v: b(v[:n_args], v[n_args:]))
            if hasattr(b, "lower")
            else (lambda *v: b(v[:n_args], v[n_args:]))
        )
        _BWD.put(key, f)
    return f


# (It holds the kernels it analysed, so it is bounded like the programs.)
_USED = _programs.ProgramCache("vjp-analyses", share=0.5)


def used_args(fn, mask, args, n_out):
    """Which args the backward reads (by position; a tuple arg counts as used if any part is).

    The VJP's jaxpr, with dead code removed, says what PyTorch's formula would have saved:
    `add` saves nothing, `mul` saves both factors. Computed once per (fn, mask), lazily.
    """
    key = (fn, mask)
    used = _USED.get(key)
    if used is not None:
        return used
    b = backward_of(fn, mask)
    try:
        from jax._src.interpreters import partial_eval as pe

        avals = jax.tree_util.tree_map(_aval, args, is_leaf=lambda a: isinstance(a, Freed))
        cts = _cotangents(fn, avals)
        closed = jax.make_jaxpr(getattr(b, "__wrapped__", b))(avals, cts)
        _, used_flat = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        counts = [len(jax.tree_util.tree_leaves(a)) for a in avals]
        used, i = [], 0
        for c in counts:
            used.append(any(used_flat[i : i + c]))
            i += c
        used = tuple(used)
    except Exception:  # noqa: BLE001 - an unanalysable backward conservatively uses everything
        used = (True,) * len(args)
    return _USED.put(key, used)


class Freed:
    """What a released node keeps of an array argument: its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype


def _release_arg(a):
    if type(a) is _ArrayImpl:  # (the common case first)
        return Freed(a.shape, a.dtype)
    if isinstance(a, tuple):
        return tuple(_release_arg(x) for x in a)
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return Freed(a.shape, a.dtype)
    return a


def _positions(a) -> bool:
    """Whether a node argument is a view chain's positions (`_views.params`): a tuple of
    tuples of ints, which no kernel argument is."""
    return type(a) is tuple and all(type(p) is tuple and all(type(i) is int for i in p) for p in a)


def _aval(a):
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return jax.ShapeDtypeStruct(a.shape, a.dtype)
    return a


def _zeros_like_aval(a):
    if isinstance(a, Freed):
        return jnp.zeros(a.shape, a.dtype)
    if isinstance(a, tuple):
        return tuple(_zeros_like_aval(x) for x in a)
    return a


# ---------------------------------------------------------------------------
# Saved-tensor hooks (`torch.autograd.graph.saved_tensors_hooks`): while a pair is installed,
# each node made packs the arrays its backward reads (what PyTorch's formula would save, as
# `used_args` finds) through `pack_hook`, and unpacks them when the backward runs.

_saved_hooks: list = []  # the installed (pack_hook, unpack_hook) pairs, innermost last
_hooks_disabled: list = []  # messages of open `disable_saved_tensors_hooks` contexts


class _Packed:
    """A saved array as `pack_hook` returned it, with the `unpack_hook` that restores it."""

    __slots__ = ("obj", "unpack")

    def __init__(self, obj, unpack):
        self.obj = obj
        self.unpack = unpack


def _pack_one(a, pack, unpack):
    return _Packed(pack(wrap(a)), unpack)


def _pack_args(fn, mask, args, n_outputs):
    pack, unpack = _saved_hooks[-1]
    used = used_args(fn, mask, args, n_outputs)
    out = []
    for u, a in zip(used, args):
        if not u:  # not saved: only its shape is kept
            out.append(_release_arg(a))
        elif isinstance(a, tuple):
            out.append(tuple(_pack_one(x, pack, unpack) if hasattr(x, "shape") else x for x in a))
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            out.append(_pack_one(a, pack, unpack))
        else:
            out.append(a)
    return tuple(out)


def _unpack_arg(a):
    if isinstance(a, _Packed):
        t = a.unpack(a.obj)
        if not isinstance(t, Tensor):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but "
                f"got result of type {type(t).__name__}"
            )
        return t._array
    if isinstance(a, Freed):
        return jnp.zeros(a.shape, a.dtype)
    if isinstance(a, tuple):
        return tuple(_unpack_arg(x) for x in a)
    return a


class FnNode(Node):
    """A node whose forward was `fn(*args)` on jax values; its backward is `fn`'s VJP.

    `args` are the slot values as the kernel saw them (arrays, Python scalars, None,
    tuples of arrays); `mask` marks the differentiated ones. `_edges` lists PyTorch's
    `next_functions`: an entry per tensor input (per element of a tuple argument), None where
    the input is not differentiated; `epos[i]` is where argument i's first edge sits (by
    default every argument but None has one).
    `saved` lists `(arg position, version list, version, grad_fn)` of every tensor argument;
    `outs` the same for outputs when PyTorch's formula saves the result instead.
    """

    __slots__ = (
        "_fn",
        "_args",
        "_mask",
        "_saved",
        "_outs",
        "n_outputs",
        "_tensor_infos",
        "_epos",
        "_packed",
        "grad_names",
        "grad_order",
        "grad_check",
    )

    def __init__(self, name, fn, args, mask, edges, saved, n_outputs, outs=None, epos=None):
        Node.__init__(self, name, edges)
        self._epos = epos
        self.grad_names = None  # _names.grad_name's override (F.linear's)
        self.grad_order = 0  # n: the node records the n-th backward of a forward op
        self.grad_check = None  # a test of the incoming gradients' values (_grad_checks)
        self._fn = fn
        self._mask = mask
        self._saved = saved
        self._outs = outs
        self.n_outputs = n_outputs
        self._packed = bool(_saved_hooks)
        self._args = _pack_args(fn, mask, args, n_outputs) if self._packed else args

    def apply(self, grads, create_graph):
        if self._saved or self._outs is not None or self._freed:
            self._check_saved()
        if self.grad_check is not None:
            self.grad_check(grads)
        args = self._args
        if self._freed:
            args = _zeros_like_aval(args)  # the backward reads no values (checked above)
        elif self._packed:
            args = tuple(_unpack_arg(a) for a in args)
        b = backward_of(self._fn, self._mask)
        if not create_graph:
            res = b(args, grads)
        else:
            res = _record_backward(self, b, args, grads)
        edges = self._edges
        if len(res) == len(edges):
            return res
        it = iter(res)  # one edge per argument; grads exist for the differentiated ones
        return tuple(None if e is None else next(it) for e in edges)

    def _check_saved(self):
        used = None
        if self._freed:
            used = used_args(self._fn, self._mask, self._args, self.n_outputs)
            # A view's positions are not saved values (PyTorch's SelectBackward keeps its
            # index and backs through a freed graph); a scalar multiplier is one.
            if self._outs is not None or any(
                u and not _positions(a) for u, a in zip(used, self._args)
            ):
                raise RuntimeError(FREED_MESSAGE)
            return
        if self._outs is not None:
            for vc, version, arr in self._outs:
                if vc[0] != version:
                    raise RuntimeError(_modified_message(arr, self, vc[0], version))
            return
        for pos, vc, version, creator in self._saved:
            if vc[0] != version:
                used = used or used_args(self._fn, self._mask, self._args, self.n_outputs)
                if used[pos]:
                    arr = self._args[pos]
                    if isinstance(arr, tuple):
                        arr = arr[0]
                    raise RuntimeError(_modified_message(arr, creator, vc[0], version))

    def release(self):
        if not self._freed:
            self._freed = True
            self._args = tuple(map(_release_arg, self._args))


FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _modified_message(arr, node, now, expected):
    desc = f"[{_dtype.legacy_type_name(arr.dtype)} {list(arr.shape)}]"
    if node is not None:
        name = re.sub(r"Backward[0-9]*$", "", node.name().rpartition("::")[2])
        desc += f", which is output 0 of {name},"
    return (
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {desc} is at version {now}; expected version {expected} "
        "instead. Hint: enable anomaly detection to find the operation that failed to "
        "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
        "check_nan=False)."
    )


# `record_call(name, fn, inputs)`: runs `fn` on the inputs' arrays and records the call on the
# tape, as a kernel call is recorded. The engine, which records calls and runs this module's
# nodes, sets it (`_engine.call_recorded`) when it is imported.
record_call = None


def _record_backward(node, b, args, grads):
    """`create_graph=True`: runs `node`'s backward as a recorded call, so it has a graph too."""
    n = len(args)
    flat = _flat_backward(b, n)
    # An argument the backward does not read (`sum`'s input, a bias) carries no history into
    # it: PyTorch's grad of a linear function does not require grad.
    used = used_args(node._fn, node._mask, args, node.n_outputs)
    linear = node.grad_names is _names.LINEAR_GRAD_NAMES
    # the node-name tables below describe the forward op's own formula (not cross_entropy's,
    # whose node is named after nll_loss but whose gradient is log_softmax's)
    own = node.grad_order == 0 and (node.grad_names is None or linear)
    if own and node.name() in _names.FORMULA_READS_INPUTS:
        used = (True,) * len(args)
    inputs = tuple(_saved_input(node, i, a) if used[i] else a for i, a in enumerate(args)) + tuple(
        grads
    )
    if node.grad_names is _names.NO_HISTORY:
        return record_call(node.name() + "Backward", flat, _history_free(inputs))
    names = _names.grad_names(node.name(), node._mask, node.grad_names)
    if not names:
        return record_call(node.name() + "Backward", flat, inputs)
    # (a recorded backward's own backward is one formula in PyTorch too: relu's second-order
    # gradient keeps the history of the result it masks with)
    deps = (
        _output_deps(flat, inputs, len(names))
        if node.grad_order == 0 and not (own and node.name() in _names.FORMULA_READS_INPUTS)
        else [(True,) * len(inputs)] * len(names)
    )
    if own and node.name() in _names.MASKS_ONLY:
        deps = [tuple(d and i >= n for i, d in enumerate(dep)) for dep in deps]
    # the names of the gradients' own gradients (the second order)
    args_of = [
        i for i, m in enumerate(node._mask) for x in (m if isinstance(m, tuple) else (m,)) if x
    ]
    specs = [_names.grad_grad_names(node.name(), i, linear) if own else None for i in args_of]
    # PyTorch computes each gradient with its own formula: x * y's gradient for x is
    # `grad * y`, which has no path to x, and a division's numerator and denominator
    # gradients end in different ops (a DivBackward0, a MulBackward0). One node per name and
    # set of inputs read, each computing its gradients from those inputs only.
    keys = list(zip(names, deps, specs))
    out = [None] * len(names)
    for key in dict.fromkeys(keys):
        ks = tuple(k for k, kk in enumerate(keys) if kk == key)
        name, dep, spec = key
        reads = tuple(v if d else _history_free(v) for v, d in zip(inputs, dep))
        f = flat if len(ks) == len(names) else _picked(flat, ks)
        res = record_call(name, f, reads)
        for k, g in zip(ks, res):
            out[k] = g
            if g is not None and g.grad_fn is not None and isinstance(g.grad_fn, FnNode):
                g.grad_fn.grad_order = node.grad_order + 1
                g.grad_fn.grad_names = spec
    return tuple(out)


def _history_free(v):
    """An input a gradient does not read, passed as its value so it adds no edge."""
    if isinstance(v, tuple):
        return tuple(_history_free(x) for x in v)
    return v._array if isinstance(v, Tensor) else v


def _output_deps(flat, inputs, n_out) -> list:
    """For each of `flat`'s `n_out` outputs, which of `inputs` (by position) it reads: the
    jaxpr with everything but that output removed. All inputs where it cannot be analysed."""
    # (a Tensor is a pytree node: unwrap it before mapping)
    avals = tuple(
        jax.tree_util.tree_map(
            lambda a: _aval(a._array if isinstance(a, Tensor) else a),
            v,
            is_leaf=lambda a: isinstance(a, Tensor),
        )
        for v in inputs
    )
    key = (
        "deps",
        flat,
        jax.tree_util.tree_structure(avals),
        tuple((a.shape, a.dtype) for a in jax.tree_util.tree_leaves(avals) if hasattr(a, "shape")),
    )
    deps = _USED.get(key)
    if deps is not None:
        return deps
    full = (True,) * len(inputs)
    try:
        from jax._src.interpreters import partial_eval as pe

        arrays = [
            i
            for i, a in enumerate(jax.tree_util.tree_leaves(avals))
            if isinstance(a, jax.ShapeDtypeStruct)
        ]
        leaves, tree = jax.tree_util.tree_flatten(avals)

        def on_arrays(*xs):
            v = list(leaves)
            for i, x in zip(arrays, xs):
                v[i] = x
            return flat(*jax.tree_util.tree_unflatten(tree, v))

        closed = jax.make_jaxpr(on_arrays)(*(leaves[i] for i in arrays))
        outs = closed.jaxpr.outvars
        owner = [sum(1 for _ in jax.tree_util.tree_leaves(a)) for a in avals]
        deps = []
        for k in range(len(outs)):
            _, used = pe.dce_jaxpr(closed.jaxpr, [j == k for j in range(len(outs))])
            by_leaf = [False] * len(leaves)
            for i, u in zip(arrays, used):
                by_leaf[i] = u
            per, at = [], 0
            for c in owner:
                per.append(any(by_leaf[at : at + c]))
                at += c
            deps.append(tuple(per))
        deps = deps if len(deps) == n_out else [full] * n_out
    except Exception:  # noqa: BLE001 - an unanalysable backward reads everything
        deps = [full] * n_out
    return _USED.put(key, deps)


def _picked(f, ks):
    """`f` returning only its outputs at positions `ks` (a tuple)."""
    key = ("pick", f, ks)
    p = _BWD.get(key)
    if p is None:
        p = lambda *v: tuple(f(*v)[k] for k in ks)  # noqa: E731
        p = jax.jit(p) if hasattr(f, "lower") else p
        _BWD.put(key, p)
    return p


def _saved_input(node, i, value):
    """A saved argument as a Tensor carrying its forward-time history (SavedVariable.unpack)."""
    m = node._mask[i]
    if m is True:
        edge = node._edges[_edge_index(node, i)]
        return _tensor_at(value, edge)
    if type(m) is tuple:
        k = _edge_index(node, i)
        out = []
        for x, mm in zip(value, m):
            out.append(_tensor_at(x, node._edges[k]) if mm else x)
            k += 1
        return tuple(out)
    return value


def _edge_index(node, i):
    """Where argument `i`'s first edge sits in `node._edges`."""
    if node._epos is not None:
        return node._epos[i]
    k = 0
    for a in node._args[:i]:
        if isinstance(a, tuple):
            k += len(a)
        elif a is not None:
            k += 1
    return k


def _tensor_at(value, edge):
    t = wrap(value)
    if edge is not None:
        t._rg = True
        t.grad_fn = edge[0]
        if edge[1]:
            t._grad_state = Meta(edge[1])
    return t
