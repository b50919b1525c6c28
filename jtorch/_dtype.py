"""Torch dtypes on top of numpy/jax dtypes, and torch's type promotion.

A `dtype` is a singleton per torch dtype; it maps one-to-one onto a numpy
dtype (bfloat16 comes from ml_dtypes, as in jax). Promotion follows c10's
`promoteTypes` table and `ResultTypeState`: dimensioned tensors beat zero-dim
tensors, which beat Python scalars, within a category (bool < int < float <
complex).
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

__all__ = [
    "dtype",
    "finfo",
    "iinfo",
    "promote_types",
    "can_cast",
    "get_default_dtype",
    "set_default_dtype",
]


class dtype:
    """A torch dtype. Matches `torch.dtype`: compared by identity, printed as `torch.float32`."""

    __slots__ = ("_name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_kind")

    def __init__(self, name: str, np_dtype, kind: str):
        self._name = name
        self.np = np.dtype(np_dtype)
        self._kind = kind  # one of "b", "i", "u", "f", "c": the promotion category
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind in "ifc"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return "torch." + self._name

    def __reduce__(self):
        return (_dtype_by_name, (self._name,))

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64, complex32: float16}.get(self, self)

    def to_complex(self) -> dtype:
        return {float32: complex64, float64: complex128, float16: complex32}.get(self, self)


bool = dtype("bool", np.bool_, "b")
uint8 = dtype("uint8", np.uint8, "u")
uint16 = dtype("uint16", np.uint16, "u")
uint32 = dtype("uint32", np.uint32, "u")
uint64 = dtype("uint64", np.uint64, "u")
int8 = dtype("int8", np.int8, "i")
int16 = dtype("int16", np.int16, "i")
int32 = dtype("int32", np.int32, "i")
int64 = dtype("int64", np.int64, "i")
float16 = dtype("float16", np.float16, "f")
bfloat16 = dtype("bfloat16", jnp.bfloat16, "f")
float32 = dtype("float32", np.float32, "f")
float64 = dtype("float64", np.float64, "f")
complex32 = dtype("complex32", np.complex64, "c")  # no native chalf in jax; kept for name parity
complex64 = dtype("complex64", np.complex64, "c")
complex128 = dtype("complex128", np.complex128, "c")

ALL = (
    bool,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
)

# The 8-bit floats (ml_dtypes' types, as in jax). PyTorch stores and converts them but does not
# promote them with anything else, and few kernels accept them.
float8_e4m3fn = dtype("float8_e4m3fn", jnp.float8_e4m3fn, "f")
float8_e5m2 = dtype("float8_e5m2", jnp.float8_e5m2, "f")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", jnp.float8_e4m3fnuz, "f")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", jnp.float8_e5m2fnuz, "f")
float8_e8m0fnu = dtype("float8_e8m0fnu", jnp.float8_e8m0fnu, "f")
float8_e8m0fnu.is_signed = False
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

# Torch's aliases: torch.float is torch.float32, torch.long is torch.int64, ...
ALIASES = {
    "half": float16,
    "float": float32,
    "double": float64,
    "cfloat": complex64,
    "cdouble": complex128,
    "chalf": complex32,
    "short": int16,
    "int": int32,
    "long": int64,
}

_BY_NAME = {d._name: d for d in ALL + FLOAT8 + (complex32,)}
_BY_NP = {d.np: d for d in ALL + FLOAT8}


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_np(np_dtype) -> dtype:
    """The torch dtype of a numpy/jax dtype."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        d = np.dtype(np_dtype)
        if d in _BY_NP:
            return _BY_NP[d]
        # PyTorch names the numpy scalar type (`numpy.str_`, `numpy.object_`)
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{d.type.__name__}. The only "
            "supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


# ---------------------------------------------------------------------------
# Default dtype

_default = {"float": float32}


def get_default_dtype() -> dtype:
    """Matches `torch.get_default_dtype`."""
    return _default["float"]


def set_default_dtype(d: dtype) -> None:
    """Matches `torch.set_default_dtype`: only floating dtypes are accepted."""
    if not isinstance(d, dtype) or d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default["float"] = d


def default_complex_dtype() -> dtype:
    return complex128 if _default["float"] is float64 else complex64


