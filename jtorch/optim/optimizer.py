"""`torch.optim.Optimizer`: param groups, state, state dicts, hooks, and the compiled step.

An optimizer subclass writes only its update rule: `_update(p, g, state, hp, flags)`
on jax arrays for one parameter, returning the new parameter and state. The base
class gathers every parameter of a group that has a gradient and runs the rule
for all of them in ONE compiled call (PyTorch's foreach/fused path, by
construction), keyed by the rule's static flags and the group's structure;
numeric hyper-parameters (lr, betas, ...) are traced arguments, so a scheduler
changing `lr` does not recompile. Results are written back in place, bumping
versions as PyTorch's in-place updates do.
"""

from __future__ import annotations

import copy
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Iterable

import jax
import jax.numpy as jnp

from .._misc import typename
from .._tensor import Tensor, wrap
from ..autograd import grad_mode
from ..autograd.graph import RemovableHandle, _add_hook

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks: dict = OrderedDict()
_global_post_hooks: dict = OrderedDict()


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    return _add_hook(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    return _add_hook(_global_post_hooks, hook)


def _with_hooks(step):
    """Runs step pre/post hooks around a subclass's `step`, as PyTorch's decorator does."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in (*_global_pre_hooks.values(), *self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        out = step(self, *args, **kwargs)
        self._optimizer_step_code()
        for hook in (*self._optimizer_step_post_hooks.values(), *_global_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Matches `torch.optim.Optimizer`."""

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = OrderedDict()
        self._optimizer_step_post_hooks: dict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_state_dict_post_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: dict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_hooks(step)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += "\n"
            out += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    def _optimizer_step_code(self) -> None:
        """Where profilers hook in PyTorch; nothing to do here."""

    # -- groups ------------------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Matches `torch.optim.Optimizer.add_param_group`."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {typename(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        plist = param_group["params"]
        if plist and isinstance(plist[0], tuple):      # named parameters
            param_group["param_names"] = [n for n, _ in plist]
            plist = param_group["params"] = [p for _, p in plist]
        for param in plist:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in plist}) != len(plist):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if not seen.isdisjoint(id(p) for p in plist):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Matches `torch.optim.Optimizer.zero_grad`."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # -- state dicts -------------------------------------------------------

    def state_dict(self) -> dict:
        """Matches `torch.optim.Optimizer.state_dict`: params as indices, state by index."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping: dict = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    @staticmethod
    def _process_value(param, value, key=None):
        """A loaded state value on the parameter's device and dtype (`step` stays float32)."""
        if isinstance(value, Tensor):
            if key == "step":
                return value
            if param.is_floating_point() or param.is_complex():
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: Optimizer._process_value(param, v, k) for k, v in value.items()}
        if isinstance(value, Iterable) and not isinstance(value, str):
            return type(value)(Optimizer._process_value(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict: dict) -> None:
        """Matches `torch.optim.Optimizer.load_state_dict`."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(itertools_chain(s["params"] for s in saved_groups),
                          itertools_chain(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._process_value(param, _clone_state(v))
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def register_step_pre_hook(self, hook) -> RemovableHandle:
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        h = _add_hook(self._optimizer_state_dict_pre_hooks, hook)
        if prepend:
            self._optimizer_state_dict_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_state_dict_post_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        h = _add_hook(self._optimizer_state_dict_post_hooks, hook)
        if prepend:
            self._optimizer_state_dict_post_hooks.move_to_end(h.id, last=False)
        return h

    def register_load_state_dict_pre_hook(self, hook, prepend: bool = False):
        h = _add_hook(self._optimizer_load_state_dict_pre_hooks, hook)
        if prepend:
            self._optimizer_load_state_dict_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_load_state_dict_post_hook(self, hook, prepend: bool = False):
        h = _add_hook(self._optimizer_load_state_dict_post_hooks, hook)
        if prepend:
            self._optimizer_load_state_dict_post_hooks.move_to_end(h.id, last=False)
        return h

    # -- the compiled step -------------------------------------------------

    def step(self, closure=None):
        """Matches `torch.optim.Optimizer.step`: one compiled update per param group."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._step_group(group)
        return loss

    # Subclasses define these three.
    def _init_state(self, p: Tensor, group: dict) -> dict:
        """The state of a parameter before its first update (jtorch Tensors)."""
        return {}

    def _flags(self, group: dict) -> tuple:
        """Group options that change the update's program (e.g. amsgrad, nesterov)."""
        return ()

    @staticmethod
    def _update(p, g, state: dict, hp: dict, flags: tuple):
        """One parameter's update on jax arrays: returns (new_p, new_state)."""
        raise NotImplementedError

    # Numeric group options passed to `_update` as traced values (in `hp`).
    _hyper: tuple = ()

    def _step_group(self, group: dict) -> None:
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        for p in params:
            if p.grad.is_sparse:
                raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
        states = []
        for p in params:
            # Only parameters with state get an entry (SGD without momentum has none).
            st = self.state.get(p)
            if st is None:
                st = self._init_state(p, group)
                if st:
                    self.state[p] = st
            states.append(st)
        flags = self._flags(group)
        keys = tuple(tuple(k for k, v in st.items() if isinstance(v, Tensor)) for st in states)
        fn = _compiled_update(type(self), flags, keys)
        hp = {k: group[k] for k in self._hyper}
        new_params, new_states = fn(hp, [p._array for p in params],
                                    [p.grad._array for p in params],
                                    [{k: st[k]._array for k in ks} for st, ks in zip(states, keys)])
        with grad_mode.no_grad():
            for p, arr in zip(params, new_params):
                p._write(arr)
            for p, st, new in zip(params, states, new_states):
                if new and not st:
                    st = self.state[p]
                for k, arr in new.items():
                    old = st.get(k)
                    if isinstance(old, Tensor):
                        old._write(arr)
                    else:
                        st[k] = wrap(arr)


_COMPILED: dict = {}


def _compiled_update(cls, flags, keys):
    key = (cls, flags, keys)
    fn = _COMPILED.get(key)
    if fn is None:
        update = cls._update

        def run(hp, params, grads, states):
            out_p, out_s = [], []
            for p, g, st in zip(params, grads, states):
                new_p, new_st = update(p, g, st, hp, flags)
                out_p.append(new_p.astype(p.dtype))
                out_s.append(new_st)
            return out_p, out_s
        fn = _COMPILED[key] = jax.jit(run)
    return fn


def _clone_state(v):
    if isinstance(v, Tensor):
        return v.clone()
    if isinstance(v, dict):
        return {k: _clone_state(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clone_state(x) for x in v]
    return copy.deepcopy(v)


def itertools_chain(lists):
    for lst in lists:
        yield from lst


def scalar_like(value, like):
    """A Python number as a scalar of `like`'s dtype (PyTorch's scalar-to-opmath cast)."""
    return jnp.asarray(value, like.dtype)


def step_tensor() -> Tensor:
    """PyTorch's `state['step']`: a float32 scalar tensor."""
    return wrap(jnp.zeros((), jnp.float32))
