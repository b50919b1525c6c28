"""`torch.ops`: operator namespaces, packets and overloads, and the custom-op dispatcher.

`torch.ops.<ns>.<op>` is an `OpOverloadPacket`; `.default` (or another overload name) an
`OpOverload`. Operators defined through `torch.library` run their Python kernels: by the
device of their tensor arguments ("cpu", "cuda", "meta", or a default kernel), through
their registered autograd formula when an input requires grad, with the fake kernel on the
meta device. `torch.ops.aten.<op>` names PyTorch's ATen operators; each resolves to the
jtorch function of the same name (`torch.add`, `Tensor.view`, `F.gelu`) or, for the few
ATen-only ones (`slice`, `_to_copy`, `sym_size`...), to its definition below. jtorch keeps
no per-overload ATen schemas, so every overload name of an ATen packet calls that function.
"""

from __future__ import annotations

import re

from .._tensor import Tensor
from ..autograd import grad_mode
from ._schema import FunctionSchema

__all__ = ["OpOverload", "OpOverloadPacket", "ops", "OpDef", "DEFINED", "lookup"]


class OpDef:
    """One operator defined through `torch.library`: schema, kernels, fake, autograd."""

    def __init__(self, schema: FunctionSchema, owner=None):
        self.schema = schema
        self.kernels: dict = {}  # "cpu" / "cuda" / "meta" / "default" / "autograd"
        self.fake = None
        self.backward = None
        self.setup_context = None
        self.custom = False  # a `custom_op`: outputs may not alias inputs
        self.owner = owner
        self._function = None

    @property
    def qualname(self) -> str:
        return self.schema.name

    def overload_label(self) -> str:
        ns, _, name = self.qualname.partition("::")
        return f"{ns}.{name}.{self.schema.overload_name or 'default'}"


DEFINED: dict = {}  # "ns::name" or "ns::name.overload" -> OpDef


def lookup(qualname: str) -> OpDef:
    """The defined op `ns::name[.overload]`, or a RuntimeError naming it."""
    op = DEFINED.get(qualname)
    if op is None:
        raise RuntimeError(
            f"Operator '{qualname}' does not exist (define it with "
            "torch.library.define or torch.library.custom_op first)"
        )
    return op


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _bind(op: OpDef, args: tuple, kwargs: dict) -> list:
    """The call's arguments in schema order, defaults filled in."""
    schema = op.schema
    positional = [a for a in schema.arguments if not a.kwarg_only]
    name = schema.name
    if len(args) > len(positional):
        raise RuntimeError(
            f"{name}() expected at most {len(positional)} argument(s) but "
            f"received {len(args)} argument(s). Declaration: {schema}"
        )
    names = {a.name for a in schema.arguments}
    for k in kwargs:
        if k not in names:
            raise RuntimeError(
                f"Unknown keyword argument '{k}' for operator '{name}'. Schema: {schema}"
            )
    values = []
    for i, a in enumerate(schema.arguments):
        if i < len(args) and not a.kwarg_only:
            values.append(args[i])
        elif a.name in kwargs:
            values.append(kwargs[a.name])
        elif a.has_default_value:
            values.append(a.default_value)
        else:
            raise RuntimeError(
                f"{name}() is missing value for argument '{a.name}'. Declaration: {schema}"
            )
    return values


def _as_call(op: OpDef, values: list):
    args = [v for a, v in zip(op.schema.arguments, values) if not a.kwarg_only]
    kwargs = {a.name: v for a, v in zip(op.schema.arguments, values) if a.kwarg_only}
    return args, kwargs


_BACKEND = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}


def _run_kernel(op: OpDef, values: list):
    tensors = list(_tensors(values))
    device = tensors[0].device.type if tensors else "cpu"
    kernel = op.kernels.get(device)
    if kernel is None and device == "meta" and op.fake is not None:
        kernel = op.fake
    if kernel is None:
        kernel = op.kernels.get("default")
    if kernel is None:
        have = sorted(_BACKEND.get(k, k) for k in op.kernels) + (["Meta"] if op.fake else [])
        raise NotImplementedError(
            f"Could not run '{op.qualname}' with arguments from the "
            f"'{_BACKEND.get(device, device)}' backend. This could be because the operator "
            f"doesn't exist for this backend. '{op.qualname}' is only available for these "
            f"backends: [{', '.join(have)}]."
        )
    args, kwargs = _as_call(op, values)
    out = kernel(*args, **kwargs)
    if op.custom:
        inputs = {id(t) for t in tensors}
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if any(id(o) in inputs for o in _tensors(outs)):
            raise RuntimeError(
                f"{op.qualname.split('::')[1]} (with implementation in "
                f"{getattr(kernel, '__module__', None)}): The output of this custom operator "
                "(1) must not also be an input to this custom operator and (2) may not alias "
                "any inputs to this custom operator or other returns. The most common way to "
                "trigger this error is if we have y = custom_op(x) and y and x are the same "
                "Tensor. Please instead return a clone of the offending output tensor(s) "
                "(e.g. return x.clone()) or refactor the custom operator to not return y."
            )
    return out


def _autograd_function(op: OpDef):
    """The autograd.Function a defined op runs through when an input requires grad."""
    if op._function is not None:
        return op._function
    from ..autograd.function import Function

    label = op.overload_label()

    def forward(*values):
        return _run_kernel(op, list(values))

    def setup_context(ctx, inputs, output):
        if op.setup_context is not None:
            op.setup_context(ctx, inputs, output)

    def backward(ctx, *grads):
        if op.backward is None:
            raise RuntimeError(
                f"Trying to backward through {label} but no autograd formula "
                "was registered. Please use register_autograd to add one."
            )
        out = op.backward(ctx, *grads)
        return out if isinstance(out, tuple) else (out,)

    name = "GeneratedBackwardFor_" + label.replace(".", "_")
    op._function = type(
        name,
        (Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
            "__module__": "torch.autograd.function",
        },
    )
    return op._function


