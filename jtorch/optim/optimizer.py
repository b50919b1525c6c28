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
import inspect
import operator
from collections import OrderedDict, defaultdict
from collections.abc import Iterable

import jax
import jax.numpy as jnp

from .. import _device, _programs, _stored
from .._ops.tensor_queries import typename
from .._tensor import SparseOperand, Tensor, wrap, zero_grads
from ..autograd import _engine, grad_mode
from ..autograd._node import RemovableHandle, _add_hook
from . import _first_step, _lift

__all__ = [
    "Optimizer",
    "required",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]


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
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, "
                        f"new_kwargs), but got {result}."
                    )
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
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got " + typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        if inspect.unwrap(type(self).step) is _DEFAULT_STEP and (
            type(self)._step_group is Optimizer._step_group
        ):
            _first_step.note(self)

    def _patch_step_function(self) -> None:
        """Wraps this class's `step` with the step hooks, once (PyTorch's, run by `__init__`).

        As in PyTorch, the wrapping happens when an instance is initialised: a wrapper class
        that never calls `Optimizer.__init__` (accelerate's `AcceleratedOptimizer`, which
        forwards `step` to the optimizer it holds) keeps its own `step` unwrapped, so hooks
        run once, on the inner optimizer.
        """
        cls = self.__class__
        if not getattr(cls.step, "_hooked", False):
            cls.step = _with_hooks(cls.step)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()

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
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        plist = param_group["params"]
        if plist and isinstance(plist[0], tuple):  # named parameters
            param_group["param_names"] = [n for n, _ in plist]
            plist = param_group["params"] = [p for _, p in plist]
        for param in plist:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required "
                    f"optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        if len({id(p) for p in plist}) != len(plist):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in "
                "future, this will cause an error; see "
                "github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if not seen.isdisjoint(id(p) for p in plist):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def _lifted_state(self, prefix: str):
        """This optimizer's state as `jtorch.compile` lifts it (optim/_lift.py)."""
        return _lift.optimizer_state(self, prefix)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Matches `torch.optim.Optimizer.zero_grad`."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

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
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
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
            # Only floating params cast their state (PyTorch leaves complex params' alone).
            if param.is_floating_point():
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
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        id_map = dict(
            zip(
                itertools_chain(s["params"] for s in saved_groups),
                itertools_chain(g["params"] for g in groups),
            )
        )
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
        _first_step.wait(self)
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        groups = self.param_groups
        plans = self.__dict__.get("_plans", {})
        jobs = []
        if (
            len(groups) > 1
            and type(self)._step_group is Optimizer._step_group
            and any(id(g) not in plans for g in groups)
        ):
            # (a first step: the groups' programs compile side by side)
            jobs = [job for job in map(self._ahead_job, groups) if job is not None]
        with _programs.ahead(jobs):
            for group in groups:
                self._step_group(group)
        return loss

    def _ahead_job(self, group: dict):
        """A job compiling `group`'s step ahead (`_programs.ahead`), or None: none is needed."""
        try:
            found = self._group_plan(group)
            if found is None or not _stored.unmade(found[1].fn):
                return None
            args = self._step_args(group, *found)
        except Exception:  # noqa: BLE001 (the step raises it, where it belongs)
            return None
        return functools.partial(_stored.make_ahead, found[1].fn, *args)

    def _prepare_job(self, group: dict):
        """`(program, job)` making `group`'s first step program for the gradients there are
        now (`_first_step`), or None: none is needed or it cannot be kept. The state a first
        step would create is made aside (to give the program its shapes), not kept."""
        params = [p for p in group["params"] if p.grad is not None]
        if not params or id(group) in self.__dict__.get("_plans", {}):
            return None
        try:
            states = [self.state.get(p) for p in params]
            states = [
                self._initial_state(p, group) if st is None else st for p, st in zip(params, states)
            ]
            keys = _tensor_keys(states)
            fn, _ = _compiled_update(type(self), self._flags(group), keys)
            if type(fn) is not _stored.StoredKernel or not fn.unmade():
                return None  # (a program jtorch does not keep is compiled by `step`)
            tensors = [st[k] for st, ks in zip(states, keys) for k in ks]
            args = self._call_args(group, params, tensors)
        except Exception:  # noqa: BLE001 (the step raises it, where it belongs)
            return None
        return fn, functools.partial(_stored.make_ahead, fn, *args)

    def _group_plan(self, group: dict):
        """`(params with a gradient, the group's step plan)`, the plan made if need be; None
        where no parameter has a gradient."""
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return None
        flags = self._flags(group)
        plans = self.__dict__.setdefault("_plans", {})
        plan = plans.get(id(group))
        if plan is None or not plan.valid(group, params, flags, self.state):
            plan = plans[id(group)] = self._make_plan(group, params, flags)
        return params, plan

    def _step_args(self, group: dict, params: list, plan: _Plan) -> tuple:
        """What the group's compiled step is called with: hyperparameters, then flat arrays."""
        return self._call_args(group, params, plan.tensors)

    def _call_args(self, group: dict, params: list, tensors: list) -> tuple:
        hp = {k: _hyper_value(group[k]) for k in self._hyper}
        grads = [p.grad._array for p in params]
        return (hp, *[p._array for p in params], *grads, *[t._array for t in tensors])

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
    # Complex parameters are updated as `view_as_real` pairs (PyTorch's rule for most
    # optimizers); `_update` then only ever sees real arrays.
    _complex_as_real: bool = False

    def _step_group(self, group: dict) -> None:
        found = self._group_plan(group)
        if found is None:
            return
        params, plan = found
        try:
            outs = plan.fn(*self._step_args(group, params, plan))
        except SparseOperand:  # a sparse gradient (or sparse state): PyTorch's own path
            self._sparse_step(group, params)
            return
        n = len(params)
        with grad_mode.no_grad():
            for p, arr in zip(params, outs[:n]):
                p._write(arr)
            if plan.out_keys[0] == plan.keys:
                for t, arr in zip(plan.tensors, outs[n:]):
                    t._write(arr)
                return
            # The update created state entries (e.g. SGD's first momentum buffer).
            arrays = iter(outs[n:])
            for p, ks in zip(params, plan.out_keys[0]):
                st = self.state[p] if ks else self.state.get(p, {})
                for k in ks:
                    old, arr = st.get(k), next(arrays)
                    if isinstance(old, Tensor):
                        old._write(arr)
                    else:
                        st[k] = wrap(arr)

    # PyTorch's error for a sparse gradient (None: "<class name> does not support sparse
    # gradients").
    _sparse_message: str | None = None

    def _sparse_step(self, group: dict, params: list) -> None:
        """A step of a group with a sparse gradient: optimizers that take them (SGD, Adagrad)
        run PyTorch's per-tensor formula here; the others raise PyTorch's error."""
        raise RuntimeError(
            self._sparse_message or f"{type(self).__name__} does not support sparse gradients"
        )

    def _initial_state(self, p: Tensor, group: dict) -> dict:
        """`_init_state`, its new tensors committed to their device: state updated by the step
        comes back committed, so made so, the step compiles once, not again on its second
        call (see `_device.commit`)."""
        st = self._init_state(p, group)
        for k, v in st.items():
            if isinstance(v, Tensor) and v._base is None:
                arr = _device.commit(v._array)
                if arr is not v._array:
                    st[k] = wrap(arr)
        return st

    def _make_plan(self, group: dict, params: list, flags: tuple) -> _Plan:
        """Initializes missing state and fixes the flat layout of one group's compiled step."""
        states = []
        for p in params:
            # Only parameters with state get an entry (SGD without momentum has none).
            st = self.state.get(p)
            if st is None:
                st = self._initial_state(p, group)
                if st:
                    self.state[p] = st
            states.append(st)
        keys = _tensor_keys(states)
        fn, out_keys = _compiled_update(type(self), flags, keys)
        return _Plan(group, params, flags, [self.state.get(p) for p in params], keys, fn, out_keys)


