"""`torch.library`: defining operators in Python and registering their kernels.

`custom_op` (or `Library.define` + `impl`) makes `torch.ops.<ns>.<name>`, which runs the
Python implementation: per device type (`register_kernel`), through the registered
autograd formula (`register_autograd`) when an input requires grad, with the fake kernel
(`register_fake`) on the meta device. Under `jtorch.compile` the implementation is traced
like any Python code. What PyTorch's C++ dispatcher adds beyond that (TorchScript, torch
dispatch modes, vmap rules, Triton kernels) is not available and says so.
"""

from __future__ import annotations

from . import _dispatch
from ._dispatch import DEFINED, OpDef, OpOverload, OpOverloadPacket, lookup, ops
from ._schema import FunctionSchema, infer_schema, parse_schema, parse_signature

__all__ = [
    "Library",
    "impl",
    "define",
    "fallthrough_kernel",
    "impl_abstract",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "get_ctx",
    "custom_op",
    "CustomOpDef",
    "infer_schema",
    "register_torch_dispatch",
    "register_vmap",
    "triton_op",
    "wrap_triton",
]

_DEF_NAMESPACES: dict = {}  # namespace -> the DEF Library that owns it

# PyTorch's dispatch keys and device types, as the kernel slots jtorch keeps.
_KEYS = {
    "cpu": ("cpu",),
    "CPU": ("cpu",),
    "cuda": ("cuda",),
    "CUDA": ("cuda",),
    "meta": ("meta",),
    "Meta": ("meta",),
    "": ("default",),
    "default": ("default",),
    "CompositeExplicitAutograd": ("default",),
    "CompositeExplicitAutogradNonFunctional": ("default",),
    "CompositeImplicitAutograd": ("default", "autograd"),
    "Autograd": ("autograd",),
    "AutogradCPU": ("autograd",),
    "AutogradCUDA": ("autograd",),
}


