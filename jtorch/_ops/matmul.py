"""Matrix products: matmul, mm, bmm, mv, dot, the add* family, einsum, tensordot, cross, cdist,
multi_dot, vecdot.

PyTorch does not promote the operands of its BLAS-backed products (`mm`, `bmm`,
`matmul`, `dot`, ...): mixed dtypes raise. These ops therefore use
`promote=NONE` and check dtypes themselves, with PyTorch's messages. Float
products run at `Precision.HIGHEST` so float32 results match PyTorch's CPU
results rather than a reduced-precision accelerator default.
"""

import math
import string
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._dtype import c10_name
from .._tensor import Tensor, wrap_dim
from ._registry import DEFAULT, NONE, TL, T, broadcast_error, composite, kernel, op
from ._rows import EinsumRows, MatmulRows

HIGHEST = jax.lax.Precision.HIGHEST


def _no_bool(a, kernel: str):
    if a.dtype == jnp.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _shape_str(shape) -> str:
    return "x".join(str(n) for n in shape)


def _dot_general(a, b, dims):
    """`lax.dot_general` with PyTorch's CPU accuracy: half types accumulate in float32."""
    pref = jnp.float32 if a.dtype in (jnp.float16, jnp.bfloat16) else None
    out = jax.lax.dot_general(a, b, dims, precision=HIGHEST, preferred_element_type=pref)
    return out.astype(a.dtype)


def _mm(a, b):
    return _dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())))


def _bmm(a, b):
    return _dot_general(a, b, (((2,), (1,)), ((0,), (0,))))


def _check_mm(a, b):
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a.shape)} "
            f"and {_shape_str(b.shape)})"
        )


def _check_same_mm(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: "
            f"{_dtype.cpp_name(a)} != {_dtype.cpp_name(b)}"
        )


def _check_dot(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found "
            f"{c10_name(a)} and {c10_name(b)}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
            f"[{b.shape[0]}] to have the same number of elements, but got "
            f"{a.shape[0]} and {b.shape[0]} elements respectively"
        )
    _no_bool(a, "dot")


def _check_mv(m, v, n_input=None):
    if m.shape[1] != v.shape[0] or (n_input is not None and n_input != m.shape[0]):
        n = m.shape[0] if n_input is None else n_input
        raise RuntimeError(
            f"size mismatch, got input ({n}), mat ({_shape_str(m.shape)}), vec ({v.shape[0]})"
        )


def _check_bmm(a, b):
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )


# ---------------------------------------------------------------------------
# matmul and the plain products


def _matmul_node(input, other) -> str:
    """torch.matmul dispatches on the ranks: dot, mv, mm, or a folded / batched product."""
    named = {
        (1, 1): "DotBackward0",
        (2, 1): "MvBackward0",
        (1, 2): "SqueezeBackward4",
        (2, 2): "MmBackward0",
    }.get((input.ndim, other.ndim))
    if named is not None:
        return named
    # a matrix times a batch runs as (b^T a^T)^T, made contiguous
    return "CloneBackward0" if input.ndim == 2 else "UnsafeViewBackward0"


@op(
    promote=NONE,
    dunder="matmul",
    rdunder="matmul",
    node=_matmul_node,
    rows=MatmulRows(("input", "other")),
)
def matmul(input: T, other: T):
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if a.ndim == 1 and b.ndim == 1:
        _check_dot(a, b)
        return _dot_general(a, b, (((0,), (0,)), ((), ())))
    _check_same_mm(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        _no_bool(a, "addmm_impl_cpu_")
        if b.ndim == 1:
            _check_mv(a, b)
            return _dot_general(a, b, (((1,), (0,)), ((), ())))
        a2 = a[None] if a.ndim == 1 else a
        _check_mm(a2, b)
        out = _mm(a2, b)
        return out[0] if a.ndim == 1 else out
    _no_bool(a, "addmm_impl_cpu_")
    if b.ndim <= 2:
        # PyTorch folds the batch dims of `input` into its rows: errors read as mm/mv's.
        rows = math.prod(a.shape[:-1])
        if b.ndim == 1:
            _check_mv(a.reshape(rows, a.shape[-1]), b)
            return _dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())))
        _check_mm(a.reshape(rows, a.shape[-1]), b)
        return _mm(a, b)
    # Batched: broadcast the batch dims, then a bmm whose errors PyTorch reports.
    a2 = a[None] if a.ndim == 1 else a
    b2 = b[..., None] if b.ndim == 1 else b
    err = broadcast_error(a2.shape[:-2], b2.shape[:-2])
    if err is not None:
        raise err
    batch = tuple(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]))
    if a2.shape[-1] != b2.shape[-2]:
        n = math.prod(batch)
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{n}, {a2.shape[-1]}] but got: [{n}, {b2.shape[-2]}]."
        )
    a2 = jnp.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = jnp.broadcast_to(b2, batch + b2.shape[-2:])
    nb = len(batch)
    bd = tuple(range(nb))
    out = _dot_general(a2, b2, (((nb + 1,), (nb,)), (bd, bd)))
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


