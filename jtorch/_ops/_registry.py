"""The op registry: declaring ops (DESIGN 3).

An op is declared once, as a jax implementation whose signature is torch's::

    @pointwise(promote=DEFAULT, dunder="add")
    def add(input: T, other: T, *, alpha=1):
        return input + alpha * other if alpha != 1 else input + other

Annotations mark the tensor slots: `T` (a tensor or Python scalar that takes
part in type promotion), `TI` (a tensor passed through as it is: indices,
masks, conditions), `TL` (a sequence of tensors that is promoted), `S` (a
Python number the kernel sees traced, weakly typed as jax types Python
scalars: `alpha=`, `value=`; a new value does not compile a new kernel).
Every other parameter is static: part of the compile key, seen by the
implementation as a plain Python value.

From the declaration the registry generates, with the same signature:
`torch.add` (with `out=`), `Tensor.add`, `Tensor.add_`, dunders and
namespace aliases. What an op is (`OpDef`, the slots, the tables) is in
`_opdef`; how a call runs (promotion, compiled kernels, views, in-place and `out=`
writes, and the hooks of autograd, autocast, sparse tensors and profilers) is in
`_dispatch`.
"""

from __future__ import annotations

import functools
import inspect

from .. import _dtype, _tracebacks
from .._tensor import Tensor
from . import _codes, _tensor_likes
from ._dispatch import (  # noqa: F401 (the dispatcher's entry points, used through the registry)
    KERNELS,
    broadcast_error,
    call,
    call_inplace,
    call_out,
    call_view,
    set_profile_hook,
    write_inplace,
    write_out,
)
from ._opdef import (  # noqa: F401 (a declaration's vocabulary: `from ._registry import T, op`)
    _SLOTS,
    ALWAYS_BOOL,
    BOOL_TO_LONG,
    COMPLEX_TO_FLOAT,
    DEFAULT,
    INT_TO_FLOAT,
    METHODS,
    NAMESPACES,
    NONE,
    OPS,
    TI,
    TL,
    OpDef,
    S,
    T,
    _freeze,
    _return_types_repr,
    invoke,
)

# ---------------------------------------------------------------------------
# Declaration and generation


# NumPy's spellings PyTorch's argument parser accepts for two parameters: `x.sum(axis=0)`,
# `torch.prod(x, 1, keepdims=True)`.
_NUMPY_ALIASES = {"dim": "axis", "keepdim": "keepdims"}
_NOARG = object()


def _prelude(name: str, params, python_dtype: bool) -> tuple[list, set, str]:
    """Keyword-only alias parameters, the required parameters an alias makes optional, and
    the lines that read them (and, with `python_dtype`, Python's types as dtypes)."""
    names = {p.name for p in params}
    extra, optional, lines = [], set(), []
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for canonical, alias in _NUMPY_ALIASES.items():
        p = next((p for p in params if p.name == canonical), None)
        if p is None or alias in names or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            later = positional[positional.index(p) + 1 :] if p in positional else []
            if any(q.default is q.empty for q in later):
                continue  # it cannot become optional in a Python signature
            optional.add(canonical)
            lines.append(
                f"if {canonical} is _NOARG:\n            if {alias} is _NOARG: raise "
                f'TypeError("{name}() missing 1 required positional argument: '
                f"'{canonical}'\")\n            {canonical} = {alias}\n        "
                f'elif {alias} is not _NOARG: raise TypeError("{name}() got an '
                f"unexpected keyword argument '{alias}'\")"
            )
        else:
            # Both spellings at once: PyTorch's parser reports the alias as unexpected.
            lines.append(
                f"if {alias} is not _NOARG:\n            if {canonical} is not "
                f'_d{params.index(p)}: raise TypeError("{name}() got an unexpected '
                f"keyword argument '{alias}'\")\n            {canonical} = {alias}"
            )
        extra.append(f"{alias}=_NOARG")
    # dtype=float means torch.float64, as in PyTorch's argument parser
    if python_dtype and "dtype" in names:
        lines.append("dtype = _from_python_type(dtype)")
    return extra, optional, "".join(line + "\n        " for line in lines)


