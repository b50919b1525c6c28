"""Operator schemas: PyTorch's `FunctionSchema` text (`ns::name(Tensor x, *, int k=1) -> Tensor`),
parsed (`parse_schema`) and inferred from type annotations (`infer_schema`)."""

from __future__ import annotations

import ast
import inspect
import re
import types
import typing
from typing import Any

__all__ = ["FunctionSchema", "Argument", "SchemaType", "parse_schema", "infer_schema"]

# How `str(argument.type)` reads in PyTorch (its Python view of the C++ type).
_PY_NAMES = {
    "int": "int",
    "SymInt": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "Tensor": "Tensor",
    "Scalar": "number",
    "ScalarType": "int",
    "Layout": "int",
    "MemoryFormat": "int",
    "Device": "Device",
    "Generator": "Generator",
    "Dimname": "str",
    "Storage": "Storage",
    "Any": "Any",
    "Stream": "Stream",
}


class SchemaType:
    """An argument's type, as written in a schema (`Tensor?`, `int[2]`, `Tensor(a!)`)."""

    def __init__(
        self,
        base: str,
        optional: bool = False,
        list_size: int | None | str = "",
        elem_optional: bool = False,
    ):
        self.base = base
        self.optional = optional  # `T?`
        self.list_size = list_size  # "" (not a list), None (`T[]`) or an int (`T[2]`)
        self.elem_optional = elem_optional  # `Tensor?[]`

    @property
    def is_list(self) -> bool:
        return self.list_size != ""

    def __str__(self) -> str:
        s = _PY_NAMES.get(self.base, self.base)
        if self.elem_optional:
            s = f"Optional[{s}]"
        if self.is_list:
            s = f"List[{s}]"
        return f"Optional[{s}]" if self.optional else s

    def schema_text(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += "[]" if self.list_size is None else f"[{self.list_size}]"
        return s + ("?" if self.optional else "")


class Argument:
    """Matches `torch._C.Argument`: name, type, default, kwarg_only, alias (`a!`)."""

    def __init__(
        self,
        name: str,
        type: SchemaType,
        default_value: Any = None,  # noqa: A002
        has_default: bool = False,
        kwarg_only: bool = False,
        alias: str | None = None,
    ):
        self.name, self.type, self.default_value = name, type, default_value
        self.has_default_value = has_default
        self.kwarg_only, self.alias = kwarg_only, alias

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.endswith("!")

    @property
    def alias_info(self):
        return (
            None
            if self.alias is None
            else types.SimpleNamespace(is_write=self.is_write, before_set={self.alias.rstrip("!")})
        )

    def __str__(self) -> str:
        t = self.type.schema_text()
        if self.alias is not None:  # Tensor(a!) / Tensor(a)? : the alias sits after the base
            t = t.replace(self.type.base, f"{self.type.base}({self.alias})", 1)
        s = t + (" " + self.name if self.name else "")
        if self.has_default_value:
            s += "=" + _default_text(self.default_value)
        return s


def _default_text(v) -> str:
    if v is None:
        return "None"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        # C++'s max_digits10 printing: 2.0 is "2.", 1e-5 is "1.0000000000000001e-05"
        text = "%.17g" % v
        return text if any(c in text for c in ".ein") else text + "."
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_default_text(x) for x in v) + "]"
    return str(v)


class FunctionSchema:
    """Matches `torch._C.FunctionSchema`: `ns::name.overload(arguments) -> returns`."""

    def __init__(self, name: str, overload_name: str, arguments: list, returns: list):
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns = arguments, returns

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    def __str__(self) -> str:
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        if len(self.returns) == 1 and not self._returns_tuple:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{name}({', '.join(args)}) -> {rets}"

    _returns_tuple = False

    def __repr__(self) -> str:
        return str(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, FunctionSchema) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


# -- parsing -------------------------------------------------------------------

_TYPE = re.compile(
    r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<alias>[a-z0-9]+!?)\))?"
    r"(?P<eopt>\?)?(?:\[(?P<size>\d*)\])?(?P<opt>\?)?$"
)


