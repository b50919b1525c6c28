"""`torch.cond` and `torch.while_loop`: PyTorch's control-flow operators.

Eagerly they are Python `if` and `while`, so autograd sees the branch that ran.
When the predicate is a jax tracer (inside `jtorch.compile` or a `torch.func`
transform) they lower to `jax.lax.cond` / `jax.lax.while_loop`, with the user
functions run on Tensors over the branch's tracers. One exception: a traced
`cond` while autograd is recording evaluates both branches and selects the
result with `where`, so `backward()` reaches every tensor the branches use
(closed-over parameters included). A branch whose unused side has an infinite
derivative then gives NaN gradients, as `where` does in PyTorch.
"""

from __future__ import annotations

import jax

from ._tensor import Tensor, wrap
from .autograd import grad_mode
from .func._pytree import flatten

__all__ = ["cond", "while_loop"]


def _traced(x) -> bool:
    return isinstance(x, Tensor) and isinstance(x._array, jax.core.Tracer)


def _check_operands(name: str, operands) -> tuple:
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(
            f"Expected {name} to be a tuple or list of tensors, but got {type(operands).__name__}."
        )
    return tuple(operands)


def _arrays(tree, what: str) -> tuple:
    leaves, treedef = flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(
                f"Expected {what} to only contain tensors, but got {type(leaf).__name__}"
            )
    return tuple(t._array for t in leaves), treedef


def _lifted(fn, treedef, what: str):
    """`fn` on a pytree of Tensors as a function of flat jax arrays (no tape inside)."""
    out_def = []

    def run(*arrays):
        with grad_mode.no_grad():
            out = fn(*treedef.unflatten([wrap(a) for a in arrays]))
        flat, out_tree = _arrays(out, what)
        out_def.append(out_tree)
        return flat

    return run, out_def


def cond(pred, true_fn, false_fn, operands=()):
    """Matches `torch.cond`: `true_fn(*operands)` if `pred` else `false_fn(*operands)`."""
    from . import where

    if isinstance(pred, Tensor) and pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not isinstance(pred, (Tensor, bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    operands = _check_operands("operands", operands)
    if not _traced(pred):
        return true_fn(*operands) if bool(pred) else false_fn(*operands)
    if grad_mode.is_grad_enabled():
        # Both branches on the tape; `where` routes the gradient to the one selected.
        a, b = true_fn(*operands), false_fn(*operands)
        a_leaves, a_def = flatten(a)
        b_leaves, b_def = flatten(b)
        if a_def != b_def or any(
            x.shape != y.shape or x.dtype != y.dtype for x, y in zip(a_leaves, b_leaves)
        ):
            raise RuntimeError(
                "torch.cond: true_fn and false_fn must return outputs of the same "
                "structure, shapes and dtypes"
            )
        p = pred.reshape(()).bool()
        return a_def.unflatten([where(p, x, y) for x, y in zip(a_leaves, b_leaves)])
    arrays, treedef = _arrays(operands, "operands")
    run_true, true_def = _lifted(true_fn, treedef, "the branch outputs")
    run_false, _ = _lifted(false_fn, treedef, "the branch outputs")
    flat = jax.lax.cond(pred._array.reshape(()).astype(bool), run_true, run_false, *arrays)
    return true_def[0].unflatten([wrap(a) for a in flat])


def while_loop(cond_fn, body_fn, carried_inputs):
    """Matches `torch.while_loop`: `while cond_fn(*carried): carried = body_fn(*carried)`."""
    carried = _check_operands("carried_inputs", carried_inputs)
    traced = any(_traced(x) for x in carried)
    if not traced:
        result = tuple(carried)
        while bool(cond_fn(*carried)):
            # PyTorch returns what the last body call returned (a lone tensor stays one).
            result = body_fn(*carried)
            carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        return result
    if grad_mode.is_grad_enabled() and any(
        isinstance(x, Tensor) and x.requires_grad for x in carried
    ):
        raise RuntimeError(
            "torch.while_loop under jtorch.compile cannot record autograd: "
            "jax.lax.while_loop is not reverse-differentiable"
        )
    arrays, treedef = _arrays(carried, "carried_inputs")

    def test(arrays):
        with grad_mode.no_grad():
            p = cond_fn(*treedef.unflatten([wrap(a) for a in arrays]))
        return (
            (p._array if isinstance(p, Tensor) else jax.numpy.asarray(p)).reshape(()).astype(bool)
        )

    def body(arrays):
        with grad_mode.no_grad():
            out = body_fn(*treedef.unflatten([wrap(a) for a in arrays]))
        out = out if isinstance(out, (tuple, list)) else (out,)
        flat, _ = _arrays(tuple(out), "the body outputs")
        if len(flat) != len(arrays):
            raise RuntimeError(
                f"body_fn should return as many tensors as carried_inputs: got "
                f"{len(flat)}, expected {len(arrays)}"
            )
        # The carry keeps its dtype, as PyTorch requires the body to.
        return tuple(f.astype(a.dtype) for f, a in zip(flat, arrays))

    flat = jax.lax.while_loop(test, body, arrays)
    return treedef.unflatten([wrap(a) for a in flat])