class _Plan:
    """One group's step layout, reused while its params, state entries and flags are the same.

    Re-deriving it costs a pass over the state dicts; checking it costs identity
    comparisons only, which keeps the per-parameter Python work of a step small.
    """

    __slots__ = ("group", "params", "flags", "states", "sizes", "keys", "tensors", "fn", "out_keys")

    def __init__(self, group, params, flags, states, keys, fn, out_keys):
        self.group, self.params, self.flags, self.states = group, params, flags, states
        self.sizes = [len(st) if st is not None else -1 for st in states]
        self.keys, self.fn, self.out_keys = keys, fn, out_keys
        self.tensors = [st[k] for st, ks in zip(states, keys) for k in ks]

    def valid(self, group, params, flags, state) -> bool:
        if self.group is not group or self.flags != flags or len(params) != len(self.params):
            return False
        if not all(map(operator.is_, params, self.params)):
            return False
        for p, st, size in zip(params, self.states, self.sizes):
            now = state.get(p)
            if now is not st or (len(now) if now is not None else -1) != size:
                return False
        it = iter(self.tensors)
        return all(st[k] is next(it) for st, ks in zip(self.states, self.keys) for k in ks)


_COMPILED: dict = {}


def _tensor_keys(states: list) -> tuple:
    """Per parameter, the keys of its state's tensors (what the compiled step takes)."""
    return tuple(tuple(k for k, v in st.items() if isinstance(v, Tensor)) for st in states)