@op(promote=NONE)
def mm(input: T, mat2: T):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_same_mm(input, mat2)
    _check_mm(input, mat2)
    _no_bool(input, "addmm_impl_cpu_")
    return _mm(input, mat2)


@op(promote=NONE, rows=MatmulRows(("input", "mat2")))
def bmm(input: T, mat2: T):
    _check_bmm(input, mat2)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {c10_name(input)} but found {c10_name(mat2)}")
    _no_bool(input, "bmm")
    return _bmm(input, mat2)


@op(promote=NONE)
def mv(input: T, vec: T):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_mv(input, vec)
    if input.dtype != vec.dtype:
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got "
            f"{c10_name(vec)}, {c10_name(input)}, and {c10_name(vec)}"
        )
    _no_bool(input, "addmv_impl_cpu")
    return _dot_general(input, vec, (((1,), (0,)), ((), ())))


@op(promote=NONE)
def dot(input: T, tensor: T):
    _check_dot(input, tensor)
    return _dot_general(input, tensor, (((0,), (0,)), ((), ())))


@op(promote=NONE)
def vdot(input: T, other: T):
    _check_dot(input, other)
    return _dot_general(jnp.conj(input), other, (((0,), (0,)), ((), ())))


@op(promote=NONE)
def inner(input: T, other: T):
    if input.ndim == 0 or other.ndim == 0:
        # A scalar operand makes inner a plain (promoting) multiplication.
        dt = jnp.result_type(input, other)
        return input.astype(dt) * other.astype(dt)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got "
            f"shapes {list(input.shape)} and {list(other.shape)}"
        )
    if input.dtype != other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    _no_bool(input, "addmm_impl_cpu_")
    return _dot_general(input, other, (((input.ndim - 1,), (other.ndim - 1,)), ((), ())))


@op(aliases=("ger",), node="MulBackward0")
def outer(input: T, vec2: T):
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    if input.dtype == jnp.bool_:
        return input[:, None] & vec2[None, :]
    return input[:, None] * vec2[None, :]


# ---------------------------------------------------------------------------
# beta * input + alpha * product


def _check_scalars(a, beta, alpha):
    if jnp.issubdtype(a.dtype, jnp.integer) or a.dtype == jnp.bool_:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float) and not v.is_integer():
                raise RuntimeError(
                    f"For integral input tensors, argument {name} must not be a "
                    f"floating point number."
                )


def _scaled_add(input, prod, beta, alpha):
    """beta * input + alpha * prod; beta == 0 ignores input (its nan/inf do not propagate)."""
    input = jnp.broadcast_to(input, prod.shape)
    if prod.dtype == jnp.bool_:
        p = prod if alpha else jnp.zeros_like(prod)
        return p if not beta else (p | input)
    p = prod if alpha == 1 else prod * jnp.asarray(alpha).astype(prod.dtype)
    if beta == 0:
        return p
    i = input if beta == 1 else input * jnp.asarray(beta).astype(input.dtype)
    return i + p


def _expand_check(input, shape):
    """PyTorch's expand error when `input` cannot be broadcast to the product's shape."""
    if input.ndim > len(shape):
        raise RuntimeError(f"The expanded size of the tensor ({len(shape)}) must match ...")
    for i in range(1, input.ndim + 1):
        if input.shape[-i] != 1 and input.shape[-i] != shape[-i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[-i]}) must match the existing size "
                f"({input.shape[-i]}) at non-singleton dimension {len(shape) - i}.  Target "
                f"sizes: {list(shape)}.  Tensor sizes: {list(input.shape)}"
            )


@op(promote=NONE, inplace=True)
def addmm(input: T, mat1: T, mat2: T, *, beta=1, alpha=1):
    if mat1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    if not (input.dtype == mat1.dtype == mat2.dtype):
        other = mat2 if input.dtype != mat2.dtype else mat1
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got "
            f"{c10_name(input)} and {c10_name(other)}"
        )
    _check_mm(mat1, mat2)
    _no_bool(input, "addmm_impl_cpu_")
    shape = (mat1.shape[0], mat2.shape[1])
    _expand_check(input, shape)
    return _scaled_add(input, _mm(mat1, mat2), beta, alpha)


