"""A module as a pure jax function of its parameters and buffers."""

from __future__ import annotations

from .._tensor import Tensor, wrap


def _state(module) -> dict:
    out = {name: p._array for name, p in module.named_parameters(remove_duplicate=False)}
    out.update({name: b._array for name, b in module.named_buffers(remove_duplicate=False)})
    return out


def _to_arrays(out):
    if isinstance(out, Tensor):
        return out._array
    if isinstance(out, (tuple, list)):
        return type(out)(_to_arrays(o) for o in out)
    if isinstance(out, dict):
        return {k: _to_arrays(v) for k, v in out.items()}
    return out


def _to_tensors(x):
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, Tensor):
        return wrap(x)
    if isinstance(x, (tuple, list)):
        return type(x)(_to_tensors(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_tensors(v) for k, v in x.items()}
    return x


def functional(module):
    """`(params, apply)`: the module's parameters and buffers as a dict of jax arrays, and
    `apply(params, *args, **kwargs)`, a pure function of jax arrays (no tape, no mutation of
    `module`), for `jax.jit`, `jax.grad`, `jax.vmap`.

    Buffers a forward updates in place (BatchNorm's running stats in train mode) are not
    returned; put the module in eval mode for a pure function of them.
    """
    from ..autograd import grad_mode
    from ..func import functional_call

    def apply(params, *args, **kwargs):
        state = {k: wrap(v) for k, v in params.items()}
        with grad_mode.no_grad():
            out = functional_call(module, state, _to_tensors(args), _to_tensors(kwargs))
        return _to_arrays(out)

    return _state(module), apply


def jax_function(module):
    """`apply(params, *args)` of `functional(module)`; `apply.params` holds the current
    parameters and buffers."""
    params, apply = functional(module)
    apply.params = params
    return apply
