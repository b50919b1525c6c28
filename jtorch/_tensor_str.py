"""Tensor printing: `repr(tensor)` character for character as PyTorch prints it.

The algorithm is PyTorch's (`torch/_tensor_str.py`), re-expressed over numpy
arrays on the host:

1. Decide whether to summarize (more elements than ``threshold``); if so, only
   the ``edgeitems`` first and last entries of each dimension are looked at.
2. Build one `_Formatter` from those values. It fixes a single column width and
   a style for every element: integer-valued floats (``1.``), fixed point
   (``1.5000``) or scientific (``1.5000e+10``). Complex tensors get one
   formatter for the real parts and one for the imaginary parts.
3. Print the nested brackets, wrapping vectors at ``linewidth``, then append
   the suffixes (``device=``, ``size=``, ``dtype=``, ``grad_fn=`` /
   ``requires_grad=``), breaking the line where PyTorch breaks it.

Only the tensor's metadata and ``np.asarray(t._array)`` are read, so this
module works whatever ops exist. Printing a tensor that holds a jax tracer
raises jax's concretization error, which is what tells `jtorch.compile` to fall
back to eager.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

from . import _dtype

__all__ = ["get_printoptions", "printoptions", "set_printoptions", "tensor_repr", "tensor_str"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Matches `torch.set_printoptions`.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: element count above which tensors are summarized (default 1000).
        edgeitems: items kept at each end of a summarized dimension (default 3).
        linewidth: characters per line before vectors wrap (default 80).
        profile: ``'default'``, ``'short'`` or ``'full'``; the other arguments
            override it. PyTorch ignores unknown names, and so does this.
        sci_mode: force scientific notation on (True) or off (False); None
            lets the formatter choose.
    """
    if profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    # PyTorch quirk: sci_mode is always assigned, so any call that leaves it out
    # (even `set_printoptions(precision=2)`) resets it to automatic.
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Matches `torch._tensor_str.get_printoptions`: the options as `set_printoptions` kwargs."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Matches `torch._tensor_str.printoptions`: set options for the duration of a `with`."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------------
# Element formatting


class _Formatter:
    """One width and one style for every element of a (real) tensor.

    Args:
        values: the elements that decide the format (the summarized ones when
            the tensor is summarized).
        floating: whether the tensor's dtype is floating point.
    """

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not floating:
            # Integers and bools print as Python prints them: `7`, `True`.
            for text in map(str, np.unique(flat).tolist()):
                self.width = max(self.width, len(text))
            return

        # Only nonzero finite values take part: zeros, infs and nans never
        # change the style (a tensor of just those prints in int mode: `0.`, `nan`).
        vals = flat.astype(np.float64)
        vals = np.unique(vals[np.isfinite(vals) & (vals != 0)]).tolist()
        if not vals:
            return
        magnitudes = [abs(v) for v in vals]
        lo, hi = min(magnitudes), max(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in vals)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        if self.sci_mode:
            texts = (f"{v:.{precision}e}" for v in vals)
        elif self.int_mode:
            texts = (f"{v:.0f}." for v in vals)  # the trailing `.` marks a float
        else:
            texts = (f"{v:.{precision}f}" for v in vals)
        self.width = max(self.width, max(len(text) for text in texts))

    def __call__(self, value) -> str:
        """The text of one Python scalar, right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.width)


class _ComplexFormatter:
    """Formats complex elements as `real+imagj`, one `_Formatter` for each part."""

    def __init__(self, values: np.ndarray):
        self.real = _Formatter(values.real, True)
        self.imag = _Formatter(values.imag, True)
        self.width = self.real.width + self.imag.width + 1  # + 1 for the `j`

    def __call__(self, value: complex) -> str:
        real = self.real(value.real)
        imag = (self.imag(value.imag) + "j").lstrip()
        # The imaginary part keeps its own sign (`-2.j`, `-0.j`); only a
        # non-negative one needs a `+`.
        if imag[0] in "+-":
            return real + imag
        return real + "+" + imag


# ---------------------------------------------------------------------------
# Layout


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements that stay visible when `values` is summarized (they decide the format)."""
    edge = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if len(values) > 2 * edge:
            # PyTorch quirk kept on purpose: with edgeitems=0, `values[-0:]` is
            # the whole vector, so every element still decides the format.
            return np.concatenate([values[:edge], values[-edge:]])
        return values
    if not edge:
        return values[:0]
    rows = range(len(values))
    if len(values) > 2 * edge:
        rows = [*range(edge), *range(len(values) - edge, len(values))]
    return np.stack([_summarized(values[i]) for i in rows])