@op(promote=NONE, inplace=True)
def addmv(input: T, mat: T, vec: T, *, beta=1, alpha=1):
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}"
        )
    n_in = input.shape[0] if input.ndim == 1 and input.shape[0] != 1 else None
    _check_mv(mat, vec, n_in)
    if not (input.dtype == mat.dtype == vec.dtype):
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got "
            f"{c10_name(input)}, {c10_name(mat)}, and {c10_name(vec)}"
        )
    _no_bool(input, "addmv_impl_cpu")
    prod = _dot_general(mat, vec, (((1,), (0,)), ((), ())))
    return _scaled_add(input, prod, beta, alpha)


@op(promote=DEFAULT, inplace=True)
def addr(input: T, vec1: T, vec2: T, *, beta=1, alpha=1):
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"addr: Expected 1-d argument vec1 and vec2, but got vec1.dim() = "
            f"{vec1.ndim} and vec2.dim() = {vec2.ndim}"
        )
    if input.dtype == jnp.bool_:
        for name, v in (("beta", beta), ("alpha", alpha)):
            if not isinstance(v, (bool, int)):
                raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    _check_scalars(input, beta, alpha)
    shape = (vec1.shape[0], vec2.shape[0])
    _expand_check(input, shape)
    prod = (
        vec1[:, None] & vec2[None, :] if vec1.dtype == jnp.bool_ else vec1[:, None] * vec2[None, :]
    )
    return _scaled_add(input, prod, beta, alpha)


def _check_batches(b1, b2):
    for name, x in (("batch1", b1), ("batch2", b2)):
        if x.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got "
            f"{b1.shape[0]} and {b2.shape[0]}"
        )
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} and "
            f"{b2.shape[1]}x{b2.shape[2]})"
        )


@op(promote=NONE, inplace=True)
def addbmm(input: T, batch1: T, batch2: T, *, beta=1, alpha=1):
    _check_batches(batch1, batch2)
    if not (input.dtype == batch1.dtype == batch2.dtype):
        raise RuntimeError(
            f"expected scalar type {c10_name(input)} but found "
            f"{c10_name(batch2 if batch2.dtype != input.dtype else batch1)}"
        )
    _no_bool(input, "addbmm")
    shape = (batch1.shape[1], batch2.shape[2])
    _expand_check(input, shape)
    prod = _dot_general(batch1, batch2, (((0, 2), (0, 1)), ((), ())))
    return _scaled_add(input, prod, beta, alpha)


@op(promote=NONE, inplace=True)
def baddbmm(input: T, batch1: T, batch2: T, *, beta=1, alpha=1):
    _check_batches(batch1, batch2)
    if not (input.dtype == batch1.dtype == batch2.dtype):
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_dtype.cpp_name(input)}, "
            f"batch1: {_dtype.cpp_name(batch1)}, batch2: {_dtype.cpp_name(batch2)}"
        )
    _no_bool(input, "baddbmm")
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    _expand_check(input, shape)
    return _scaled_add(input, _bmm(batch1, batch2), beta, alpha)


# ---------------------------------------------------------------------------
# einsum and tensordot


_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _sublist(sub) -> str:
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            out.append(_LETTERS[s])
        else:
            raise RuntimeError(
                f"einsum(): expected subscript to be within the range [0, 52), but got {s}"
            )
    return "".join(out)