def _gen(name: str, params, body: str, namespace: dict, python_dtype: bool = True):
    """Builds a function with `params`' signature whose body is `body` (fast binding).

    With `python_dtype`, a `dtype` parameter reads Python's `float`, `int`, `bool` and
    `complex` as torch dtypes.
    """
    parts, defaults, star = [], {}, False
    extra, optional, prelude = _prelude(name, params, python_dtype)
    for i, p in enumerate(params):
        s = p.name
        if p.kind == p.VAR_KEYWORD and extra:
            parts += ([] if star else ["*"]) + extra
            star, extra = True, []
        if p.kind == p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.kind == p.VAR_POSITIONAL:
            s = "*" + s
            star = True
        if p.kind == p.VAR_KEYWORD:
            s = "**" + s
        if p.default is not p.empty:
            defaults[f"_d{i}"] = p.default
            s += f"=_d{i}"
        elif p.name in optional:
            s += "=_NOARG"
        parts.append(s)
    if extra:
        parts += ([] if star else ["*"]) + extra
    # An exception leaving the op loses the registry's and jax's frames (_tracebacks), and
    # a bare `raise` adds no frame of its own: the traceback ends at the user's call.
    src = (
        f"def {name}({', '.join(parts)}):\n    try:\n        {prelude}{body}\n"
        f"    except Exception as _e:\n        {_tensor_likes.again_line(name, params)}\n"
        "        _clean(_e)\n        raise\n"
    )
    ns = dict(
        namespace,
        _clean=_tracebacks.clean,
        _again=_tensor_likes.again,
        _NOT_AGAIN=_tensor_likes.NOT_AGAIN,
        _REQUIRED=_tensor_likes.REQUIRED,
        _from_python_type=_dtype.from_python_type,
        _NOARG=_NOARG,
        **defaults,
    )
    exec(_codes.compiled(src, _tracebacks.GENERATED_FILE), ns)
    GENERATED.append(ns[name])
    return ns[name]


# Every generated function: `_ops/_overrides.py` swaps their code for a trampoline that
# honours `__torch_function__` while a mode or Tensor subclass needs it.
GENERATED: list = []


def _arg_tuple(params) -> str:
    names = [p.name for p in params]
    return "(" + "".join(n + ", " for n in names) + ")"