def call_defined(op: OpDef, args: tuple, kwargs: dict):
    """Calls a `torch.library` operator."""
    values = _bind(op, args, kwargs)
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in _tensors(values)):
        autograd_kernel = op.kernels.get("autograd")
        if autograd_kernel is not None:
            return autograd_kernel(*args, **kwargs)
        return _autograd_function(op).apply(*values)
    return _run_kernel(op, values)


class OpOverload:
    """Matches `torch._ops.OpOverload`: one overload of an operator, callable."""

    def __init__(self, packet: OpOverloadPacket, overload_name: str, op: OpDef | None = None):
        self.overloadpacket = packet
        self._overloadname = overload_name
        self._op = op
        self.__name__ = f"{packet._name}.{overload_name}"
        self.__qualname__ = self.__name__
        self.__module__ = packet.__module__

    @property
    def op(self):
        return self

    @property
    def namespace(self) -> str:
        return self.overloadpacket._ns

    @property
    def _schema(self) -> FunctionSchema:
        if self._op is None:
            raise RuntimeError(f"jtorch keeps no ATen schemas: {self} has none")
        return self._op.schema

    def name(self) -> str:
        base = self.overloadpacket._qualified_op_name
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        if self._op is not None:
            return call_defined(self._op, args, kwargs)
        return self.overloadpacket._fn(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self.overloadpacket._ns}.{self.__name__}"

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.overloadpacket}', overload='{self._overloadname}')>"

    def __hash__(self) -> int:
        return hash((self.overloadpacket._qualified_op_name, self._overloadname))

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, OpOverload)
            and other._overloadname == self._overloadname
            and other.overloadpacket._qualified_op_name == self.overloadpacket._qualified_op_name
        )


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class OpOverloadPacket:
    """Matches `torch._ops.OpOverloadPacket`: an operator with its overloads."""

    def __init__(self, ns: str, name: str, fn=None):
        self._ns, self._name = ns, name
        self._qualified_op_name = f"{ns}::{name}"
        self._fn = fn  # an ATen name's jtorch function
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = f"torch._ops.{ns}"
        self._cache: dict = {}

    def _defined(self) -> dict:
        prefix = self._qualified_op_name
        return {
            (k.split(".", 1)[1] if "." in k else "default"): v
            for k, v in DEFINED.items()
            if k == prefix or k.startswith(prefix + ".")
        }

    def overloads(self) -> list:
        return list(self._defined()) if self._fn is None else ["default"]

    def __getattr__(self, key: str):
        if key.startswith("__") or not _IDENT.match(key):
            raise AttributeError(f"'{self}' object has no attribute '{key}'")
        cache = self.__dict__["_cache"]
        if key in cache:
            return cache[key]
        if self._fn is not None:
            overload = OpOverload(self, key)
        else:
            op = self._defined().get(key)
            if op is None:
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
            overload = OpOverload(self, key, op)
        cache[key] = overload
        return overload

    def __call__(self, *args, **kwargs):
        if self._fn is not None:
            return self._fn(*args, **kwargs)
        return self.default(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self._ns}.{self._name}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"


def _collective_names(namespace: str) -> frozenset:
    """PyTorch's collective operators in `namespace` (`c10d`, `c10d_functional`): they exist
    as keys (`CommDebugMode` counts by them), not as callables."""
    from ..distributed._comm_debug import COLLECTIVES

    return COLLECTIVES.get(namespace, frozenset())


def _collective_operator(namespace: str, name: str):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"torch.ops.{namespace}.{name} is PyTorch's internal "
            f"collective operator; jtorch runs collectives through the "
            f"torch.distributed API"
        )

    return refuse


class _OpNamespace:
    """Matches `torch._ops._OpNamespace`: `torch.ops.<ns>`."""

    def __init__(self, name: str):
        self.name = name
        self._dir: list = []

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, op_name: str):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        fn = None
        if self.name == "aten":
            from ._aten import resolve

            fn = resolve(op_name)
            found = fn is not None
        elif op_name in _collective_names(self.name):
            fn = _collective_operator(self.name, op_name)
            found = True
        else:
            found = any(
                k == f"{self.name}::{op_name}" or k.startswith(f"{self.name}::{op_name}.")
                for k in DEFINED
            )
        if not found:
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'"
            )
        packet = OpOverloadPacket(self.name, op_name, fn)
        setattr(self, op_name, packet)
        self._dir.append(op_name)
        return packet


class _Ops:
    """Matches `torch.ops` (`torch._ops.ops`): the operator namespaces."""

    __name__ = "torch.ops"

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        ns = _OpNamespace(name)
        setattr(self, name, ns)
        return ns

    def load_library(self, path) -> None:
        """Raises: jtorch cannot load compiled PyTorch operator libraries."""
        raise RuntimeError(
            f"torch.ops.load_library({path!r}): jtorch cannot load compiled "
            "PyTorch (C++/CUDA) operator libraries; define the operator in "
            "Python with torch.library.custom_op instead."
        )

    def forget(self, ns: str) -> None:
        """Drops the cached namespace `ns` (after its operators are removed)."""
        self.__dict__.pop(ns, None)


ops = _Ops()
