"""The eager tape: recording calls, and running the graph backward.

The registry calls `record` after every differentiable kernel call,
`record_view` after every view op and `inplace_hook` before every in-place
write; nothing else in jtorch knows about autograd. Recording is cheap: one
`FnNode` holding the kernel, the arrays it ran on and the input edges. The
backward engine is a topological walk (by dependency count, newest node first,
as PyTorch's engine orders it) calling each node's cached compiled VJP.

Everything here is plain Python over jax calls, so it runs unchanged while jax
traces (DESIGN 5): forward, `backward()` and an update under `jax.jit` make one
program.
"""

from __future__ import annotations

import traceback

import jax
import jax.numpy as jnp
from jax._src.array import ArrayImpl as _ArrayImpl

from .. import _programs, _tracebacks, _views
from .._ops import _dispatch, _registry
from .._tensor import AutogradMeta, Tensor, meta, wrap
from . import _edges, _fn_node, _fused, _grad_checks, anomaly_mode, grad_mode
from ._edges import AccumulateGrad, accumulate, edge_of, regenerate_view
from ._fn_node import FnNode, ahead_jobs
from ._names import GRAD_NAMES_BY_OP, call_name, index_name, node_name
from ._node import DIFF_DTYPES, Node
from ._traversal import dependencies, schedule

_state = grad_mode._state
_S, _TI = _registry.S, _registry.TI
# Set by jtorch.optim: called after each `backward()` without `inputs=` (optimizers' first
# steps start compiling there, `optim/_first_step.py`). None costs nothing.
after_backward = None


def _grad_enabled() -> bool:
    return getattr(_state, "enabled", True)


# ---------------------------------------------------------------------------
# Recording (the registry's hooks)


def record(op, fn, slot_values, arrays, result):
    """Adds a node for a differentiable call when an input requires grad.

    The node's edges follow PyTorch's `next_functions`: one per tensor input (None where it
    does not require grad), none for scalar multipliers (`S` slots) or integer/bool index and
    mask tensors (`TI` slots), and none for Python numbers except where PyTorch wraps them
    into tensors (`x + 2`).
    """
    if not getattr(_state, "enabled", True):
        return
    kinds = getattr(op, "slot_kinds", None)
    wraps = getattr(op, "wraps_numbers", False)
    mask = None
    edges = []
    epos = []
    saved = []
    for i, v in enumerate(slot_values):
        epos.append(len(edges))
        kind = kinds[i] if kinds is not None else None
        if isinstance(v, Tensor):
            saved.append((i, v._vc, v._vc[0], v.grad_fn))
            if kind is _S:
                continue
            if v._rg:
                if mask is None:
                    mask = [False] * len(slot_values)
                mask[i] = True
                edges.append(edge_of(v))
            elif kind is not _TI or v._array.dtype in DIFF_DTYPES:
                edges.append(None)
        elif type(v) is tuple or type(v) is list:
            m = []
            for x in v:
                if isinstance(x, Tensor):
                    saved.append((i, x._vc, x._vc[0], x.grad_fn))
                    if x._rg:
                        edges.append(edge_of(x))
                        m.append(True)
                        continue
                if kind is not _TI or (isinstance(x, Tensor) and x._array.dtype in DIFF_DTYPES):
                    edges.append(None)
                m.append(False)
            if any(m):
                if mask is None:
                    mask = [False] * len(slot_values)
                mask[i] = tuple(m)
        elif wraps and v is not None and kind is not _S:
            edges.append(None)
    if mask is None:
        return
    if type(result) is Tensor:  # (one output: the common case, without the walk)
        outs = [result]
        if result._array.dtype not in DIFF_DTYPES:
            return
        diff = [0]
    else:
        outs = _flat_outputs(result)
        diff = [
            k for k, o in enumerate(outs) if isinstance(o, Tensor) and o._array.dtype in DIFF_DTYPES
        ]
        if not diff:
            return
    name = call_name(op, slot_values, getattr(fn, "statics", None))
    outs_saved = None
    # (the declaration's `saves_result`: modifying the result invalidates the graph)
    if getattr(op, "saves_result", False):
        outs_saved = [(outs[k]._vc, outs[k]._vc[0], outs[k]._array) for k in diff]
        saved = ()
    node = FnNode(
        name,
        fn,
        arrays,
        tuple(mask),
        tuple(edges),
        tuple(saved),
        len(outs),
        outs_saved,
        tuple(epos),
    )
    node.grad_names = GRAD_NAMES_BY_OP.get(op.name)
    if getattr(op, "grad_check", None) is not None:
        node.grad_check = _grad_checks.check_for(op, [o._array for o in outs])
    for k in diff:
        o = outs[k]
        o._rg = True
        o.grad_fn = node
        if k:
            o._grad_state = AutogradMeta(k)


