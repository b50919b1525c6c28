"""An optimizer's side of `jtorch.compile`'s state protocol (`_tracing.Lifted`, DESIGN 7).

An optimizer's state is its parameters (read, not replaced: the step writes them in place),
its per-parameter state tensors (replaced by the compiled step), the keys and non-tensor
values of that state and its groups' options (which shape the program), and each group's
learning rate, a program input so that a schedule changing it does not trace again.
"""

from __future__ import annotations

from .._tensor import Tensor
from .._tracing import Lifted, hashable


def _state_slot(opt, p, k):
    def get():
        st = opt.state.get(p)
        return None if st is None else st.get(k)

    def set_(v):
        opt.state[p][k] = v

    return get, set_


def optimizer_state(opt, prefix: str) -> Lifted:
    """The state of optimizer `opt`, paths under `prefix`."""
    out = Lifted()
    out.objects.append(opt)
    for gi, group in enumerate(opt.param_groups):
        options = tuple((k, hashable(v)) for k, v in group.items() if k not in ("params", "lr"))
        out.facts.append((f"{prefix}.group{gi}", "options", options))
        out.scalars.append((group, "lr"))
        for pi, p in enumerate(group["params"]):
            out.tensors.append((f"{prefix}.p{gi}.{pi}", p, lambda p=p: p, None, True))
            state = opt.state.get(p)
            keys = sorted(state) if state else []
            path = f"{prefix}.state{gi}.{pi}"
            out.facts.append((path, "keys", tuple(keys)))
            for k in keys:
                v = state[k]
                if isinstance(v, Tensor):
                    out.tensors.append((f"{path}.{k}", v, *_state_slot(opt, p, k), False))
                else:
                    out.facts.append((f"{path}.{k}", "value", hashable(v)))
    return out