def _split(text: str) -> list[str]:
    """Splits on commas at bracket depth 0."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_type(text: str, where: str) -> tuple[SchemaType, str | None]:
    m = _TYPE.match(text.replace(" ", ""))
    if m is None:
        raise RuntimeError(f"Unknown type in schema: '{text}' in {where}")
    size = m.group("size")
    list_size = "" if size is None else (int(size) if size else None)
    t = SchemaType(
        m.group("base"),
        optional=bool(m.group("opt")),
        list_size=list_size,
        elem_optional=bool(m.group("eopt")) and size is not None,
    )
    if m.group("eopt") and size is None:
        t.optional = True
    return t, m.group("alias")


def _parse_default(text: str):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("[") and text.endswith("]"):
        return [_parse_default(x) for x in _split(text[1:-1])]
    if text.endswith(".") and text[:-1].lstrip("-").isdigit():
        return float(text)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # enum-like defaults (`contiguous_format`, `mean`)


def _parse_arg(text: str, kwarg_only: bool, where: str) -> Argument:
    default, has_default = None, False
    if "=" in text:
        text, _, dtext = text.partition("=")
        default, has_default = _parse_default(dtext.strip()), True
    type_text, _, name = text.strip().rpartition(" ")
    if not type_text:  # an unnamed return: `Tensor`
        type_text, name = name, ""
    t, alias = _parse_type(type_text, where)
    return Argument(name, t, default, has_default, kwarg_only, alias)


def parse_schema(schema: str) -> FunctionSchema:
    """Matches `torch._C.parse_schema`: a FunctionSchema from its text."""
    m = re.match(
        r"^\s*(?P<name>[A-Za-z0-9_:]+)(?:\.(?P<ovl>[A-Za-z0-9_]+))?\s*\((?P<args>.*)\)"
        r"\s*->\s*(?P<rets>.+?)\s*$",
        schema,
        re.S,
    )
    if m is None:
        raise RuntimeError(f"Could not parse schema: {schema}")
    return _build(m.group("name"), m.group("ovl") or "", m.group("args"), m.group("rets"), schema)


def parse_signature(name: str, overload: str, signature: str) -> FunctionSchema:
    """A schema from a name and a `(args) -> rets` signature (custom_op's `schema=`)."""
    m = re.match(r"^\s*\((?P<args>.*)\)\s*->\s*(?P<rets>.+?)\s*$", signature, re.S)
    if m is None:
        raise RuntimeError(f"Could not parse schema: {signature}")
    return _build(name, overload, m.group("args"), m.group("rets"), signature)


def _build(name: str, overload: str, args_text: str, rets_text: str, where: str):
    args, kwarg_only = [], False
    for part in _split(args_text):
        if part == "*":
            kwarg_only = True
            continue
        args.append(_parse_arg(part, kwarg_only, where))
    tuple_ret = rets_text.startswith("(") and rets_text.endswith(")")
    ret_parts = _split(rets_text[1:-1]) if tuple_ret else [rets_text]
    schema = FunctionSchema(name, overload, args, [_parse_arg(p, False, where) for p in ret_parts])
    schema._returns_tuple = tuple_ret
    return schema


# -- inference from annotations ------------------------------------------------


def _annotation_type(ann, name: str, fn_desc: str) -> str:
    from .. import _device, _dtype
    from .._tensor import Tensor

    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == len(args) - 1 and len(rest) == 1:
            return _annotation_type(rest[0], name, fn_desc) + "?"
        if set(rest) == {int, float} or set(rest) == {int, float, bool}:
            return "Scalar" + ("?" if len(rest) < len(args) else "")
    if origin in (list, typing.List) or (origin is not None and origin.__name__ == "Sequence"):
        elem = _annotation_type(args[0], name, fn_desc) if args else None
        if elem is not None:
            return elem.replace("SymInt", "SymInt") + "[]"
    table = {
        Tensor: "Tensor",
        int: "SymInt",
        float: "float",
        bool: "bool",
        str: "str",
        _dtype.dtype: "ScalarType",
        _device.device: "Device",
    }
    if ann in table:
        return table[ann]
    raise ValueError(
        f"infer_schema(func): Parameter {name} has unsupported type {ann}. "
        f"Got func with signature {fn_desc})"
    )


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None) -> str:
    """Matches `torch.library.infer_schema`: the schema text from type annotations."""
    sig = inspect.signature(prototype_function)
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:  # noqa: BLE001 - unresolvable annotations: use them as written
        hints = {k: p.annotation for k, p in sig.parameters.items()}
        hints["return"] = sig.return_annotation
    desc = str(sig)
    params, star = [], False
    if mutates_args != "unknown":
        unknown = set(mutates_args) - set(sig.parameters)
        if unknown:
            raise ValueError(
                f"{unknown} in mutates_args were not found in the custom op's "
                "signature. mutates_args should contain the names of all args "
                "that the custom op mutates, or just the string 'unknown' if you "
                "don't know."
            )
    for i, (name, p) in enumerate(sig.parameters.items()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ValueError(
                f"infer_schema(func): Parameters of type {p.kind} are not "
                f"supported. Got func with signature {desc})"
            )
        if p.annotation is p.empty:
            raise ValueError(
                f"infer_schema(func): Parameter {name} must have a type "
                f"annotation. Got func with signature {desc})"
            )
        t = _annotation_type(hints.get(name, p.annotation), name, desc)
        mutated = mutates_args == "unknown" or name in mutates_args
        if mutated and t.startswith("Tensor"):
            t = t.replace("Tensor", f"Tensor(a{i}!)", 1)
        if p.kind == p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        s = f"{t} {name}"
        if p.default is not p.empty:
            s += "=" + _default_text(p.default)
        params.append(s)
    ret = hints.get("return", sig.return_annotation)
    rets = _return_text(ret, desc)
    schema = f"({', '.join(params)}) -> {rets}"
    return (op_name + schema) if op_name else schema


def _return_text(ann, desc: str) -> str:
    if ann is None or ann is type(None) or ann is inspect.Signature.empty:
        if ann is inspect.Signature.empty:
            raise ValueError(
                f"infer_schema(func): No return type annotation was provided. "
                f"Please add one. Got func with signature {desc})"
            )
        return "()"
    if typing.get_origin(ann) is tuple:
        return (
            "(" + ", ".join(_annotation_type(a, "return", desc) for a in typing.get_args(ann)) + ")"
        )
    return _annotation_type(ann, "return", desc)