def fallthrough_kernel():
    """Matches `torch.library.fallthrough_kernel`: registered, it makes a key fall through
    (in jtorch, where kernels are per device only, registering it changes nothing)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def _slots(dispatch_key: str) -> tuple:
    slots = _KEYS.get(dispatch_key)
    if slots is None:
        raise ValueError(
            f"jtorch does not run kernels registered for dispatch key "
            f"'{dispatch_key}' (it has cpu, cuda, meta, default and autograd "
            "kernels)"
        )
    return slots


def _forget_cached(qualname: str) -> None:
    """Drops cached packets of `ns::name` so that lookups see its new definition."""
    ns, _, name = qualname.partition("::")
    namespace = ops.__dict__.get(ns)
    if namespace is not None:
        namespace.__dict__.pop(name.split(".")[0], None)


class Library:
    """Matches `torch.library.Library`: `kind` "DEF" owns namespace `ns` (one DEF library
    per namespace), "FRAGMENT" defines more in it, "IMPL" only registers kernels."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        if ns in ("prim",):
            raise ValueError(
                f"{ns} is a reserved namespace. Please try creating a library with another name."
            )
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    "define operators for a single namespace in a distributed way, you can "
                    "use TORCH_LIBRARY_FRAGMENT to explicitly indicate this."
                )
            _DEF_NAMESPACES[ns] = self
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defined: list = []
        self._kernels: list = []  # (OpDef, slot)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Defines `name(args) -> returns` in this library's namespace."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on an IMPL library")
        text = schema if "::" in schema.split("(")[0] else f"{self.ns}::{schema}"
        parsed = parse_schema(text)
        key = parsed.name + (f".{parsed.overload_name}" if parsed.overload_name else "")
        if key in DEFINED:
            raise RuntimeError(
                f"Tried to register an operator ({parsed}) with the same name "
                "and overload name multiple times. Each overload's schema "
                "should only be registered with a single call to def()."
            )
        DEFINED[key] = OpDef(parsed, owner=self)
        self._defined.append(key)
        _forget_cached(key)
        return parsed.name.split("::")[1]

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Registers `fn` as `op_name`'s kernel for `dispatch_key` (or the library's)."""
        if with_keyset:
            raise NotImplementedError(
                "jtorch has no dispatch key sets: with_keyset=True is not supported"
            )
        if fn is fallthrough_kernel:
            return
        if isinstance(op_name, OpOverload):
            op = op_name._op
        else:
            name = op_name if "::" in op_name else f"{self.ns}::{op_name}"
            op = lookup(name)
        for slot in _slots(dispatch_key or self.dispatch_key):
            op.kernels[slot] = fn
            self._kernels.append((op, slot))

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        raise NotImplementedError(
            "jtorch has no dispatcher fallbacks: Library.fallback is not supported"
        )

    def _destroy(self) -> None:
        """Removes what this library defined and registered."""
        for op, slot in self._kernels:
            op.kernels.pop(slot, None)
        for key in self._defined:
            DEFINED.pop(key, None)
            _forget_cached(key)
        if _DEF_NAMESPACES.get(self.ns) is self:
            del _DEF_NAMESPACES[self.ns]
        self._kernels, self._defined = [], []


def _fragment(ns: str) -> Library:
    libs = _FRAGMENTS.get(ns)
    if libs is None:
        libs = _FRAGMENTS[ns] = Library(ns, "FRAGMENT")
    return libs


_FRAGMENTS: dict = {}


def define(qualname, schema=None, *, lib=None, tags=(), alias_analysis: str = ""):
    """Matches `torch.library.define("ns::name", "(args) -> rets")` (and the older
    `define(lib, schema)`)."""
    if isinstance(qualname, Library):
        return qualname.define(schema, alias_analysis, tags=tags)
    ns, sep, name = qualname.partition("::")
    if not sep:
        raise ValueError(
            f"define(qualname, schema): expected qualname to be instance of str, "
            f"got {qualname!r} without a namespace"
        )
    return (lib or _fragment(ns)).define(name + schema, tags=tags)


def _op_of(op) -> OpDef:
    if isinstance(op, CustomOpDef):
        return op._op
    if isinstance(op, OpOverload):
        if op._op is None:
            raise ValueError(
                f"{op} is an ATen operator: jtorch registers kernels only for "
                "operators defined through torch.library"
            )
        return op._op
    if isinstance(op, OpOverloadPacket):
        return op.default._op
    if isinstance(op, str):
        return lookup(op)
    raise ValueError(
        f"Expected an operator name (ns::name), an OpOverload or a custom op, got {op!r}"
    )


def impl(qualname, types, func=None, *, lib=None):
    """Matches `torch.library.impl(qualname, types, func)`: registers `func` for the
    device types or dispatch keys `types` (decorator when `func` is omitted)."""
    if isinstance(qualname, Library):  # the older impl(lib, name, dispatch_key)
        library, name, key = qualname, types, func or ""

        def register(f):
            library.impl(name, f, key)
            return f

        return register
    keys = (types,) if isinstance(types, str) else tuple(types)

    def register(f):
        op = _op_of(qualname)
        for key in keys:
            for slot in _slots(key):
                op.kernels[slot] = f
        return f

    return register if func is None else register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Matches `torch.library.register_kernel`: `func` runs `op` on `device_types`."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    keys = (
        (device_types,)
        if isinstance(device_types, str) or device_types is None
        else (tuple(device_types))
    )

    def register(f):
        target = _op_of(op)
        for key in keys:
            target.kernels[_slots(key or "")[0]] = f
        return f

    return register if func is None else register(func)


def register_fake(
    op, func=None, /, *, lib=None, _stacklevel: int = 1, allow_override: bool = False
):
    """Matches `torch.library.register_fake`: `func` computes `op`'s output metadata (it
    runs on the meta device)."""

    def register(f):
        target = _op_of(op)
        if target.fake is not None and not allow_override:
            raise RuntimeError(
                f"register_fake(...): the operator {target.qualname} already "
                "has an fake impl registered."
            )
        target.fake = f
        return f

    return register if func is None else register(func)


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel: int = 1):
    """The deprecated name of `register_fake`."""
    import warnings

    warnings.warn(
        "torch.library.impl_abstract was renamed to torch.library.register_fake. "
        "Please use that instead; we will remove torch.library.impl_abstract in a "
        "future version of PyTorch.",
        FutureWarning,
        stacklevel=2,
    )
    return register_fake(qualname, func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Matches `torch.library.register_autograd`: `backward(ctx, *grads)` gives a gradient
    per input; `setup_context(ctx, inputs, output)` saves what it needs."""
    target = _op_of(op)
    if target.schema.is_mutable:
        raise RuntimeError(
            f"Cannot register autograd formula for non-functional operator {target.qualname}."
        )
    target.backward, target.setup_context = backward, setup_context