_DEFAULT_STEP = Optimizer.step
_engine.after_backward = _first_step.after_backward


def _compiled_update(cls, flags, keys):
    """The jitted multi-tensor step of `cls` over flat arrays: params, grads, then state.

    Returns `(fn, out_keys)`; `out_keys[0]` (set when `fn` is first traced) gives
    the state keys of the result, per parameter, in the order of `fn`'s outputs.
    """
    key = (cls, flags, keys)
    entry = _COMPILED.get(key)
    if entry is None:
        update = cls._update
        as_real = cls._complex_as_real
        n = len(keys)
        out_keys = [keys]

        def run(hp, *flat):
            params, grads, rest = flat[:n], flat[n : 2 * n], iter(flat[2 * n :])
            out_p, out_s, new_keys = [], [], []
            for p, g, ks in zip(params, grads, keys):
                st = {k: next(rest) for k in ks}
                if as_real and jnp.iscomplexobj(p):
                    new_p, new_st = update(
                        _as_real(p), _as_real(g), {k: _as_real(v) for k, v in st.items()}, hp, flags
                    )
                    new_p = _as_complex(new_p)
                    new_st = {
                        k: _as_complex(v) if k in st and jnp.iscomplexobj(st[k]) else v
                        for k, v in new_st.items()
                    }
                else:
                    new_p, new_st = update(p, g, st, hp, flags)
                out_p.append(new_p.astype(p.dtype))
                new_keys.append(tuple(new_st))
                out_s.extend(new_st[k] for k in new_st)
            out_keys[0] = tuple(new_keys)
            return (*out_p, *out_s)

        fn = jax.jit(run)
        if cls.__module__.startswith("jtorch."):  # (a user's optimizer may change between runs)
            # kept by jtorch's own key (`_stored`), with the state keys its trace gives
            fn = _stored.program(
                fn, "optimizer", cls.__module__, cls.__qualname__, flags, keys, note=out_keys
            )
        entry = _COMPILED[key] = (fn, out_keys)
    return entry


def _as_real(x):
    """`torch.view_as_real` on a jax array (non-complex arrays pass through)."""
    return jnp.stack([x.real, x.imag], -1) if jnp.iscomplexobj(x) else x


def _as_complex(x):
    return jax.lax.complex(x[..., 0], x[..., 1])


def _hyper_value(v):
    """A group option as `_update` sees it: Tensors (a Tensor `lr`) as float64 arrays."""
    if isinstance(v, Tensor):
        return v._array.astype(jnp.float64)
    if isinstance(v, (tuple, list)):
        return type(v)(_hyper_value(x) for x in v)
    return v


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