def op(
    impl=None,
    *,
    name=None,
    promote=DEFAULT,
    method=True,
    inplace=False,
    out=True,
    dunder=None,
    rdunder=None,
    aliases=(),
    jit=True,
    returns=None,
    differentiable=True,
    view=False,
    check=None,
    publish=None,
    scalar_opmath=False,
    node=None,
    saves_result=False,
    wraps_numbers=False,
    after=None,
    grad_check=None,
    rows=None,
):
    """Declares an op. See the module docstring.

    Args:
      name: dotted torch name ("add", "linalg.norm", "nn.functional.relu"); defaults to the
        function's name in torch's namespace.
      promote: the promotion kind, or NONE when the implementation handles dtypes.
      method: install as a Tensor method (True, or the method's name).
      inplace: also generate `<name>_`: True means `Tensor.<name>_` (and `torch.<name>_` for
        torch-level ops); a tuple picks the places among "method", "torch", "nn.functional".
        An implementation parameter called `inplace` (as in `F.relu(x, inplace=True)`) makes
        the function itself switch to the in-place form; it is never part of the compile key.
      out: give the function an `out=` keyword.
      dunder / rdunder: Python operator names to install (`"add"` -> `__add__`, `__iadd__`).
      aliases: further dotted names the same function is published under.
      jit: compile per statics (False for data-dependent shapes: nonzero, unique, ...).
      returns: field names of a `torch.return_types` named tuple result.
      view: the implementation returns view `Step`s.
      differentiable: record calls on the autograd tape. The gradient is always `jax.vjp`
        of the implementation; an op whose gradient must differ from what jax derives (a
        PyTorch convention, a stabler formula) wraps its implementation, or the part of it
        concerned, in `jax.custom_vjp` / `jax.custom_jvp` (see `_ops/pointwise_math.py`).
      publish: publish the function under its torch name. By default a name starting with
        `_` is an internal kernel and is not published; PyTorch's own private APIs that
        jtorch provides (`torch._chunk_cat`) pass `publish=True`.
      check: `check(*args, inplace=False, out=None)`, run on the raw arguments before
        dispatch, for errors that depend on a Python scalar's value (which the compiled kernel
        only sees as a tracer), e.g. `int_tensor ** -1`.
      scalar_opmath: a Python number operand of a float16/bfloat16 call reaches the
        implementation in float32, not rounded to the half type (the implementation computes
        in float32: `opmath`), as PyTorch's mul/div kernels read their scalar.
      node: the name of the autograd node a call records (`grad_fn`), where PyTorch's is not
        the op's name in CamelCase + "Backward0" (`linear`: "MmBackward0"); or, where PyTorch
        names it by overload, a function of some of the op's parameters, by name, returning
        it (`node=lambda dim: "SumBackward1" if dim is not None else "SumBackward0"`); see
        `_opdef.NodeRule`. A name that is not a parameter fails at import.
      saves_result: PyTorch's backward formula saves the result rather than the input
        (exp, tanh, softmax...): modifying the result in place invalidates the graph.
      wraps_numbers: PyTorch's Python binding turns a Python number operand into a wrapped
        tensor input, which then has its own `next_functions` entry (`x + 2`); other ops take
        numbers as Scalar arguments, with no edge.
      after: `after(result, args, kwargs)`, run after the published function (and the
        Tensor method) returns, with the caller's arguments: errors that depend on the
        result's values, raised eagerly only (the linear algebra's LAPACK `info` checks,
        `linalg/checks.py`). Returns nothing; raises to fail the call.
      grad_check: `(i, check)`: PyTorch's backward tests the incoming gradients' values when
        output `i` is complex; `check(outputs, grads)` raises as it does (the phase of complex
        singular vectors and eigenvectors, `linalg/checks.py`).
      rows: a `_rows.Rows`: each row of the result depends on that row of some inputs
        alone, so an eager call of a new row count may run padded to a bucket (`_rows`).
    """
    if impl is None:
        return functools.partial(
            op,
            name=name,
            promote=promote,
            method=method,
            inplace=inplace,
            out=out,
            dunder=dunder,
            rdunder=rdunder,
            aliases=aliases,
            jit=jit,
            returns=returns,
            differentiable=differentiable,
            view=view,
            check=check,
            publish=publish,
            scalar_opmath=scalar_opmath,
            node=node,
            saves_result=saves_result,
            wraps_numbers=wraps_numbers,
            after=after,
            grad_check=grad_check,
            rows=rows,
        )
    full = name or impl.__name__
    short = full.rsplit(".", 1)[-1]
    d = OpDef(
        impl,
        short,
        promote,
        jit,
        returns,
        differentiable,
        view,
        check,
        scalar_opmath,
        node=node,
        saves_result=saves_result,
        wraps_numbers=wraps_numbers,
        grad_check=grad_check,
        rows=rows,
    )
    if full in OPS:
        raise RuntimeError(f"op {full} declared twice")
    OPS[full] = d
    params = d.params
    names = [p.name for p in params]
    has_inplace_arg = "inplace" in names
    args = _arg_tuple(params)
    call_args = "(" + "".join(("False" if n == "inplace" else n) + ", " for n in names) + ")"
    env = {
        "_op": d,
        "_call": call_view if view else call,
        "_call_out": call_out,
        "_inplace": call_inplace,
    }
    if has_inplace_arg:
        fn = _gen(short, params, f"return (_inplace if inplace else _call)(_op, {call_args})", env)
    elif out and not view:
        fparams = params + [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)]
        body = f"return _call_out(_op, {args}, out)"
        fn = _gen(short, fparams, body, env)
    else:
        fn = _gen(short, params, f"return _call(_op, {args})", env)
    fn.__doc__ = impl.__doc__ or f"Matches `torch.{full}`."
    fn.__qualname__ = short
    fn.__module__ = "jtorch"
    fn._op = d
    d.fn = fn
    if after is not None:
        fn = _checked_after(fn, after)
    d.inplace_fn = None
    d.published = _is_public(short) if publish is None else publish
    if d.published:
        _publish(full, fn)
    for a in aliases:
        _publish(a, fn)
    plain = out and not view and not has_inplace_arg
    mfn = _gen(short, params, f"return _call(_op, {args})", env) if plain else fn
    if after is not None and plain:
        mfn = _checked_after(mfn, after)
    if method:
        METHODS[method if isinstance(method, str) else short] = mfn
    targets = ()
    if inplace:
        targets = (
            inplace
            if isinstance(inplace, tuple)
            else (("method",) + (("torch",) if "." not in full else ()))
        )
        iparams = [p for p in params if p.name != "inplace"]
        ifn = _gen(short + "_", iparams, f"return _inplace(_op, {call_args})", env)
        ifn.__doc__ = f"In-place `{short}`."
        d.inplace_fn = ifn
        if "method" in targets:
            METHODS[short + "_"] = ifn
        if "torch" in targets:
            NAMESPACES[""][short + "_"] = ifn
        if "nn.functional" in targets:
            NAMESPACES["nn.functional"][short + "_"] = ifn
        if dunder:
            METHODS[f"__i{dunder}__"] = ifn
    # torch-level aliases are methods too where the op is (Tensor.arcsin, Tensor.clip_)
    for a in aliases:
        if "." not in a:
            if method:
                METHODS[a] = mfn
            if d.inplace_fn is not None and "method" in targets:
                METHODS[a + "_"] = d.inplace_fn
            if d.inplace_fn is not None and "torch" in targets:
                NAMESPACES[""][a + "_"] = d.inplace_fn
    if dunder:
        METHODS[f"__{dunder}__"] = mfn
    if rdunder:
        rname = f"__r{rdunder}__"
        names[0], names[1] = names[1], names[0]
        swapped = "(" + "".join(n + ", " for n in names) + ")"
        METHODS[rname] = _gen(rname, params, f"return _call(_op, {swapped})", env)
    return fn