def _flat_outputs(result) -> list:
    if isinstance(result, Tensor):
        return [result]
    out = []
    for r in result if isinstance(result, (tuple, list)) else ():
        if isinstance(r, (tuple, list)):
            out.extend(_flat_outputs(r))
        else:
            out.append(r)
    return out


def record_view(op, steps, base, views):
    """Gives views made by a differentiable view op their history (a replay of the step)."""
    many = isinstance(views, tuple)
    detached = base._grad_state is not None and base._grad_state.detached
    if not op.differentiable or (detached and not base._rg):
        # detach() (and views of it): storage, not history
        for v in views if many else (views,):
            meta(v).detached = True
        return
    if not base._rg or not getattr(_state, "enabled", True):
        return
    edge = edge_of(base)
    root = base._base if base._base is not None else base
    # A detached tensor that was made to require grad is its views' autograd root, though
    # not their storage root: their history cannot be regenerated from the storage root.
    token = root.grad_fn if root._rg and not detached else None
    name = index_name(steps.idx, base.shape) if op.name == "_basic_index" else node_name(op)
    arr = base._array
    for step, v in zip(steps if many else (steps,), views if many else (views,)):
        if v.dtype.np not in DIFF_DTYPES:  # (reads no view value)
            continue
        # The step's positions are the last argument: a traced input of its compiled
        # replay, so one backward serves every index (no edge of its own).
        if isinstance(step, _views.Strided) and base._chain:
            # as_strided/unfold index the storage, not `base`'s elements: rebuild it first.
            storage = base._storage.value
            node = FnNode(
                name,
                _views.rooted_replay_fn(base._chain, (step,), storage),
                (storage, arr, _views.params(base._chain), (step.params,)),
                (False, True, False, False),
                (edge,),
                (),
                1,
                epos=(0, 0, 1, 1),
            )
        else:
            node = FnNode(
                name,
                _views.replay_fn((step,), arr),
                (arr, (step.params,)),
                (True, False),
                (edge,),
                (),
                1,
                epos=(0, 1),
            )
        v._rg = True
        v.grad_fn = node
        if token is not None:
            meta(v).token = token


def call_recorded(name: str, fn, inputs: tuple):
    """Runs `fn` on the arrays of `inputs` and records it like a kernel call.

    Used where jtorch calls a jax function outside the registry: the backward itself
    under `create_graph=True`.
    """
    arrays = tuple(
        tuple(_unwrap(x) for x in v) if isinstance(v, tuple) else _unwrap(v) for v in inputs
    )
    out = fn(*arrays)
    result = (
        tuple(wrap(o) if o is not None else None for o in out)
        if isinstance(out, (tuple, list))
        else wrap(out)
    )
    record(_NamedOp(name), fn, inputs, arrays, result)
    return result


_fn_node.record_call = call_recorded  # how FnNode records its backward under create_graph


def _unwrap(v):
    return v._array if isinstance(v, Tensor) else v


class _NamedOp:
    def __init__(self, name):
        self.name = name
        self.autograd_name = name


