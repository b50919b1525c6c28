"""`torch.func.functional_call` and `stack_module_state`.

Written against what a module offers (`named_parameters()`, `named_buffers()`,
submodules as attributes, `_parameters` / `_buffers` dicts where it has them),
so any module-shaped object works, jtorch's `nn.Module` included.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

_MISSING = object()


def _named(module, kind: str) -> dict:
    fn = getattr(module, kind, None)
    if fn is None:
        return {}
    try:
        return dict(fn(remove_duplicate=False))
    except TypeError:
        return dict(fn())


def _owner(module, name: str):
    *path, leaf = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, leaf


def _swap(module, name: str, value):
    """Sets `module.<name>` (a dotted path) to `value`; returns what was there."""
    owner, leaf = _owner(module, name)
    for store in ("_parameters", "_buffers"):
        d = getattr(owner, store, None)
        if isinstance(d, dict) and leaf in d:
            old = d[leaf]
            d[leaf] = value
            return old
    old = getattr(owner, leaf, _MISSING)
    if value is _MISSING:
        delattr(owner, leaf)
    else:
        setattr(owner, leaf, value)
    return old


def _untie(module, values: dict) -> dict:
    """Adds the names tied to a given name (the same tensor in the module) to `values`."""
    tensors = {**_named(module, "named_parameters"), **_named(module, "named_buffers")}
    by_id: dict[int, set] = {}
    for n, t in tensors.items():
        by_id.setdefault(id(t), set()).add(n)
    out = dict(values)
    for name in values:
        t = tensors.get(name)
        if t is None:
            continue
        tied = by_id[id(t)]
        given = [n for n in tied if n in values]
        if len(given) > 1 and len({id(values[n]) for n in given}) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(tied)}, "
                "which are tied. Consider using tie_weights=False"
            )
        for n in tied:
            out[n] = values[name]
    return out


@contextlib.contextmanager
def _reparametrize(module, values: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        values = _untie(module, values)
    if strict:
        known = {**_named(module, "named_parameters"), **_named(module, "named_buffers")}
        unexpected = [k for k in values if k not in known]
        missing = [k for k in known if k not in values]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(msgs)
            )
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            _swap(module, name, old)


def functional_call(
    module,
    parameter_and_buffer_dicts,
    args=None,
    kwargs=None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """Matches `torch.func.functional_call`: calls `module` with its parameters and buffers
    replaced by the given tensors, restoring them afterwards."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        seen, repeated = set(), []
        for d in parameter_and_buffer_dicts:
            for k in d:
                if k in seen and k not in repeated:
                    repeated.append(k)
                seen.add(k)
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of "
                "functional call is ambiguous"
            )
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
            f"of dicts, but got {type(parameter_and_buffer_dicts)}"
        )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """Matches `torch.func.stack_module_state`: `(params, buffers)` stacked over `models`."""
    from .. import stack  # the op namespace is built after this package is imported

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    modes = {getattr(m, "training", None) for m in models}
    if len(modes) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(kind):
        all_named = [dict(getattr(m, kind)()) for m in models]
        out = {}
        for k in all_named[0]:
            ts = [d[k] for d in all_named]
            rg = {t.requires_grad for t in ts}
            if len(rg) > 1:
                raise RuntimeError(f"Expected {k} from each model to have the same .requires_grad")
            s = stack([t.detach() for t in ts])
            out[k] = s.requires_grad_() if rg == {True} else s
        return out

    return stacked("named_parameters"), stacked("named_buffers")