def _einsum_impl(equation, operands: TL):
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError(
            "einsum(): more operands were specified in the equation than were provided"
        )
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    dt = operands[0].dtype
    for x in operands[1:]:
        if x.dtype != dt:
            raise RuntimeError(
                f"expected scalar type {c10_name(operands[0])} but found {c10_name(x)}"
            )
    sizes: dict = {}
    ops = list(operands)
    for k, (term, x) in enumerate(zip(terms, operands)):
        labels = term.replace("...", "")
        if "..." not in term and len(labels) != x.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation "
                f"({len(labels)}) does not match the number of dimensions "
                f"({x.ndim}) for operand {k} and no ellipsis was given"
            )
        if "..." in term and len(labels) > x.ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation "
                f"({len(labels)}) is more than the number of dimensions "
                f"({x.ndim}) for operand {k}"
            )
        n_ell = x.ndim - len(labels)
        head, _, tail = term.partition("...")
        dims = list(zip(head, range(len(head)))) + list(zip(tail, range(len(head) + n_ell, x.ndim)))
        seen = {}
        for c, d in dims:
            n = x.shape[d]
            if c in seen and seen[c] != n:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {k} but "
                    f"the sizes don't match, {n} != {seen[c]}"
                )
            seen[c] = n
            prev = sizes.get(c)
            if prev is not None and n != prev and n != 1 and prev != 1:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {k} which "
                    f"does not broadcast with previously seen size {prev}"
                )
            sizes[c] = n if prev in (None, 1) else prev
    if arrow:
        outs = rhs.replace("...", "")
        for c in outs:
            if c not in sizes:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the "
                    f"equation for any input operand"
                )
            if outs.count(c) > 1:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
    # PyTorch broadcasts size-1 labelled dims against the other operands' sizes.
    for k, (term, x) in enumerate(zip(terms, ops)):
        head, _, tail = term.partition("...")
        n_ell = x.ndim - len(head) - len(tail)
        labels = list(head) + [None] * n_ell + list(tail)
        target = tuple(sizes[c] if c is not None else x.shape[i] for i, c in enumerate(labels))
        if target != x.shape:
            ops[k] = jnp.broadcast_to(x, target)
    if dt == jnp.bool_:
        res = jnp.einsum(equation, *[o.astype(jnp.int64) for o in ops])
        return res.astype(jnp.bool_)
    pref = jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else None
    return jnp.einsum(equation, *ops, precision=HIGHEST, preferred_element_type=pref).astype(dt)


_einsum_kernel = kernel(_einsum_impl, name="einsum", promote=NONE)


def _einsum2_impl(equation, a: T, b: T):
    return _einsum_impl(equation, (a, b))


# Two operands, the usual case (attention's scores and weighted values): a kernel of the
# dispatcher's fast path, whose eager calls run at bucketed sizes (`_rows.EinsumRows`).
_einsum2_kernel = kernel(_einsum2_impl, name="einsum", promote=NONE, rows=EinsumRows())


@composite(method=False)
def einsum(*args):
    """Matches `torch.einsum`: an equation string or the sublist format."""
    if not args:
        raise TypeError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        equation = args[0]
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:
        operands, subs = args[0::2], args[1::2]
        out_sub = None
        if len(args) % 2 == 1:
            operands, out_sub = operands[:-1], args[-1]
        equation = ",".join(_sublist(s) for s in subs)
        if out_sub is not None:
            equation += "->" + _sublist(out_sub)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    if len(operands) == 2 and all(isinstance(o, Tensor) for o in operands):
        return _einsum2_kernel(equation, *operands)
    return _einsum_kernel(equation, tuple(operands))


@op(promote=NONE, method=False)
def tensordot(a: T, b: T, dims=2):
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims))
    else:
        da, db = dims
        da = (da,) if isinstance(da, int) else tuple(da)
        db = (db,) if isinstance(db, int) else tuple(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = tuple(wrap_dim(d, a.ndim) for d in da)
        db = tuple(wrap_dim(d, b.ndim) for d in db)
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    _no_bool(a, "addmm_impl_cpu_")
    for x, y in zip(da, db):
        # A contracted dim of size 1 broadcasts against the other side's, as in PyTorch.
        if a.shape[x] == 1 and b.shape[y] != 1:
            b = jnp.sum(b, axis=y, keepdims=True, dtype=b.dtype)
        elif b.shape[y] == 1 and a.shape[x] != 1:
            a = jnp.sum(a, axis=x, keepdims=True, dtype=a.dtype)
        elif a.shape[x] != b.shape[y]:
            # An int `dims` is reported as negative dims of `a`, as PyTorch does.
            xd = x - a.ndim if isinstance(dims, int) else x
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size "
                f"{a.shape[x]} in dim {xd} and second has size {b.shape[y]} in dim "
                f"{y}"
            )
    return _dot_general(a, b, ((da, db), ((), ())))


@op(promote=DEFAULT, node="UnsafeViewBackward0")
def kron(input: T, other: T):
    if input.dtype == jnp.bool_:
        return jnp.kron(input.astype(jnp.uint8), other.astype(jnp.uint8)).astype(jnp.bool_)
    return jnp.kron(input, other)


@op(promote=NONE)
def trace(input: T):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    _no_bool(input, "trace")
    dt = jnp.int64 if jnp.issubdtype(input.dtype, jnp.integer) else input.dtype
    return jnp.trace(input).astype(dt)


# ---------------------------------------------------------------------------
# cross products and distances


