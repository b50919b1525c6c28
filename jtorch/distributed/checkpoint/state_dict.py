"""`torch.distributed.checkpoint.state_dict`: model and optimizer state dicts keyed by FQN.

A model's state dict uses fully qualified names without wrapper prefixes (DDP's `module.`,
a compiled module's `_orig_mod.`, the checkpoint wrapper's); an optimizer's state dict is keyed
by the FQNs of its parameters instead of their positions, so it survives re-wrapping and
re-sharding. Reading an optimizer's state dict first initialises its state (one step with zero
gradients and zero learning rate) when it has none, as PyTorch does. `full_state_dict` turns
DTensors into full tensors; `flatten_optimizer_state_dict` gives flat
`state.<fqn>.<name>`/`param_groups.<fqn>.<name>` keys.
"""

from __future__ import annotations

import collections
import dataclasses
from itertools import chain

from ..._tensor import Tensor

__all__ = [
    "StateDictOptions",
    "get_model_state_dict",
    "get_optimizer_state_dict",
    "get_state_dict",
    "set_model_state_dict",
    "set_optimizer_state_dict",
    "set_state_dict",
]

_STATE, _PG, _PARAMS = "state", "param_groups", "params"
_WRAPPER_ATOMS = ("_orig_mod", "_checkpoint_wrapped_module", "_fsdp_wrapped_module")


@dataclasses.dataclass
class StateDictOptions:
    """Matches `torch.distributed.checkpoint.state_dict.StateDictOptions`."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _fqn(model, name: str) -> str:
    """`name` without the atoms that wrappers add (DDP's `module`, `_orig_mod`, ...)."""
    from ...nn.parallel import DistributedDataParallel

    out, obj = [], model
    for atom in name.split("."):
        if (
            atom == "module" and isinstance(obj, DistributedDataParallel)
        ) or atom in _WRAPPER_ATOMS:
            obj = getattr(obj, atom, obj)
            continue
        out.append(atom)
        obj = getattr(obj, atom, None) if obj is not None else None
    return ".".join(out)


def _value(v, options: StateDictOptions):
    from ..tensor import DTensor

    if isinstance(v, DTensor) and options.full_state_dict:
        v = v.full_tensor().detach()
    if isinstance(v, Tensor) and options.cpu_offload:
        v = v.cpu()
    return v


def _in_submodules(model, submodules, fqn: str) -> str | None:
    """The key to keep `fqn` under when only `submodules` are asked for (None: drop it)."""
    if not submodules:
        return fqn
    for name, mod in model.named_modules():
        if mod in submodules:
            prefix = _fqn(model, name)
            if prefix and fqn.startswith(prefix + "."):
                return fqn
    return None


def get_model_state_dict(model, *, submodules=None, options: StateDictOptions | None = None):
    """Matches `torch.distributed.checkpoint.state_dict.get_model_state_dict`."""
    options = options or StateDictOptions()
    frozen = {id(p) for p in model.parameters() if not p.requires_grad}
    params = dict(model.named_parameters(remove_duplicate=False))
    out = collections.OrderedDict()
    for key, value in model.state_dict().items():
        if options.ignore_frozen_params and key in params and id(params[key]) in frozen:
            continue
        fqn = _in_submodules(model, submodules, _fqn(model, key))
        if fqn is not None:
            out[fqn] = _value(value, options)
    return out


def _init_optim_state(optim) -> None:
    """One step with zero gradients and zero learning rates, so the state exists (PyTorch's)."""
    from ... import tensor, zeros_like

    if optim.state:
        return
    params = [p for g in optim.param_groups for p in g[_PARAMS]]
    if any(p.grad is not None for p in params):
        return
    for p in params:
        if p.requires_grad:
            p.grad = zeros_like(p)
    lrs = []
    for g in optim.param_groups:
        if "lr" in g:
            lrs.append(g["lr"])
            g["lr"] = tensor(0.0) if isinstance(g["lr"], Tensor) else 0.0
    optim.step(closure=None)
    for g in optim.param_groups:
        if "lr" in g:
            g["lr"] = lrs.pop(0)
    optim.zero_grad(set_to_none=True)


def _fqn_of_param(model) -> dict:
    """{id(param): fqn} over the model's parameters."""
    return {id(p): _fqn(model, name) for name, p in model.named_parameters()}


def _flatten_optim(osd: dict) -> dict:
    def flat(nested: dict, prefix: str, into: dict) -> None:
        for k, v in nested.items():
            key = f"{prefix}.{k}"
            if isinstance(v, dict):
                flat(v, key, into)
            elif isinstance(v, (Tensor, int, float)):
                into[key] = v
            else:
                raise NotImplementedError(
                    "Flattening optimizer state_dict only supports "
                    "tensor, int, float, dict states now. "
                    f"Type is {type(v)}."
                )

    out: dict = {}
    for fqn, state in osd[_STATE].items():
        flat(state, f"{_STATE}.{fqn}", out)
    for group in osd[_PG]:
        group = dict(group)
        for fqn in group.pop(_PARAMS):
            for k, v in group.items():
                out[f"{_PG}.{fqn}.{k}"] = v
    return out


def get_optimizer_state_dict(
    model, optimizers, *, submodules=None, options: StateDictOptions | None = None
) -> dict:
    """Matches `torch.distributed.checkpoint.state_dict.get_optimizer_state_dict`."""
    options = options or StateDictOptions()
    optimizers = tuple(optimizers) if isinstance(optimizers, (list, tuple)) else (optimizers,)
    names = _fqn_of_param(model)
    out: dict = {_STATE: {}, _PG: []}
    for optim in optimizers:
        _init_optim_state(optim)
        osd = optim.state_dict()
        params = list(chain.from_iterable(g[_PARAMS] for g in optim.param_groups))
        pid_fqn = {pid: names[id(p)] for pid, p in enumerate(params) if id(p) in names}
        for pid in list(osd[_STATE]):
            out[_STATE][pid_fqn[pid]] = osd[_STATE].pop(pid)
        for group in osd[_PG]:
            group[_PARAMS] = [pid_fqn[pid] for pid in group[_PARAMS]]
            out[_PG].append(group)
    if options.flatten_optimizer_state_dict:
        out = _flatten_optim(out)
    return _map_values(out, options)


def _map_values(obj, options: StateDictOptions):
    if isinstance(obj, dict):
        return {k: _map_values(v, options) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_map_values(v, options) for v in obj]
    return _value(obj, options)


def get_state_dict(
    model, optimizers, *, submodules=None, options: StateDictOptions | None = None
) -> tuple:
    """Matches `torch.distributed.checkpoint.state_dict.get_state_dict`."""
    return (
        get_model_state_dict(model, submodules=submodules, options=options),
        get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options),
    )