# ---------------------------------------------------------------------------
# Promotion

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def category(d: dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex: the order of torch's promotion categories."""
    return _CATEGORY[d._kind]


_SIGNED_INTS = (int8, int16, int32, int64)
_FLOATS = (float16, bfloat16, float32, float64)


def _promote(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a in FLOAT8 or b in FLOAT8:
        raise RuntimeError(
            f"Promotion for Float8 Types is not supported, attempted to promote "
            f"{c10_name(a)} and {c10_name(b)}"
        )
    ka, kb = a._kind, b._kind
    if ka == "b":
        return b
    if kb == "b":
        return a
    if ka in "ui" and kb in "ui":
        if ka == kb:
            return a if a.itemsize >= b.itemsize else b
        u, s = (a, b) if ka == "u" else (b, a)
        if u is not uint8:
            # c10 leaves uint16/32/64 promotion with signed ints undefined.
            raise TypeError(
                f"Promotion for uint16, uint32, uint64 types is not supported, "
                f"attempted to promote {u._name} and {s._name}"
            )
        return s if s.itemsize > 1 else int16
    if ka in "ui":
        return b
    if kb in "ui":
        return a
    if ka == "f" and kb == "f":
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    # at least one complex
    ra, rb = a.to_real() if ka == "c" else a, b.to_real() if kb == "c" else b
    return _promote(ra, rb).to_complex()


_PROMOTE_TABLE = {
    (a, b): _promote(a, b)
    for a in ALL
    for b in ALL
    if not ({a._kind, b._kind} == {"u", "i"} and uint8 not in (a, b))
}


# Python's scalar types stand for dtypes wherever PyTorch's argument parser takes a dtype
# (`torch.zeros(2, dtype=float)` is float64, `x.to(bool)`).
PYTHON_TYPES = {
    builtins.bool: bool,
    builtins.int: int64,
    builtins.float: float64,
    builtins.complex: complex128,
}


def from_python_type(d):
    """`d`, with a Python scalar type replaced by its dtype (anything else unchanged)."""
    return PYTHON_TYPES.get(d, d) if d.__class__ is type else d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """Matches `torch.promote_types`."""
    try:
        return _PROMOTE_TABLE[type1, type2]
    except KeyError:
        return _promote(type1, type2)


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """Matches `torch.can_cast`: casting never lowers the category."""
    return category(from_) <= category(to)


def scalar_dtype(value) -> dtype:
    """The dtype torch gives a Python scalar when it is a wrapped number."""
    t = type(value)
    if t is builtins.bool or isinstance(value, (np.bool_,)):
        return bool
    if t is builtins.int or isinstance(value, np.integer):
        return int64
    if t is builtins.float or isinstance(value, np.floating):
        return _default["float"]
    if t is builtins.complex or isinstance(value, np.complexfloating):
        return default_complex_dtype()
    raise TypeError(f"unsupported scalar type {t.__name__}")


def combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """c10's combine_categories: the higher-priority result wins unless `lower` outranks it."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type_of(dims: list, zero_dims: list, scalars: list) -> dtype:
    """torch.result_type over three priority classes of dtypes.

    Args:
      dims: dtypes of tensors with at least one dimension.
      zero_dims: dtypes of zero-dim tensors.
      scalars: Python scalars (wrapped numbers).
    """
    dim_r = zero_r = wrapped_r = None
    for d in dims:
        dim_r = d if dim_r is None else promote_types(dim_r, d)
    for d in zero_dims:
        zero_r = d if zero_r is None else promote_types(zero_r, d)
    for s in scalars:
        d = scalar_dtype(s)
        wrapped_r = d if wrapped_r is None else promote_types(wrapped_r, d)
    r = combine_categories(dim_r, combine_categories(zero_r, wrapped_r))
    if r is None:
        raise RuntimeError("result_type: no inputs")
    return r


# ---------------------------------------------------------------------------
# Names in PyTorch's messages

_C10_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "bool": "Bool",
    "complex32": "ComplexHalf",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
    "float8_e4m3fn": "Float8_e4m3fn",
    "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz",
    "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}


def c10_name(x) -> str:
    """c10's ScalarType name ("Float", "Long", ...) as PyTorch's error messages spell it.

    Accepts a torch dtype, or anything jax can take a dtype of (an array, a numpy/jax
    dtype, a Python scalar).
    """
    d = x if isinstance(x, dtype) else from_np(jnp.result_type(x))
    return _C10_NAMES.get(d._name, d._name)


def legacy_type_name(x, cuda: bool = False) -> str:
    """The legacy tensor type name of a dtype: "torch.FloatTensor", "torch.cuda.LongTensor".

    What `Tensor.type()` and `torch.typename` return and PyTorch's messages say: c10's
    ScalarType name + "Tensor", for every dtype (`torch.UInt16Tensor` too).
    """
    return f"torch.{'cuda.' if cuda else ''}{c10_name(x)}Tensor"


# c10's C++ type names (TypeMeta), as in "expected m1 and m2 to have the same dtype, but got:
# float != double" and in a TensorOptions' repr.
_CPP_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def cpp_name(x) -> str:
    """c10's C++ type name of a torch dtype (or anything `c10_name` accepts)."""
    d = x if isinstance(x, dtype) else from_np(jnp.result_type(x))
    return _CPP_NAMES.get(d._name, d._name)


# ---------------------------------------------------------------------------
# finfo / iinfo


class finfo:
    """Matches `torch.finfo`."""

    def __init__(self, type: dtype | None = None):
        type = get_default_dtype() if type is None else type
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo "
                "to handle 'torch.finfo'"
            )
        type = type.to_real()
        info = jnp.finfo(type.np)
        self.bits = info.bits
        # c10 gives float8_e5m2fnuz an epsilon of 2^-3 (its 2 mantissa bits make 2^-2).
        self.eps = 0.125 if type is float8_e5m2fnuz else float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.tiny)
        self.smallest_normal = self.tiny
        # 10^-(decimal digits of the mantissa), as c10 computes it (1 for the 8-bit floats).
        self.resolution = 1.0 if type in FLOAT8 else float(info.resolution)
        self.dtype = type._name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """Matches `torch.iinfo`."""

    def __init__(self, type: dtype):
        if type.is_floating_point or type.is_complex:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to "
                "handle 'torch.iinfo'"
            )
        info = np.iinfo(np.int8 if type is bool else type.np)
        self.bits = info.bits
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type._name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