def kernel(
    impl=None,
    *,
    name=None,
    promote=DEFAULT,
    jit=True,
    returns=None,
    differentiable=True,
    node=None,
    saves_result=False,
    rows=None,
):
    """A compiled kernel that composites call: dispatched and recorded like an op, unpublished.

    Returns `run(*args)` taking the implementation's arguments positionally, with
    `run.inplace(*args)` writing the result into the first argument. The arguments are as
    for `op`.
    """
    if impl is None:
        return functools.partial(
            kernel,
            name=name,
            promote=promote,
            jit=jit,
            returns=returns,
            differentiable=differentiable,
            node=node,
            saves_result=saves_result,
            rows=rows,
        )
    d = OpDef(
        impl,
        name or impl.__name__,
        promote,
        jit,
        returns,
        differentiable,
        False,
        node=node,
        saves_result=saves_result,
        rows=rows,
    )

    def run(*args):
        return call(d, args)

    run.inplace = lambda *args: call_inplace(d, args)
    run._op = d
    return run


def _checked_after(fn, after):
    """`fn` (a generated function) running the declaration's `after` check on its result."""

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        result = fn(*args, **kwargs)
        after(result, args, kwargs)
        return result

    return checked


def name_return_type(fn, name: str):
    """Names `fn`'s `torch.return_types` class when PyTorch's name is not the op's short name.

    E.g. `linalg.eigh` returns `torch.return_types.linalg_eigh`, and the private kernel
    behind `max(dim)` returns `torch.return_types.max`.
    """
    nt = fn._op.namedtuple
    nt.__name__ = nt.__qualname__ = name
    return fn


def _is_public(short: str) -> bool:
    """Names starting with one underscore are internal kernels unless declared otherwise."""
    return not short.startswith("_") or short.startswith("__")


def _publish(dotted: str, fn) -> None:
    ns, _, short = dotted.rpartition(".")
    NAMESPACES[ns][short] = fn


def install_methods() -> None:
    """Installs every declared method on `Tensor` (called once, after all families load)."""
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    _name_modules()


def _name_modules() -> None:
    """A generated function found only in a namespace module (`torch.nn.functional.gelu`,
    `torch.linalg.norm`) says that module: pickle finds a function by module and name, and
    a module holding it under any other object (or not at all) cannot be pickled."""
    top = NAMESPACES[""]
    for ns, names in NAMESPACES.items():
        if not ns:
            continue
        for short, fn in names.items():
            if (
                getattr(fn, "__module__", None) == "jtorch"
                and fn.__name__ == short
                and top.get(short) is not fn
            ):
                fn.__module__ = "jtorch." + ns