def get_ctx():
    """Matches `torch.library.get_ctx` outside a fake kernel: an error."""
    raise RuntimeError(
        "torch.library.get_ctx() called outside of a fake kernel (jtorch's fake "
        "kernels run on the meta device and have no data-dependent context)"
    )


def _unsupported(what: str):
    def fail(*args, **kwargs):
        raise NotImplementedError(
            f"{what} is not supported by jtorch: it has no C++ "
            "dispatcher (use jtorch.func.vmap over the Python "
            "implementation, or jtorch.compile)"
        )

    fail.__name__ = what.rsplit(".", 1)[-1]
    return fail


register_torch_dispatch = _unsupported("torch.library.register_torch_dispatch")
register_vmap = _unsupported("torch.library.register_vmap")
triton_op = _unsupported("torch.library.triton_op (Triton kernels)")
wrap_triton = _unsupported("torch.library.wrap_triton (Triton kernels)")


class CustomOpDef:
    """Matches `torch._library.custom_ops.CustomOpDef`: what `custom_op` returns; calling it
    calls `torch.ops.<ns>.<name>`."""

    def __init__(self, namespace: str, name: str, schema: FunctionSchema, fn):
        self._namespace, self._name, self._init_fn = namespace, name, fn
        self._qualname = f"{namespace}::{name}"
        old = DEFINED.get(self._qualname)
        if old is not None and not old.custom:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name "
                "and overload name multiple times. Each overload's schema "
                "should only be registered with a single call to def()."
            )
        self._op = OpDef(schema)
        self._op.custom = True
        DEFINED[self._qualname] = self._op  # a new custom_op of a name replaces the old
        _forget_cached(self._qualname)
        self.__name__ = name
        self.__doc__ = getattr(fn, "__doc__", None)

    @property
    def _opoverload(self) -> OpOverload:
        return getattr(getattr(ops, self._namespace), self._name).default

    def __call__(self, *args, **kwargs):
        return _dispatch.call_defined(self._op, args, kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def register_kernel(self, device_types, fn=None, /):
        keys = (
            (device_types,)
            if isinstance(device_types, str) or device_types is None
            else (tuple(device_types))
        )

        def register(f):
            for key in keys:
                self._op.kernels[_slots(key or "")[0]] = f
            return f

        return register if fn is None else register(fn)

    def register_fake(self, fn, /):
        self._op.fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        register_autograd(self, backward, setup_context=setup_context)

    register_torch_dispatch = _unsupported("CustomOpDef.register_torch_dispatch")
    register_vmap = _unsupported("CustomOpDef.register_vmap")

    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        raise NotImplementedError("set_kernel_enabled is not supported by jtorch")


def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Matches `torch.library.custom_op`: makes `fn` the operator `ns::name` (decorator when
    `fn` is omitted). Its schema comes from `schema` or `fn`'s type annotations."""

    def make(f):
        ns, sep, opname = name.partition("::")
        if not sep or not ns or not opname:
            raise ValueError(
                f"Expected there to be a namespace in {name}, i.e. The operator "
                "name should look something like ns::foo"
            )
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        parsed = parse_signature(f"{ns}::{opname}", "", text)
        op = CustomOpDef(ns, opname, parsed, f)
        keys = (
            (device_types,)
            if isinstance(device_types, str) or device_types is None
            else (tuple(device_types))
        )
        for key in keys:
            op._op.kernels[_slots(key or "")[0]] = f
        return op

    return make if fn is None else make(fn)
