"""How PyTorch prints a sparse tensor (its `_str_intern` sparse branches)."""

from __future__ import annotations

from .. import _dtype
from .._layout import sparse_csr
from .._tensor_str import _add_suffixes, _grad_fn_name, tensor_str


def _part(prefix: str, t, indent: int) -> str:
    text = tensor_str(t, indent + len(prefix))
    if t.numel() == 0:
        text += f", size={tuple(t.shape)}"
    return prefix + text + ")"


def sparse_repr(s) -> str:
    """Matches `repr()` of a sparse COO or CSR tensor."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if s.device.type != "cpu":
        suffixes.append(f"device='{s.device}'")
    dt = s.dtype
    default = _dtype.get_default_dtype()
    default_complex = _dtype.complex128 if default is _dtype.float64 else _dtype.complex64
    suffixes.append(f"size={tuple(s.shape)}")
    suffixes.append(f"nnz={s._nnz()}")
    if dt not in (default, default_complex, _dtype.int64, _dtype.bool):
        suffixes.append(f"dtype={dt!r}")
    values = s._vals.detach()
    if s.layout is sparse_csr:
        body = (
            _part("crow_indices=tensor(", s._crow, indent)
            + ",\n"
            + " " * indent
            + _part("col_indices=tensor(", s._idx, indent)
            + ",\n"
            + " " * indent
            + _part("values=tensor(", values, indent)
        )
    else:
        body = (
            _part("indices=tensor(", s._idx, indent)
            + ",\n"
            + " " * indent
            + _part("values=tensor(", values, indent)
        )
    suffixes.append(f"layout={s.layout!r}")
    name = _grad_fn_name(s)
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    # PyTorch puts the first suffix of a COO tensor on a new line (`force_newline`)
    return _add_suffixes(prefix + body, suffixes, indent, force_newline=s.layout is not sparse_csr)