def inplace_hook(target: Tensor, result: Tensor) -> None:
    """Moves the history of an in-place op's result onto the tensor it is written into."""
    if not getattr(_state, "enabled", True):
        return
    if target._rg and target.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    m = target._grad_state
    root = target._base
    if root is not None and not (m is not None and m.detached):
        _inplace_through_view(target, root, result)
        return
    if result._rg:
        node = result.grad_fn
        _bump_saved(node, target, result)
        target._rg = True
        target.grad_fn = node
        if m is not None:
            m.output_nr = result._grad_state.output_nr if result._grad_state else 0
            m.token = None
    elif target._rg:
        target.grad_fn = Node("NotImplemented", ())


def _bump_saved(node, target, result):
    """An in-place op's node holds `self`'s value from before the write (jax arrays do not
    change): like PyTorch's clone of the original self, no write invalidates it. A node that
    saves its result saves what `target` becomes."""
    if not isinstance(node, FnNode):
        return
    after = target._vc[0] + 1
    if node._outs is not None:
        node._outs = [
            (target._vc, after, a) if vc is result._vc else (vc, v, a) for vc, v, a in node._outs
        ]
    elif node._saved:
        node._saved = tuple(e for e in node._saved if not (e[0] == 0 and e[1] is target._vc))


def _inplace_through_view(view: Tensor, root: Tensor, result: Tensor) -> None:
    """A write through a view: the root gets a CopySlices node; the view replays from it."""
    if not (view._rg or result._rg or root._rg):
        return
    if root._rg and root.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    _bump_saved(result.grad_fn, view, result)
    mask = (root._rg, result._rg)
    edges = (edge_of(root) if root._rg else None, edge_of(result) if result._rg else None)
    storage = root._storage.value
    if root._chain:  # a root restrided in place (t_(), set_()): see _views.rooted_*
        copy = FnNode(
            "torch::autograd::CopySlices",
            _views.rooted_writeback_fn(root._chain, view._chain, storage),
            (
                storage,
                root._array,
                result._array,
                _views.params(root._chain),
                _views.params(view._chain),
            ),
            (False,) + mask + (False, False),
            edges,
            (),
            1,
            epos=(0, 0, 1, 2, 2),
        )
    else:
        copy = FnNode(
            "torch::autograd::CopySlices",
            _views.writeback_fn(view._chain, storage),
            (storage, result._array, _views.params(view._chain)),
            mask + (False,),
            edges,
            (),
            1,
            epos=(0, 1, 2),
        )
    root._rg = True
    root.grad_fn = copy
    if root._grad_state is not None:
        root._grad_state.output_nr = 0
    regenerate_view(view)


# ---------------------------------------------------------------------------
# The engine


def execute(
    root_edges,
    root_grads,
    *,
    retain_graph: bool,
    create_graph: bool,
    capture=None,
    accumulate_into=None,
):
    """Runs the graph backward from `root_edges` seeded with `root_grads`.

    Args:
      capture: `{edge: index}`: return the gradient arriving at these edges (autograd.grad),
        without running AccumulateGrad for them.
      accumulate_into: when given, only these AccumulateGrad nodes run (backward(inputs=)).
    Returns the captured gradients by index.
    """
    targets = None
    if capture is not None:
        targets = {e[0] for e in capture}
    if accumulate_into is not None:
        targets = (targets or set()) | set(accumulate_into)
    roots = list(dict.fromkeys(e[0] for e in root_edges))
    needed, deps = dependencies(roots, targets)
    buffers = {}
    for (node, nr), g in zip(root_edges, root_grads):
        if node not in needed:
            continue
        buf = buffers.setdefault(node, [None] * _n_out(node))
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    captured = {}
    grads_mode = grad_mode.set_grad_enabled(create_graph)
    jobs = () if create_graph else ahead_jobs(needed)
    with grads_mode, _programs.ahead(jobs):
        for node in schedule(roots, needed, deps):
            grads = buffers.pop(node, None) or [None] * _n_out(node)
            try:
                out = _run_node(node, grads, create_graph, capture, captured, accumulate_into)
            finally:
                if not retain_graph:
                    node.release()
            for e, g in zip(node._edges, out):
                if e is None or g is None or e[0] not in needed:
                    continue
                child, nr = e
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * _n_out(child)
                if buf[nr] is None:
                    buf[nr] = g
                else:
                    buf[nr] = (
                        _sum(buf[nr], g)
                        if _edges.sparse_grads is None
                        else _edges.sparse_grads.add(buf[nr], g)
                    )
    return captured


