"""`torch.utils.checkpoint`: trade compute for memory by recomputing in backward.

`checkpoint(function, *args)` runs `function` under `no_grad`, so none of its
intermediate results are kept, and records one node (`CheckpointFunctionBackward`)
whose backward re-runs `function` with grad enabled — same RNG state, same autocast
state — and differentiates that recomputation. The node's inputs are the tensor
arguments and every tensor requiring grad that `function` reaches (module parameters,
closure and global tensors, found the way `jtorch.compile` finds them), so parameter
gradients arrive even when no argument requires grad: the semantics of PyTorch's
`use_reentrant=False`, which `use_reentrant=True` also gets here.

The recomputation runs eagerly, op by op; it is not one `jax.checkpoint` program.
"""

from __future__ import annotations

import warnings

from .. import _random
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.function import Function

__all__ = ["checkpoint", "checkpoint_sequential"]


def _reached_tensors(function, args, kwargs) -> list:
    """Tensors requiring grad that `function` can read besides its arguments."""
    from .._compile_state import _discover

    try:
        # `function` itself is a root too: a Module (or object) called directly has no code
        # object for discovery to follow.
        roots = (function, getattr(function, "_checkpoint_roots", ()), args)
        entries = _discover(function, roots, kwargs).entries
    except Exception:  # noqa: BLE001 - discovery is best-effort; arguments still work
        return []
    out, seen = [], set()
    for e in entries:
        try:
            t = e.get()
        except Exception:  # noqa: BLE001
            continue
        if isinstance(t, Tensor) and t.requires_grad and id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _autocast_state():
    from ..amp import autocast_mode as m

    return [(d, m.is_autocast_enabled(d), m.get_autocast_dtype(d)) for d in ("cpu", "cuda")]


class CheckpointFunction(Function):
    """The checkpoint node: inputs are (explicit tensors..., reached tensors...)."""

    @staticmethod
    def forward(ctx, run, n_explicit, preserve_rng, *tensors):
        ctx.run = run
        ctx.n_explicit = n_explicit
        ctx.rng_state = _random.get_rng_state() if preserve_rng else None
        ctx.autocast = _autocast_state()
        ctx.save_for_backward(*tensors)
        with grad_mode.no_grad():
            out = run(tensors[:n_explicit])
        ctx.single = isinstance(out, Tensor)
        outs = (out,) if ctx.single else tuple(out)
        ctx.tensor_out = tuple(isinstance(o, Tensor) for o in outs)
        return out if ctx.single else outs

    @staticmethod
    def backward(ctx, *grad_outputs):
        from ..amp import autocast_mode as amp
        from ..autograd import grad as autograd_grad

        tensors = ctx.saved_tensors
        n = ctx.n_explicit
        # The explicit arguments are replaced by fresh leaves; reached tensors (parameters)
        # are read by `run` itself, so they are differentiated as they are.
        explicit = [
            t.detach().requires_grad_(t.requires_grad) if isinstance(t, Tensor) else t
            for t in tensors[:n]
        ]
        wrt = explicit + list(tensors[n:])
        saved_rng = None
        if ctx.rng_state is not None:
            saved_rng = _random.get_rng_state()
            _random.set_rng_state(ctx.rng_state)
        saved_amp = _autocast_state()
        try:
            for d, enabled, dt in ctx.autocast:
                amp.set_autocast_dtype(d, dt)
                amp.set_autocast_enabled(d, enabled)
            with grad_mode.enable_grad():
                out = ctx.run(tuple(explicit))
        finally:
            for d, enabled, dt in saved_amp:
                amp.set_autocast_enabled(d, enabled)
                amp.set_autocast_dtype(d, dt)
            if saved_rng is not None:
                _random.set_rng_state(saved_rng)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [
            (o, g)
            for o, g in zip(outs, grad_outputs)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        need = [i for i, t in enumerate(wrt) if isinstance(t, Tensor) and t.requires_grad]
        grads = [None] * len(wrt)
        if pairs and need:
            got = autograd_grad(
                [o for o, _ in pairs],
                [wrt[i] for i in need],
                [g for _, g in pairs],
                allow_unused=True,
            )
            for i, g in zip(need, got):
                grads[i] = g
        return (None, None, None) + tuple(grads)


def checkpoint(
    function,
    *args,
    use_reentrant: bool | None = None,
    context_fn=None,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs,
):
    """Matches `torch.utils.checkpoint.checkpoint`: gradients as without it, less memory.

    `function`'s intermediates are not kept; backward recomputes them (see the module
    docstring). `context_fn`, `determinism_check` and `debug` are accepted.
    """
    if use_reentrant is None:
        use_reentrant = True  # PyTorch's default, with the same warning.
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to "
            "preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences "
            "between the two variants.",
            stacklevel=2,
        )
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    explicit = [args[i] for i in positions]
    ids = {id(t) for t in explicit}
    reached = [t for t in _reached_tensors(function, args, kwargs) if id(t) not in ids]
    if not any(t.requires_grad for t in explicit + reached):
        return function(*args, **kwargs)

    def run(tensors):
        call_args = list(args)
        for i, t in zip(positions, tensors):
            call_args[i] = t
        return function(*call_args, **kwargs)

    out = CheckpointFunction.apply(run, len(explicit), preserve_rng_state, *explicit, *reached)
    return out


def checkpoint_sequential(
    functions, segments: int, input, use_reentrant: bool | None = None, **kwargs
):
    """Matches `torch.utils.checkpoint.checkpoint_sequential`: `segments` checkpointed runs.

    The last segment runs normally, as in PyTorch.
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. In version 2.9 we will raise an "
            "exception if use_reentrant is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the "
            "differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    functions = list(functions)
    size = len(functions) // segments

    def run_range(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        # Discovery does not look inside jtorch's own functions: name the layers.
        forward._checkpoint_roots = tuple(functions[start : end + 1])
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run_range(start, end),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=kwargs.get("preserve_rng_state", True),
        )
    return run_range(end + 1, len(functions) - 1)(input)
