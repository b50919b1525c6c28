"""Whole-graph backward: a repeated `loss.backward()` as one compiled call (DESIGN 6, 13).

A training loop builds the same graph every step: the same kernels, wired the
same way, on arrays of the same shapes. Once a graph's structure (kernels are per
shape, so its shapes too) has come back `_AFTER` times, its whole backward (every
node's VJP, the sums where paths meet, the accumulation into `.grad`) is traced
into one `jax.jit` program keyed by that structure, and compiled in a
background thread: the steps meanwhile run node by node, on the VJPs the first
step compiled, and none of them waits for XLA. Why that late: the program saves the
engine's per-node overhead, tens of microseconds a node and step, and costs several
milliseconds a node to compile (measured on a CPU: a 2-layer transformer's, ~150
nodes, 1.1-1.3 s); like renting before buying, it pays to compile once a loop has run
about as many steps as the compile costs in saved steps, and a script of a few hundred
steps then compiles none (a graph seen once, a new length in a variable-length loop,
costs nothing either). The node-by-node engine
remains the reference and handles everything this path declines: hooks,
retained grads, custom Functions, `create_graph`, `inputs=`, saved tensors
modified in place, freed graphs.

The fused program runs what the engine runs: the same VJPs, in the engine's order
(`_traversal.schedule`), gradients meeting at a node summed in the same order. XLA may
still compile the whole differently from its parts (`_check_bits`), so a program's first
call is compared with the engine's result bit for bit, and a graph whose bits differ stays
with the engine (no XLA option keeps nodes apart inside one program: an optimization
barrier is expanded before fusion on CPU). A kernel
that needs host values in its backward (a value-dependent shape, a Python branch on
a value) cannot be traced into it: tracing such a graph fails, and the graph is
declined for good (`_declined`), whether the failure comes while tracing on the
caller's thread, compiling in the background, or at the first call. Ops keep their
host-dependent part outside the kernel where they can (`masked_select` finds the
selected positions eagerly and gathers them in a kernel), so their graphs fuse.
"""

from __future__ import annotations

import concurrent.futures
import heapq
import itertools
import os

import jax
import numpy as np

from .. import _programs
from .._tensor import wrap
from ._edges import AccumulateGrad
from ._fn_node import FnNode, backward_of
from ._traversal import post_order

# structure (kernels by serial number, `_serial`: a sighting must not keep an evicted kernel
# alive) -> times seen
_seen = _programs.Sightings(limit=1024)
# How many times a graph comes back before its fused backward is compiled (see above);
# JTORCH_FUSED_AFTER moves it.
_AFTER = max(int(os.environ.get("JTORCH_FUSED_AFTER", "256")), 2)
# JTORCH_BACKGROUND_COMPILE=0: compile on the calling thread, waiting for it.
_BACKGROUND = os.environ.get("JTORCH_BACKGROUND_COMPILE", "1") != "0"
_pending: dict = {}  # structure -> (jitted, future of its compiled executable)
_executor = None
# JTORCH_FUSED_EXACT=0: use a fused backward without comparing its first result with the
# engine's (`_check_bits`): faster where XLA rounds the whole graph otherwise (a step of
# Linear+LayerNorm+GELU layers at XLA's default optimization: ~1.3 ms fused, ~2 ms by node).
_EXACT = os.environ.get("JTORCH_FUSED_EXACT", "1") != "0"
# XLA's compile time grows with the program; past this many nodes (a long unrolled loop of
# small ops) one compile costs more than many steps of node-by-node backward save.
_MAX_NODES = 160
# structure -> jitted whole backward (big programs: a small share of the bound)
_compiled = _programs.ProgramCache("fused-backwards", share=1 / 16)
# structures (by serial number, as `_seen`) whose backward cannot be traced as one program:
# the engine's
_declined = _programs.Sightings(limit=1024)
# why the latest structure was declined (for tests and debugging)
last_failure: list = [None]


def _plain(node) -> bool:
    return not (
        node._pre_hooks
        or node._hooks
        or node._tensor_pre_hooks
        or node._retains
        or node._freed
        or getattr(node, "_packed", False)
        or getattr(node, "grad_check", None) is not None  # reads gradient values: the engine's
    )


