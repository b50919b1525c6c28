"""A module's side of `jtorch.compile`'s state protocol (`_tracing.Lifted`, DESIGN 7).

A module's state is its parameters, buffers and tensor attributes, each readable and
replaceable on the live submodule, and each submodule's `training` flag, which shapes the
program (dropout, batch norm). `Module._lifted_state` returns it; the compiler reads no
private table of a module.
"""

from __future__ import annotations

from ..._tensor import Tensor
from ..._tracing import Lifted


def _in_table(table: dict, key: str):
    return (lambda: table.get(key)), (lambda v: table.__setitem__(key, v))


def module_state(module, prefix: str) -> Lifted:
    """The state of `module` and its submodules, paths under `prefix`."""
    out = Lifted()
    out.facts.append((prefix, "training", module.training))
    for name, sub in module.named_modules(prefix=prefix, remove_duplicate=True):
        out.objects.append(sub)
        out.facts.append((name, "training", sub.training))
        for table in (sub._parameters, sub._buffers):
            for key, t in table.items():
                if t is not None:
                    out.tensors.append((f"{name}.{key}", t, *_in_table(table, key), True))
        for key, v in list(sub.__dict__.items()):
            if isinstance(v, Tensor):
                out.tensors.append((f"{name}.{key}", v, *_in_table(sub.__dict__, key), True))
    return out