def _vector_str(values: np.ndarray, indent: int, summarize: bool, fmt) -> str:
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and len(values) > 2 * edge:
        items = (
            [fmt(v) for v in values[:edge].tolist()]
            + [" ..."]
            + [fmt(v) for v in values[-edge:].tolist()]
        )
    else:
        items = [fmt(v) for v in values.tolist()]

    # Each element takes its width plus ", ".
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2)))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values: np.ndarray, indent: int, summarize: bool, fmt) -> str:
    if values.ndim == 0:
        return fmt(values.item())
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, fmt)

    edge = PRINT_OPTS.edgeitems
    n = len(values)
    if summarize and n > 2 * edge:
        rows = (
            [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(edge)]
            + ["..."]
            + [_nested_str(values[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
        )
    else:
        rows = [_nested_str(row, indent + 1, summarize, fmt) for row in values]
    # Sub-tensors of a k-d tensor are separated by k-1 newlines (a blank line
    # between matrices of a 3-d tensor, and so on).
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _host_values(t) -> np.ndarray:
    """The tensor's elements as a numpy array Python's float formatting understands."""
    values = np.asarray(t._array)
    if values.dtype.kind == "V":  # ml_dtypes (bfloat16, float8): widen exactly to float32
        values = values.astype(np.float32)
    return values


def _body(values: np.ndarray, indent: int, dtype) -> str:
    """The bracketed elements of a non-empty tensor whose first line starts at column `indent`."""
    summarize = values.size > PRINT_OPTS.threshold
    sample = _summarized(values) if summarize else values
    if dtype.is_complex:
        fmt = _ComplexFormatter(sample)
    else:
        fmt = _Formatter(sample, dtype.is_floating_point)
    return _nested_str(values, indent, summarize, fmt)


def tensor_str(t, indent: int = 0) -> str:
    """The element text of `t` alone, without `tensor(` and the suffixes.

    Args:
        t: a jtorch tensor.
        indent: the column the text starts at (continuation lines align to it).
    """
    values = _host_values(t)
    if values.size == 0:
        return "[]"
    return _body(values, indent, t.dtype)


# ---------------------------------------------------------------------------
# The whole repr


def _add_suffixes(text: str, suffixes: list[str], indent: int, force_newline: bool = False) -> str:
    """Appends `, suffix` for each suffix, moving one to a new line when it would pass
    linewidth (and the first one when `force_newline`, as PyTorch does for sparse COO)."""
    parts = [text]
    # PyTorch quirk kept on purpose: this "length" overcounts the last line by 2.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _grad_fn_name(t) -> str | None:
    try:
        grad_fn = t.grad_fn
    except RuntimeError:
        return "Invalid"  # as PyTorch prints a grad_fn it cannot rebase
    if grad_fn is None:
        return None
    if callable(getattr(grad_fn, "name", None)):
        # C++ nodes name themselves `torch::autograd::AddBackward0` in PyTorch.
        return grad_fn.name().rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def _class_names(t) -> list[str]:
    return [cls.__name__ for cls in type(t).__mro__]


def tensor_repr(t) -> str:
    """Matches `repr(torch.Tensor)` (and `str`, which is the same)."""
    name = type(t).__name__
    # Plain tensors and parameters print as `tensor(...)`; other subclasses
    # print their class name, as in PyTorch.
    is_plain = name in ("Tensor", "Parameter")
    prefix = "tensor(" if is_plain else f"{name}("
    indent = len(prefix)
    suffixes = []

    # PyTorch shows the device whenever it is not the default tensor type's
    # device, which is always CPU (`set_default_device` does not change it).
    device = t.device
    if device.type != "cpu":
        suffixes.append(f"device='{device}'")

    dtype = t.dtype
    default = _dtype.get_default_dtype()
    if t.is_meta:  # no values: the size, and the dtype unless it is the default
        values = None
        suffixes.append(f"size={tuple(t.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "..."
    elif (values := _host_values(t)).size == 0:
        # Matches NumPy: the shape is shown unless it is (0,). With no elements
        # to tell ints from floats, every dtype but the default is shown, int64 too.
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(values.shape)}")
        default_complex = _dtype.complex128 if default is _dtype.float64 else _dtype.complex64
        if dtype not in (default, default_complex, _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={dtype!r}")
        body = _body(values, indent, dtype)

    grad_fn_name = _grad_fn_name(t)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    # the tangent in an open dual level, read as PyTorch's _tensor_str reads it (through the
    # assembled namespace: forward AD is a layer above this one)
    import jtorch

    tangent = jtorch.autograd.forward_ad.unpack_dual(t).tangent
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")

    text = _add_suffixes(prefix + body, suffixes, indent)
    if "Parameter" in _class_names(t):
        # `Parameter.__repr__` prefixes a header; a subclass of Parameter is
        # additionally wrapped in `Parameter(...)`.
        if not is_plain:
            text = f"Parameter({text})"
        text = "Parameter containing:\n" + text
    return text