def run(root_edges, root_grads, retain_graph: bool) -> bool:
    """Runs the backward fused if the graph qualifies; False means "use the engine".

    One walk over the graph gives its structure; the engine's order (`_traversal.schedule`)
    follows from the structure and the nodes' creation order, so the key holds the
    latter as ranks and the order is worked out only when a program is traced.
    """
    roots = list(dict.fromkeys(e[0] for e in root_edges))
    post = post_order(roots)
    if len(post) > _MAX_NODES:
        return False
    index = {n: i for i, n in enumerate(post)}
    spec, args, leaves, old_grads = [], [], [], []
    for n in post:
        if type(n) is FnNode:
            if not _plain(n):
                return False
            for _, vc, version, _ in n._saved or ():
                if vc[0] != version:
                    return False
            for vc, version, _ in n._outs or ():
                if vc[0] != version:
                    return False
            spec.append(
                (
                    n._fn,
                    n._mask,
                    n.n_outputs,
                    tuple(None if e is None else (index[e[0]], e[1]) for e in n._edges),
                )
            )
            args.append(n._args)
        elif type(n) is AccumulateGrad:
            leaf = n._leaf()
            m = leaf._grad_state if leaf is not None else None
            if leaf is None or not _plain(n) or (m is not None and m.post_hooks):
                return False
            g = leaf._grad
            if g is not None and (g._rg or g.is_sparse):
                return False  # (a sparse gradient accumulates through the engine)
            spec.append(("acc", leaf._array.dtype, g is None))
            leaves.append(leaf)
            old_grads.append(None if g is None else g._array)
        else:
            return False
    seqs = [n._seq for n in post]
    ranks = tuple(sorted(range(len(post)), key=seqs.__getitem__))
    key = (tuple(spec), (ranks, tuple((index[n], nr) for n, nr in root_edges)))
    call_args = (tuple(args), tuple(old_grads), tuple(root_grads))
    fn = _compiled.get(key)
    fresh = fn is None
    if fn is None:
        fn = _program(key, call_args)
        if fn is None:
            return False
    try:
        new = fn(*call_args)
        if fresh and _EXACT and not _programs.tracing():
            _check_bits(new, _whole_backward(*key)(*call_args))
    except Exception as e:  # noqa: BLE001 - nothing is written yet: the engine runs instead
        _decline(key, e)
        return False
    for leaf, g in zip(leaves, new):
        if g is None:
            continue
        if leaf._grad is None:
            leaf._grad = wrap(g)
        else:
            leaf._grad._write(g)
    if not retain_graph:
        for n in post:
            n.release()
    return True


def _program(key, call_args):
    """The fused backward of `key` once it is ready, else None (and its compile started when
    the graph comes back)."""
    pending = _pending.get(key)
    if pending is not None:
        jitted, future = pending
        if not future.done():
            return None
        del _pending[key]
        try:
            return _compiled.put(key, _Fused(jitted, future.result()))
        except Exception as e:  # noqa: BLE001 - XLA's compile failed: the engine runs
            _decline(key, e)
            return None
    by_id = _by_id(key)
    if by_id in _declined:
        return None
    if _seen.note(by_id) < _AFTER:
        return None
    jitted = jax.jit(_whole_backward(*key))
    if _programs.tracing():  # (under a trace nothing compiles now; `run` catches)
        return _compiled.put(key, jitted)
    try:
        # Tracing and lowering here (they read jtorch's caches): a backward that needs host
        # values fails now, on the caller's thread, and the graph stays with the engine.
        lowered = jitted.lower(*call_args)
    except Exception as e:  # noqa: BLE001
        _decline(key, e)
        return None
    if not _BACKGROUND:
        try:
            return _compiled.put(key, _Fused(jitted, lowered.compile()))
        except Exception as e:  # noqa: BLE001
            _decline(key, e)
            return None
    global _executor
    if _executor is None:
        _executor = concurrent.futures.ThreadPoolExecutor(1, "jtorch-compile")
    _pending[key] = (jitted, _executor.submit(lowered.compile))
    return None


class FusedDiffers(Exception):
    """The fused program's gradients are not the node-by-node engine's, bit for bit."""


def _check_bits(fused, reference) -> None:
    """Raises FusedDiffers unless `fused` equals `reference` bit for bit.

    XLA compiles one program differently from its parts: it fuses a node's last sum into
    the next node's matrix-vector product and reduces in another order there, contracts a
    product from one node and a sum from the next into one multiply-add, reassociates
    constants. Mostly the bits agree; where they do not, the graph stays with the engine.
    The reference is the traced body run eagerly: every node's VJP is then the engine's
    own compiled program, and the sums where paths meet are the engine's separate adds.
    Checked once per structure, on the data of the program's first call.
    """
    for f, r in zip(fused, reference):
        if f is None and r is None:
            continue
        f, r = np.asarray(f), np.asarray(r)
        if f.dtype != r.dtype or f.shape != r.shape or f.tobytes() != r.tobytes():
            raise FusedDiffers(
                "the fused backward's gradients differ from the node-by-node engine's in "
                "their last bits (XLA compiled the graph as a whole differently from its "
                "nodes)"
            )