def set_model_state_dict(model, model_state_dict: dict, *, options: StateDictOptions | None = None):
    """Matches `torch.distributed.checkpoint.state_dict.set_model_state_dict`: loads
    FQN-keyed entries (a model's keys with wrapper prefixes are found from their FQNs)."""
    options = options or StateDictOptions()
    keys = {_fqn(model, k): k for k in model.state_dict()}
    renamed = {keys.get(k, k): v for k, v in model_state_dict.items()}
    return model.load_state_dict(renamed, strict=options.strict)


def _unflatten_optim(model, optim, flat: dict) -> dict:
    names = _fqn_of_param(model)
    state, groups = {}, []
    for group in optim.param_groups:
        fqns = [names[id(p)] for p in group[_PARAMS]]
        saved = {_PARAMS: fqns}
        for k in group:
            if k != _PARAMS:
                saved[k] = flat[f"{_PG}.{fqns[0]}.{k}"]
        groups.append(saved)
        for p, fqn in zip(group[_PARAMS], fqns):
            if not p.requires_grad:
                continue
            prefix = f"{_STATE}.{fqn}."
            entry: dict = {}
            for key, v in flat.items():
                if key.startswith(prefix):
                    parts = key[len(prefix) :].split(".")
                    cur = entry
                    for part in parts[:-1]:
                        cur = cur.setdefault(part, {})
                    cur[parts[-1]] = v
            state[fqn] = entry
    return {_STATE: state, _PG: groups}


def set_optimizer_state_dict(
    model, optimizers, optim_state_dict: dict, *, options: StateDictOptions | None = None
) -> None:
    """Matches `torch.distributed.checkpoint.state_dict.set_optimizer_state_dict`."""
    optimizers = tuple(optimizers) if isinstance(optimizers, (list, tuple)) else (optimizers,)
    names = _fqn_of_param(model)
    for optim in optimizers:
        _init_optim_state(optim)
        osd = optim_state_dict
        if osd and _STATE not in osd:
            osd = _unflatten_optim(model, optim, osd)
        params = list(chain.from_iterable(g[_PARAMS] for g in optim.param_groups))
        fqn_pid = {names[id(p)]: pid for pid, p in enumerate(params)}
        state = {fqn_pid[f]: v for f, v in osd.get(_STATE, {}).items() if f in fqn_pid}
        groups = []
        for group in optim.param_groups:
            first = names[id(group[_PARAMS][0])]
            saved = next((g for g in osd.get(_PG, []) if first in g[_PARAMS]), None)
            if saved is None:
                raise RuntimeError(f"The optimizer state_dict has no param group holding {first}")
            saved = dict(saved)
            saved[_PARAMS] = [fqn_pid[names[id(p)]] for p in group[_PARAMS]]
            groups.append(saved)
        optim.load_state_dict({_STATE: state, _PG: groups})


def set_state_dict(
    model,
    optimizers,
    *,
    model_state_dict: dict,
    optim_state_dict: dict,
    options: StateDictOptions | None = None,
):
    """Matches `torch.distributed.checkpoint.state_dict.set_state_dict`."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    if optim_state_dict:
        set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