def _sum(a, b):
    """Two gradients meeting at a node, added by the `add` op's kernel (not jax's own `+`,
    which compiles each new shape at once): a shape runs on the host, exactly, until its runs
    there have cost about a compile (`_ops/_host.py`), and a compiled one is kept on disk."""
    if type(a) is not _ArrayImpl or type(b) is not _ArrayImpl:
        return a + b
    return (wrap(a) + wrap(b))._array


def _n_out(node) -> int:
    return node.n_outputs


def _as_tensor(g):
    return g if isinstance(g, Tensor) or g is None else wrap(g)


def _as_value(g, create_graph):
    if g is None:
        return None
    if create_graph:
        return g if isinstance(g, Tensor) else wrap(g)
    return g._array if isinstance(g, Tensor) else g


def _run_node(node, grads, create_graph, capture, captured, accumulate_into):
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            for hook in list(hooks.values()):
                if grads[nr] is None:
                    continue
                new = hook(_as_tensor(grads[nr]))
                if new is not None:
                    grads[nr] = _as_value(new, create_graph)
    if node._retains:
        for nr, ref in node._retains.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = _as_tensor(grads[nr])
                t._grad = g if create_graph else wrap(g._array) if t._grad is None else t._grad + g
    if capture is not None:
        for nr in range(len(grads)):
            idx = capture.get((node, nr))
            if idx is not None:
                for i in idx:
                    captured[i] = grads[nr]
    if isinstance(node, AccumulateGrad):
        if capture is not None and accumulate_into is None:
            return ()
        if accumulate_into is not None and node not in accumulate_into:
            return ()
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(_as_tensor(g) for g in grads))
            if new is not None:
                grads = [_as_value(g, create_graph) for g in new]
    if all(g is None for g in grads):
        return (None,) * len(node._edges)
    if _edges.sparse_grads is not None and not isinstance(node, AccumulateGrad):
        grads = _edges.sparse_grads.densify(grads)  # only leaves take sparse gradients
    try:
        out = node.apply(tuple(grads), create_graph)
    except Exception:
        if anomaly_mode._enabled:
            _warn_forward_trace(node)
        raise
    if anomaly_mode._enabled and anomaly_mode._check_nan:
        for i, g in enumerate(out):
            a = g._array if isinstance(g, Tensor) else g
            if a is not None and bool(jnp.any(jnp.isnan(a))):
                _warn_forward_trace(node)
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {i}th output."
                )
    if node._hooks:
        for hook in list(node._hooks.values()):
            new = hook(tuple(_as_tensor(g) for g in out), tuple(_as_tensor(g) for g in grads))
            if new is not None:
                new = (new,) if isinstance(new, Tensor) else tuple(new)
                if len(new) != len(out):
                    raise RuntimeError(
                        f"hook '{getattr(hook, '__name__', hook)}' has returned "
                        f"an incorrect number of values (got {len(new)}, but "
                        f"expected {len(out)})"
                    )
                out = tuple(_as_value(g, create_graph) for g in new)
    return out


def _warn_forward_trace(node) -> None:
    """Anomaly mode's warning: where the forward op of a failing backward node ran."""
    if node._trace is None:
        return
    _tracebacks.warn_at_user_frame(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + "".join(traceback.format_list(node._trace))
    )


# ---------------------------------------------------------------------------
# backward() and grad()


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


_ONES: dict = {}


def _ones(like):
    """The implicit `gradient=ones` seed; arrays are immutable, so one per (shape, dtype,
    placement) is reused across steps (not while tracing: a tracer must not be kept)."""
    if isinstance(like, jax.core.Tracer):
        return jnp.ones(like.shape, like.dtype)
    key = (like.shape, like.dtype, like.sharding)
    arr = _ONES.get(key)
    if arr is None:
        arr = _ONES[key] = jax.device_put(jnp.ones(like.shape, like.dtype), like.sharding)
    return arr


