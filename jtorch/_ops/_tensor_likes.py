"""Tensor-like arguments met before any `__torch_function__` check was on.

jtorch checks a registry function's arguments for `__torch_function__` only while a mode
or a Tensor subclass needs it (`_ops/_overrides.py`). A tensor-like object that is not a
Tensor turns the checks on when a function first meets it: the generated function's
failure path (`again_line`, written into every function by `_registry._gen`) asks whether
such an argument came, and then calls the function again, now through the trampoline
(`again`).
"""

from __future__ import annotations

from .. import _torch_function as _tf

__all__ = ["NOT_AGAIN", "REQUIRED", "again", "again_line"]

NOT_AGAIN = object()  # `again`'s answer where no tensor-like argument came
REQUIRED = object()  # the "default" of a parameter without one, in `again`'s defaults


def again_line(name: str, params) -> str:
    """The generated code that calls the function again once one of its arguments turned
    `__torch_function__` checks on (`again`)."""
    pos, pdef, star, kw, kdef, starstar = [], [], "()", [], [], "{}"
    for i, p in enumerate(params):
        default = f"_d{i}" if p.default is not p.empty else "_REQUIRED"
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            pos.append(p.name)
            pdef.append(default)
        elif p.kind == p.VAR_POSITIONAL:
            star = p.name
        elif p.kind == p.KEYWORD_ONLY:
            kw.append(f"{p.name!r}: {p.name}")
            kdef.append(f"{p.name!r}: {default}")
        else:
            starstar = p.name
    positional = "(" + "".join(n + ", " for n in pos) + ")"
    defaults = "(" + "".join(d + ", " for d in pdef) + ")"
    return (
        f"_r = _again({name}, {tuple(pos)!r}, {positional}, {defaults}, {star}, "
        f"{{{', '.join(kw)}}}, {{{', '.join(kdef)}}}, {starstar})\n"
        "        if _r is not _NOT_AGAIN: return _r"
    )


def again(fn, names, positional, defaults, star, keywords, kw_defaults, starstar):
    """`fn` called again, once one of its arguments (or of a list or tuple among them) turned
    `__torch_function__` checks on: a tensor-like object, not a Tensor, whose type
    overrides it, which nothing looked for until then (`_torch_function.tensor_like_seen`);
    `NOT_AGAIN` where none did. The required arguments go by position, the others that differ
    from their defaults by keyword (the caller's own split is not known here)."""
    values = positional + tuple(star) + tuple(keywords.values()) + tuple(starstar.values())
    if not _tf.tensor_like_seen(values):
        return NOT_AGAIN
    if star:  # (everything before `*args` goes by position)
        args, kwargs = positional + tuple(star), {}
    else:
        n = next((i for i, d in enumerate(defaults) if d is not REQUIRED), len(defaults))
        args, kwargs = positional[:n], {}
        for i, (name, value) in enumerate(zip(names[n:], positional[n:])):
            if value is not defaults[n + i]:
                kwargs[name] = value
    kwargs.update((k, v) for k, v in keywords.items() if v is not kw_defaults[k])
    try:
        return fn(*args, **kwargs, **starstar)
    except Exception as e:  # (raised by the handler: not "during handling of" the first)
        e.__suppress_context__ = True
        raise