def _cross(a, b, dim):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {c10_name(a)} but found {c10_name(b)}")
    _no_bool(a, "cross")
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{a.shape[d]} and {b.shape[d]}"
        )
    err = broadcast_error(a.shape, b.shape)
    if err is not None:
        raise err
    shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    return jnp.cross(a, b, axis=d)


@op(name="linalg.cross", promote=NONE, method=False, node="LinalgCrossBackward0")
def linalg_cross(input: T, other: T, *, dim=-1):
    return _cross(input, other, dim)


@op(promote=NONE, node="LinalgCrossBackward0")
def cross(input: T, other: T, dim=None):
    if dim is None:
        # PyTorch's deprecated default: the first dim of `input` of size 3.
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
            "The default value of dim will change to agree with that of linalg.cross "
            "in a future release.",
            UserWarning,
            stacklevel=2,
        )
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(input, other, dim)


@op(promote=NONE, method=False)
def cdist(x1: T, x2: T, p=2.0, compute_mode=None):
    modes = (
        None,
        "use_mm_for_euclid_dist_if_necessary",
        "use_mm_for_euclid_dist",
        "donot_use_mm_for_euclid_dist",
    )
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if not jnp.issubdtype(x1.dtype, jnp.floating):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {c10_name(x1)}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {c10_name(x1)} but found {c10_name(x2)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    err = broadcast_error(x1.shape[:-2], x2.shape[:-2])
    if err is not None:
        raise err
    diff = jnp.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return jnp.sum(diff != 0, axis=-1).astype(x1.dtype)
    if p == math.inf:
        return jnp.max(diff, axis=-1, initial=0).astype(x1.dtype)
    if p == 1:
        return jnp.sum(diff, axis=-1)
    if p == 2:
        s = jnp.sum(diff * diff, axis=-1)
        # sqrt with a zero gradient at zero distance, as PyTorch's cdist backward gives.
        safe = jnp.where(s == 0, jnp.ones_like(s), s)
        return jnp.where(s == 0, jnp.zeros_like(s), jnp.sqrt(safe))
    s = jnp.sum(diff**p, axis=-1)
    safe = jnp.where(s == 0, jnp.ones_like(s), s)
    return jnp.where(s == 0, jnp.zeros_like(s), safe ** (1.0 / p))


# ---------------------------------------------------------------------------
# Chains


@op(promote=NONE, method=False)
def chain_matmul(*matrices: TL):
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch "
        "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
        "more tensors rather than multiple parameters.",
        UserWarning,
        stacklevel=2,
    )
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0]
    return _multi_dot(matrices)


def _multi_dot(ts):
    """Left-to-right products in the cheapest association order (as PyTorch chooses it)."""
    n = len(ts)
    if n == 2:
        return _mm(ts[0], ts[1])
    dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for ln in range(1, n):
        for i in range(n - ln):
            j = i + ln
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def build(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return _mm(build(i, k), build(k + 1, j))

    return build(0, n - 1)


@op(name="linalg.multi_dot", promote=NONE, method=False)
def multi_dot(tensors: TL):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != first.dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor "
                f"0 is {_dtype.cpp_name(first)} and tensor {i} {_dtype.cpp_name(t)}"
            )
    ms = [first[None] if first.ndim == 1 else first] + [t for t in tensors[1:-1]]
    ms.append(last[:, None] if last.ndim == 1 else last)
    for i in range(n - 1):
        if ms[i].shape[1] != ms[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes "
                f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                f"cannot be multiplied"
            )
    _no_bool(first, "addmm_impl_cpu_")
    out = _multi_dot(ms)
    if first.ndim == 1:
        out = out[0]
    if last.ndim == 1:
        out = out[..., 0]
    return out


@op(
    name="linalg.vecdot",
    promote=NONE,
    method=False,
    node=lambda x, y: "VdotBackward0" if x.ndim == y.ndim == 1 else "SumBackward1",
)
def vecdot(x: T, y: T, *, dim=-1):
    _vecdot_check(x, y)
    err = broadcast_error(x.shape, y.shape)
    if err is not None:
        raise err
    return jnp.sum(jnp.conj(x) * y, axis=dim)


def _vecdot_check(x, y):
    """linalg.vecdot's dtype rules."""
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
            f"of type {c10_name(x)} and y of type {c10_name(y)} instead"
        )
    if not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating)):
        raise RuntimeError(
            f"linalg.vecdot: Expected a floating point or complex tensor as input. "
            f"Got {c10_name(x)}"
        )