def _call_list(params) -> str:
    """The argument list passing `params` on, each as it was given."""
    call = []
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            call.append("*" + p.name)
        elif p.kind == p.VAR_KEYWORD:
            call.append("**" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            call.append(f"{p.name}={p.name}")
        else:
            call.append(p.name)
    return ", ".join(call)


def _composite_entry(impl, short: str, python_dtype: bool):
    """The public function of a composite: a generated one with `impl`'s signature that
    calls it, so that its errors leave it as a generated op's do (see `_gen`)."""
    params = list(inspect.signature(impl).parameters.values())
    body = f"return _impl({_call_list(params)})"
    fn = _gen(short, params, body, {"_impl": impl}, python_dtype)
    fn.__doc__ = impl.__doc__
    fn.__qualname__ = short
    fn.__module__ = "jtorch"
    fn.__wrapped__ = impl
    return fn


class KernelCall:
    """What the body of a `composite(inplace=True)` returns: the one kernel call that does its
    work, `kernel(*args)` (`kernel` an op or `kernel()`'s runner; `args` in the order of its
    parameters, keyword-only ones included), the first argument the tensor an in-place
    variant writes."""

    __slots__ = ("kernel", "args")

    def __init__(self, kernel, *args):
        self.kernel = kernel
        self.args = args


def _run_call(c: KernelCall, out):
    op = c.kernel._op
    n = op.n_positional
    result = c.kernel(*c.args[:n], **dict(zip(op.kw_names, c.args[n:])))
    return result if out is None else write_out(result, out)


def _run_call_inplace(c: KernelCall):
    return call_inplace(c.kernel._op, c.args)


def _composite_pair(impl, short: str, out: bool):
    """The function (with `out=` when `out`) and the in-place method `<short>_` of a composite
    whose body returns a `KernelCall`: one body, its checks shared by both."""
    params = list(inspect.signature(impl).parameters.values())
    call = f"_body({_call_list(params)})"
    env = {"_body": impl, "_run": _run_call, "_run_inplace": _run_call_inplace}
    fparams = params
    if out:
        fparams = params + [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)]
    fn = _gen(short, fparams, f"return _run({call}, {'out' if out else 'None'})", env)
    ifn = _gen(short + "_", params, f"return _run_inplace({call})", env)
    fn.__doc__ = impl.__doc__
    ifn.__doc__ = f"In-place `{short}`."
    for f in (fn, ifn):
        f.__qualname__ = f.__name__
        f.__module__ = "jtorch"
    return fn, ifn


def composite(
    impl=None,
    *,
    name=None,
    method=True,
    aliases=(),
    function=True,
    publish=None,
    python_dtype=True,
    inplace=False,
    out=False,
):
    """Declares an op written in terms of other ops, on Tensors (no kernel of its own).

    Like PyTorch's CompositeImplicitAutograd ops: autograd sees the ops it calls.

    Args:
      name, method, aliases, publish: as for `op`.
      function: publish a function (False: a Tensor method only).
      python_dtype: a `dtype` parameter reads Python's types as dtypes (`dtype=float` is
        torch.float64), as PyTorch's argument parser does; False where the parameter named
        `dtype` is something else (`Tensor.type(dtype)` takes a type name or class).
      inplace: also generate `Tensor.<name>_`. The body then checks its arguments and returns
        the `KernelCall` that does the work: the function runs it, the in-place method writes
        its result into the first argument (PyTorch's checked in-place write, `call_inplace`).
      out: with `inplace`, give the function an `out=` keyword.
    """
    if impl is None:
        return functools.partial(
            composite,
            name=name,
            method=method,
            aliases=aliases,
            function=function,
            publish=publish,
            python_dtype=python_dtype,
            inplace=inplace,
            out=out,
        )
    full = name or impl.__name__
    short = full.rsplit(".", 1)[-1]
    if full in OPS:
        raise RuntimeError(f"op {full} declared twice")
    if inplace:
        impl, METHODS[short + "_"] = _composite_pair(impl, short, out)
    else:
        impl = _composite_entry(impl, short, python_dtype)
    OPS[full] = impl
    impl.published = function = function and (_is_public(short) if publish is None else publish)
    if function:
        _publish(full, impl)
    for a in aliases:
        _publish(a, impl)
    if method:
        METHODS[method if isinstance(method, str) else short] = impl
    return impl