def _root_grads(outputs, grad_outputs, create_graph, is_grads_batched=False):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._rg:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar "
                        "outputs but got " + str(out.dtype)
                    )
            arr = _ones(out._array)
            grads.append(wrap(arr) if create_graph else arr)
            continue
        if not isinstance(g, Tensor):
            g = wrap(jnp.asarray(g, out._array.dtype))
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                f"and output[{i}] has a shape of {out.shape}."
            )
        grads.append(g if create_graph else g._array)
    return grads


# How many backward()/grad() calls have run (jtorch.compile tells training steps by it).
backward_calls = [0]


@_tracebacks.boundary
def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Matches `torch.autograd.backward`."""
    backward_calls[0] += 1
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    inputs = _as_tuple(inputs)
    for i, t in enumerate(tensors):
        if not t._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    grads = _root_grads(tensors, grad_tensors, create_graph)
    edges = [edge_of(t) for t in tensors]
    if not inputs:
        if create_graph or anomaly_mode._enabled or not _fused.run(edges, grads, retain_graph):
            execute(edges, grads, retain_graph=retain_graph, create_graph=create_graph)
        if after_backward is not None:
            after_backward()
        return
    capture, leaves, nonleaves = {}, set(), []
    for i, t in enumerate(inputs):
        if not t._rg:
            # PyTorch calls retain_grad() on each input first, hence its message.
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        e = edge_of(t)
        if isinstance(e[0], AccumulateGrad):
            leaves.add(e[0])
        else:
            capture.setdefault(e, []).append(i)
            nonleaves.append((i, t))
    captured = execute(
        edges,
        grads,
        retain_graph=retain_graph,
        create_graph=create_graph,
        capture=capture or None,
        accumulate_into=leaves,
    )
    for i, t in nonleaves:
        if i in captured and captured[i] is not None:
            accumulate(t, captured[i], create_graph)


@_tracebacks.boundary
def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """Matches `torch.autograd.grad`."""
    backward_calls[0] += 1
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when "
            "materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    single_input = isinstance(inputs, Tensor)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    del single_input
    # a sparse input's history is its values' (jtorch.sparse): differentiate those, and
    # return the gradient in the input's layout
    sparse_inputs = {i: t for i, t in enumerate(inputs) if hasattr(type(t), "_grad_proxy")}
    if sparse_inputs:
        inputs = tuple(
            sparse_inputs[i]._grad_proxy() if i in sparse_inputs else t
            for i, t in enumerate(inputs)
        )
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(grad_outputs)} "
            f"grad_outputs and {len(outputs)} outputs"
        )
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(outputs):
        if not t._rg:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    capture = {}
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        capture.setdefault(edge_of(t), []).append(i)
    grads = _root_grads(outputs, grad_outputs, create_graph)
    edges = [edge_of(t) for t in outputs]
    captured = execute(
        edges, grads, retain_graph=retain_graph, create_graph=create_graph, capture=capture
    )
    result = []
    for i, t in enumerate(inputs):
        g = captured.get(i)
        if g is None:
            if materialize_grads:
                result.append(wrap(jnp.zeros(t._array.shape, t._array.dtype)))
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have "
                    "been used in the graph. Set allow_unused=True if this is "
                    "the desired behavior."
                )
            result.append(None)
            continue
        if not isinstance(g, Tensor):
            g = wrap(g)
        if g._array.dtype != t._array.dtype:
            g = wrap(g._array.astype(t._array.dtype)) if not create_graph else g.to(t.dtype)
        result.append(g if i not in sparse_inputs else sparse_inputs[i]._like(g, None))
    return tuple(result)


def install() -> None:
    """Connects the tape to the op registry."""
    _dispatch.record = record
    _dispatch.grad_enabled = _grad_enabled
    _dispatch.record_view = record_view
    _dispatch.inplace_hook = inplace_hook