def _decline(key, error: Exception) -> None:
    """Keeps `key`'s graphs on the engine from now on."""
    _compiled.pop(key)
    _declined.note(_by_id(key))
    last_failure[0] = f"{type(error).__name__}: {error}"  # (not the error: its frames)


def _by_id(key):
    spec, roots = key
    return tuple(s if s[0] == "acc" else (_serial(s[0]),) + s[1:] for s in spec), roots


_serials = itertools.count()


def _serial(fn) -> int:
    """A number for `fn` that no other function gets, as long as the process runs.

    Not `id(fn)`: an evicted kernel's id is reused by a later object, and a graph of other
    kernels would then inherit its sightings, or its decline.
    """
    try:
        return fn._jtorch_serial
    except AttributeError:
        pass
    n = next(_serials)
    try:
        fn._jtorch_serial = n
    except (AttributeError, TypeError):  # (takes no attributes: its id, as before)
        return id(fn)
    return n


class _Fused:
    """A fused backward compiled ahead of time, falling back to its `jax.jit` for arguments
    the executable was not compiled for (another dtype, or a trace)."""

    __slots__ = ("jitted", "compiled")

    def __init__(self, jitted, compiled):
        self.jitted = jitted
        self.compiled = compiled

    def __call__(self, *args):
        try:
            return self.compiled(*args)
        except TypeError:
            return self.jitted(*args)


def _schedule(spec, ranks, root_edges) -> list:
    """`_traversal.schedule` on a key's structure: node positions in the order the engine runs
    them (a node once every node feeding it has, the most recently created first)."""
    newer = [0] * len(spec)
    for r, i in enumerate(ranks):
        newer[i] = r
    deps = [0] * len(spec)
    for s in spec:
        if s[0] != "acc":
            for e in s[3]:
                if e is not None:
                    deps[e[0]] += 1
    ready = [(-newer[i], i) for i in dict.fromkeys(i for i, _ in root_edges) if not deps[i]]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)[1]
        order.append(i)
        if spec[i][0] == "acc":
            continue
        for e in spec[i][3]:
            if e is not None:
                deps[e[0]] -= 1
                if not deps[e[0]]:
                    heapq.heappush(ready, (-newer[e[0]], e[0]))
    return order


def _whole_backward(spec, roots):
    """The traced body: the engine's walk with every node's VJP inlined.

    `spec` lists the nodes in the walk's order (`post_order`), with the arguments of the
    function nodes and the old gradients of the leaves in that order too.
    """
    ranks, root_edges = roots
    order = _schedule(spec, ranks, root_edges)
    arg_of, leaf_of = {}, {}
    for i, s in enumerate(spec):
        table = leaf_of if s[0] == "acc" else arg_of
        table[i] = len(table)

    def body(args, old_grads, root_grads):
        buffers = [None] * len(spec)
        for i, s in enumerate(spec):
            buffers[i] = [None] * (s[2] if s[0] != "acc" else 1)
        for (i, nr), g in zip(root_edges, root_grads):
            buffers[i][nr] = g if buffers[i][nr] is None else buffers[i][nr] + g
        out = [None] * len(leaf_of)
        for i in order:
            s = spec[i]
            grads = buffers[i]
            if s[0] == "acc":
                k = leaf_of[i]
                g = grads[0]
                old = old_grads[k]
                if g is not None:
                    g = g.astype(s[1])
                    g = g if old is None else old + g
                out[k] = g
                continue
            fn, mask, _, edges = s
            node_args = args[arg_of[i]]
            if all(g is None for g in grads):
                continue
            res = backward_of(fn, mask)(node_args, tuple(grads))
            it = iter(res)
            for e in edges:
                if e is None and len(res) != len(edges):
                    continue
                g = next(it)
                if e is None or g is None:
                    continue
                j, nr = e
                buf = buffers[j]
                buf[nr] = g if buf[nr] is None else buf[nr] + g
        return tuple(out)

    return body
