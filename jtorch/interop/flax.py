"""Flax NNX bridges: an nnx module inside a jtorch model, a jtorch module as an nnx module,
and parameter conversion between jtorch layers and their Flax equivalents.

- `FlaxModule(nnx_module)`: a jtorch `nn.Module` whose parameters are the nnx module's
  `nnx.Param`s (same nesting, joined by "."), its other arrays (BatchNorm statistics)
  buffers. A forward is one jitted call of `nnx.merge` + the module, recorded as one node of
  the eager tape, so the parameters train with jtorch optimizers.
- `to_flax(module)`: an `nnx.Module` holding the jtorch module's parameters and buffers as
  `nnx.Param`s / `nnx.BatchStat`s, whose `__call__` runs the jtorch module as a pure
  function of them (for `nnx.jit`, `nnx.grad`, optax).
- `to_flax_params(module)` / `from_flax_params(module, params)`: a jtorch layer's parameters
  in the layout of the equivalent `flax.nnx` layer (`Linear`: kernel = weight.T; `Conv`:
  kernel = weight moved to (spatial..., in, out); `Embed`: embedding; `LayerNorm` and
  `BatchNorm`: scale/bias, and mean/var for running statistics), and back.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx

from .. import nn
from .._tensor import wrap
from ..autograd import _engine, grad_mode

__all__ = ["FlaxModule", "to_flax", "to_flax_params", "from_flax_params"]


def _leaves(state):
    """`(path, array)` of a State's arrays, in jax's flattening order."""
    out = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
        keys = tuple(
            getattr(k, "key", getattr(k, "idx", None))
            for k in path
            if not (hasattr(k, "name") and k.name == "value")
        )
        out.append((keys, leaf))
    return out


def _value(var):
    return var.get_value() if hasattr(var, "get_value") else var.value


class FlaxModule(nn.Module):
    """A `flax.nnx` module as a jtorch `nn.Module` (see the module docstring)."""

    def __init__(self, module: nnx.Module):
        super().__init__()
        object.__setattr__(self, "_nnx", module)
        _, params, rest = nnx.split(module, nnx.Param, ...)
        self._param_names = []
        for path, value in _leaves(params):
            name = ".".join(str(p) for p in path)
            _owner(self, path).register_parameter(
                str(path[-1]), nn.Parameter(wrap(jnp.asarray(value)))
            )
            self._param_names.append(name)
        self._buffer_names = []
        for path, value in _leaves(rest):
            if not hasattr(value, "dtype") or jax.dtypes.issubdtype(
                value.dtype, jax.dtypes.prng_key
            ):
                continue
            _owner(self, path).register_buffer(str(path[-1]), wrap(jnp.asarray(value)))
            self._buffer_names.append(".".join(str(p) for p in path))
        self._split()

    def _split(self):
        graphdef, params, rest = nnx.split(self._nnx, nnx.Param, ...)
        object.__setattr__(self, "_graphdef", graphdef)
        object.__setattr__(self, "_templates", (params, rest))
        object.__setattr__(self, "_out_tree", [None])
        object.__setattr__(self, "_pure", jax.jit(self._make_pure()))

    def _make_pure(self):
        graphdef = self._graphdef
        params_t, rest_t = self._templates
        p_tree = jax.tree_util.tree_structure(params_t)
        r_leaves, r_tree = jax.tree_util.tree_flatten(rest_t)
        keep = [
            ".".join(map(str, path)) in set(self.__dict__.get("_buffer_names") or [])
            for path, _ in _leaves(rest_t)
        ]
        out_tree = self._out_tree

        def pure(p_values, r_values, *args):
            # Fresh variables inside the trace: nnx refuses to mutate ones made outside.
            it = iter(r_values)
            rest = jax.tree_util.tree_unflatten(
                r_tree, [next(it) if k else leaf for k, leaf in zip(keep, r_leaves)]
            )
            module = nnx.merge(graphdef, jax.tree_util.tree_unflatten(p_tree, p_values), rest)
            out = module(*args)
            leaves, tree = jax.tree_util.tree_flatten(out)
            out_tree[0] = tree
            _, _, new_rest = nnx.split(module, nnx.Param, ...)
            new = jax.tree_util.tree_leaves(new_rest)
            return tuple(leaves) + tuple(v for v, k in zip(new, keep) if k)

        return pure

    def train(self, mode: bool = True):
        super().train(mode)
        self._nnx.train() if mode else self._nnx.eval()
        self._split()
        return self

    def forward(self, *args):
        params = tuple(self.get_parameter(n) for n in self._param_names)
        buffers = tuple(self.get_buffer(n) for n in self._buffer_names)
        outs = _engine.call_recorded("FlaxModuleBackward", self._pure, (params, buffers) + args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        n_out = len(outs) - len(buffers)
        with grad_mode.no_grad():
            for b, new in zip(buffers, outs[n_out:]):
                b._write(new._array)
        return jax.tree_util.tree_unflatten(self._out_tree[0], list(outs[:n_out]))


def _owner(root: nn.Module, path) -> nn.Module:
    mod = root
    for part in path[:-1]:
        part = str(part)
        if part not in mod._modules:
            mod.add_module(part, nn.Module())
        mod = mod._modules[part]
    return mod


class _TorchModule(nnx.Module):
    """An nnx module running a jtorch module as a pure function of its nnx variables."""

    def __init__(self, module):
        self.module = module
        self.params = nnx.Dict(
            {k.replace(".", "__"): nnx.Param(p._array) for k, p in module.named_parameters()}
        )
        self.buffers = nnx.Dict(
            {k.replace(".", "__"): nnx.BatchStat(b._array) for k, b in module.named_buffers()}
        )

    def __call__(self, *args, **kwargs):
        from ..func import functional_call

        state = {
            k.replace("__", "."): wrap(jnp.asarray(_value(v)))
            for k, v in list(self.params.items()) + list(self.buffers.items())
        }
        wrapped = [wrap(a) if hasattr(a, "dtype") else a for a in args]
        out = functional_call(self.module, state, tuple(wrapped), kwargs)
        return jax.tree_util.tree_map(
            lambda t: t._array, out, is_leaf=lambda t: hasattr(t, "_array")
        )


def to_flax(module: nn.Module) -> nnx.Module:
    """A jtorch module as an `nnx.Module` (see the module docstring)."""
    return _TorchModule(module)


# ---------------------------------------------------------------------------
# Layer parameter conversion


def _arr(t):
    return jnp.asarray(t.detach()._array)


def to_flax_params(module: nn.Module) -> dict:
    """A jtorch layer's parameters (and running statistics) in its Flax layer's layout."""
    kind = type(module).__name__
    out = {}
    if kind == "Linear":
        out["kernel"] = _arr(module.weight).T
    elif kind.startswith("Conv") and not kind.startswith("ConvTranspose"):
        w = _arr(module.weight)  # (out, in/groups, *spatial)
        out["kernel"] = jnp.moveaxis(w, (0, 1), (-1, -2))
    elif kind == "Embedding":
        out["embedding"] = _arr(module.weight)
    elif kind in ("LayerNorm", "GroupNorm", "RMSNorm") or kind.startswith("BatchNorm"):
        if getattr(module, "weight", None) is not None:
            out["scale"] = _arr(module.weight)
        if kind.startswith("BatchNorm") and getattr(module, "running_mean", None) is not None:
            out["mean"] = _arr(module.running_mean)
            out["var"] = _arr(module.running_var)
    else:
        raise TypeError(f"no Flax layout known for {kind}")
    if kind != "Embedding" and getattr(module, "bias", None) is not None:
        out["bias"] = _arr(module.bias)
    return out


def from_flax_params(module: nn.Module, params: dict) -> nn.Module:
    """Loads a Flax layer's parameters (as from `to_flax_params`) into a jtorch layer."""
    kind = type(module).__name__
    sd = {}
    get = {
        k: jnp.asarray(
            _value(v)
            if hasattr(v, "get_value") or hasattr(v, "value") and not hasattr(v, "shape")
            else v
        )
        for k, v in params.items()
    }
    if kind == "Linear":
        sd["weight"] = get["kernel"].T
    elif kind.startswith("Conv") and not kind.startswith("ConvTranspose"):
        sd["weight"] = jnp.moveaxis(get["kernel"], (-1, -2), (0, 1))
    elif kind == "Embedding":
        sd["weight"] = get["embedding"]
    elif "scale" in get:
        sd["weight"] = get["scale"]
    if "bias" in get:
        sd["bias"] = get["bias"]
    if "mean" in get:
        sd["running_mean"] = get["mean"]
        sd["running_var"] = get["var"]
    module.load_state_dict({k: wrap(v) for k, v in sd.items()}, strict=False)
    return module
