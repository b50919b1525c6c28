"""`torch.func` differentiation transforms on jax's: grad, vjp, jvp, jacrev, jacfwd, hessian.

Each transform hands jax a function of the flat arrays of the differentiated
arguments; that function wraps them (tracers) in fresh Tensors, calls the user
function and returns the arrays of its output. The fresh Tensors do not
require grad, so the eager tape stays out of the traced computation; a
function that uses the tape inside (`requires_grad_()` then `autograd.grad`)
still works, the tape being plain jax calls.

PyTorch's complex convention: a vector-Jacobian product is jax's with the
cotangent and the result conjugated (`grad` of a real function of complex
inputs is the conjugate of `jax.grad`'s). Forward mode needs no change.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Size, Tensor, wrap
from . import _pytree
from ._pytree import _TENSOR, _Out, conj_if_complex, flatten, wrap_tree
from ._vmap import randomness_mode

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "linearize",
    "functionalize",
]


# ---------------------------------------------------------------------------
# Arguments


def _check_argnums(argnums, n_args: int) -> None:
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not all(isinstance(a, int) for a in nums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    for a in nums:
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnums={a}, but only {n_args} positional inputs")


def _diff_args(args: tuple, argnums):
    _check_argnums(argnums, len(args))
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def _replace(args: tuple, argnums, new) -> tuple:
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, v in zip(argnums, new):
            args[i] = v
    return tuple(args)


def _diff_leaves(tree, real_only: str | None = None):
    """The Tensor leaves of what is differentiated, checked as PyTorch checks them."""
    leaves, treedef = flatten(tree)
    for i, x in enumerate(leaves):
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not (x.is_floating_point() or x.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if real_only and x.is_complex():
            raise RuntimeError(
                f"{real_only}: Expected all inputs to be real but received "
                f"complex tensor at flattened input idx: {i}"
            )
    return leaves, treedef


def _split_aux(out, has_aux: bool, api: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return out


def _tensor_outputs(box: _Out, out, api: str, real_only: bool = False) -> list:
    arrays = box.split(out)
    bad = box.non_tensor()
    if bad is not _TENSOR:
        raise RuntimeError(
            f"{api}: Expected f(*primals) to return only tensors, got unsupported type {type(bad)}"
        )
    if real_only:
        for i, a in enumerate(arrays):
            if jnp.iscomplexobj(a):
                raise RuntimeError(
                    f"{api}: Expected all outputs to be real but received "
                    f"complex tensor at flattened input idx: {i}"
                )
    return arrays


def _float0_to_zeros(t, like):
    return jnp.zeros(like.shape, like.dtype) if t.dtype == jax.dtypes.float0 else t


# ---------------------------------------------------------------------------
# Reverse mode


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """Matches `torch.func.grad_and_value`."""
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, treedef = _diff_leaves(_diff_args(args, argnums))
        aux_box = _Out()

        def scalar(*arrays):
            out = func(*_replace(args, argnums, wrap_tree(treedef, arrays)), **kwargs)
            out, aux = _split_aux(out, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(
                    f"{api}: Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {out.dim()} dims. Maybe you wanted to use "
                    "the vjp or jacrev APIs instead?"
                )
            if not out.is_floating_point():
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar "
                    f"outputs but got {out.dtype}"
                )
            value = out._array
            return value, (value, aux_box.split(aux))

        def fn(*arrays):
            grads, (value, aux) = jax.grad(scalar, argnums=tuple(range(len(arrays))), has_aux=True)(
                *arrays
            )
            return (*map(conj_if_complex, grads), value, *aux)

        res = _pytree.run("GradBackward", fn, leaves)
        n = len(leaves)
        g = treedef.unflatten(list(res[:n]))
        if has_aux:
            return g, (res[n], aux_box.join(res[n + 1 :]))
        return g, res[n]

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """Matches `torch.func.grad`: the gradient of a function returning a scalar Tensor."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """Matches `torch.func.vjp`: `(output, vjp_fn)` or `(output, vjp_fn, aux)`."""
    api = "vjp(f, *primals)"
    leaves, treedef = _diff_leaves(primals)
    out_box, aux_box = _Out(), _Out()

    def f(*arrays):
        out, aux = _split_aux(func(*wrap_tree(treedef, arrays)), has_aux, api)
        return _tensor_outputs(out_box, out, api), aux_box.split(aux)

    outs, pullback, aux = jax.vjp(f, *(t._array for t in leaves), has_aux=True)
    if not outs:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output")

    def vjp_fn(cotangents, *, retain_graph: bool = True, create_graph=None):
        ct_leaves, ct_tree = flatten(cotangents)
        if ct_tree != out_box.treedef:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as "
                "pytree structure of outputs to the function. cotangents: "
                f"{ct_tree}, primal output: {out_box.treedef}"
            )
        cts = []
        for i, (c, o) in enumerate(zip(ct_leaves, outs)):
            a = c._array if isinstance(c, Tensor) else jnp.asarray(c)
            if a.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{Size(a.shape)} and output[{i}] has a shape of "
                    f"{Size(o.shape)}."
                )
            cts.append(_cotangent(a, o))
        grads = pullback(cts)
        return treedef.unflatten(
            [wrap(_float0_to_zeros(conj_if_complex(g), p._array)) for g, p in zip(grads, leaves)]
        )

    out = out_box.join(wrap(o) for o in outs)
    if has_aux:
        return out, vjp_fn, aux_box.join(wrap(a) for a in aux)
    return out, vjp_fn


def _cotangent(a, o):
    """A cotangent for jax's vjp of output `o`, from a PyTorch-convention grad_output."""
    if not jnp.issubdtype(o.dtype, jnp.inexact):
        return np.zeros(o.shape, jax.dtypes.float0)
    if jnp.iscomplexobj(a):
        a = jnp.conj(a)
        if not jnp.iscomplexobj(o):
            a = a.real
    return a.astype(o.dtype)


def _chunked(rows, basis, chunk_size):
    """`rows(basis)` (a tuple of arrays stacked on axis 0), `chunk_size` rows at a time."""
    if chunk_size is None or chunk_size >= basis.shape[0]:
        return rows(basis)
    parts = [rows(basis[i : i + chunk_size]) for i in range(0, basis.shape[0], chunk_size)]
    return tuple(jnp.concatenate(p, axis=0) for p in zip(*parts))


def _check_chunk_size(chunk_size, api):
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def _basis(sizes, like):
    n = sum(sizes)
    dtype = jnp.result_type(*like) if like else jnp.float32
    return jnp.eye(n, dtype=dtype)


def _jac_result(out_box, aux_box, treedef, jac, n_in, aux, has_aux):
    n_out = out_box.n_tensors
    per_out = (treedef.unflatten(list(jac[i * n_in : (i + 1) * n_in])) for i in range(n_out))
    result = out_box.join(per_out)
    return (result, aux_box.join(aux)) if has_aux else result


def jacrev(
    func,
    argnums=0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
):
    """Matches `torch.func.jacrev`: the Jacobian by reverse mode (one vjp per output element).

    The result nests as PyTorch's: the output's structure outside, the structure of the
    differentiated arguments inside; each leaf has shape `output.shape + input.shape`.
    """
    _check_chunk_size(chunk_size, "jacrev")
    api = "jacrev"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, treedef = _diff_leaves(_diff_args(args, argnums), real_only=api)
        out_box, aux_box = _Out(), _Out()

        def f(*d):
            out = func(*_replace(args, argnums, wrap_tree(treedef, d)), **kwargs)
            out, aux = _split_aux(out, has_aux, api)
            return _tensor_outputs(out_box, out, api, real_only=True), aux_box.split(aux)

        def fn(*arrays):
            outs, pullback, aux = jax.vjp(f, *arrays, has_aux=True)
            sizes = [o.size for o in outs]

            def rows(basis):
                def one(e):
                    cts, off = [], 0
                    for o, n in zip(outs, sizes):
                        cts.append(_cotangent(e[off : off + n].reshape(o.shape), o))
                        off += n
                    return tuple(_float0_to_zeros(g, a) for g, a in zip(pullback(cts), arrays))

                return jax.vmap(one)(basis)

            per_input = _chunked(rows, _basis(sizes, outs), chunk_size)
            jac, off = [], 0
            for o, n in zip(outs, sizes):
                for a, r in zip(arrays, per_input):
                    jac.append(r[off : off + n].reshape(o.shape + a.shape))
                off += n
            return (*jac, *aux)

        res = _pytree.run("JacrevBackward", fn, leaves)
        n_jac = out_box.n_tensors * len(leaves)
        return _jac_result(
            out_box, aux_box, treedef, res[:n_jac], len(leaves), res[n_jac:], has_aux
        )

    return wrapper


# ---------------------------------------------------------------------------
# Forward mode


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """Matches `torch.func.jvp`: `(output, jvp_out)` or `(output, jvp_out, aux)`."""
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    p_leaves, p_tree = _diff_leaves(primals)
    t_leaves, t_tree = flatten(tangents)
    if p_tree != t_tree:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python "
            "structure. For example, if primals is a tuple of 3 tensors, "
            "tangents also must be. Got primals with structure "
            f"{p_tree} and tangents with structure {t_tree}"
        )
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected tangents to be a tuple of Tensors")
        if p.shape != t.shape:
            raise RuntimeError(
                f"{api}: Expected primals and tangents to have the same shape. "
                f"Got primals with shape {p.shape} and tangents with shape "
                f"{t.shape}"
            )
    out_box, aux_box = _Out(), _Out()
    n = len(p_leaves)

    def f(*arrays):
        out, aux = _split_aux(func(*wrap_tree(p_tree, arrays)), has_aux, api)
        return _tensor_outputs(out_box, out, api), aux_box.split(aux)

    def fn(*arrays):
        ps = arrays[:n]
        ts = tuple(t.astype(p.dtype) for p, t in zip(ps, arrays[n:]))
        outs, t_outs, aux = jax.jvp(f, ps, ts, has_aux=True)
        return (*outs, *(_float0_to_zeros(t, o) for t, o in zip(t_outs, outs)), *aux)

    res = _pytree.run("JvpBackward", fn, list(p_leaves) + list(t_leaves))
    k = out_box.n_tensors
    out, t_out = out_box.join(res[:k]), out_box.join(res[k : 2 * k])
    if has_aux:
        return out, t_out, aux_box.join(res[2 * k :])
    return out, t_out


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """Matches `torch.func.jacfwd`: the Jacobian by forward mode (one jvp per input element)."""
    api = "jacfwd"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, treedef = _diff_leaves(_diff_args(args, argnums), real_only=api)
        out_box, aux_box = _Out(), _Out()

        def f(*d):
            out = func(*_replace(args, argnums, wrap_tree(treedef, d)), **kwargs)
            out, aux = _split_aux(out, has_aux, api)
            return _tensor_outputs(out_box, out, api, real_only=True), aux_box.split(aux)

        def fn(*arrays):
            sizes = [a.size for a in arrays]
            with randomness_mode(randomness, None):
                outs, push, aux = jax.linearize(f, *arrays, has_aux=True)

            def col(e):
                tans, off = [], 0
                for a, k in zip(arrays, sizes):
                    tans.append(e[off : off + k].reshape(a.shape).astype(a.dtype))
                    off += k
                return tuple(_float0_to_zeros(t, o) for t, o in zip(push(*tans), outs))

            cols = jax.vmap(col)(_basis(sizes, arrays))
            jac = []
            for o, c in zip(outs, cols):
                off = 0
                for a, k in zip(arrays, sizes):
                    piece = jnp.moveaxis(c[off : off + k], 0, -1)
                    jac.append(piece.reshape(o.shape + a.shape))
                    off += k
            return (*jac, *aux)

        res = _pytree.run("JacfwdBackward", fn, leaves)
        n_jac = out_box.n_tensors * len(leaves)
        return _jac_result(
            out_box, aux_box, treedef, res[:n_jac], len(leaves), res[n_jac:], has_aux
        )

    return wrapper


def hessian(func, argnums=0):
    """Matches `torch.func.hessian`: `jacfwd(jacrev(func, argnums), argnums)`."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """Matches `torch.func.linearize`: `(output, jvp_fn)` with `jvp_fn(*tangents)`."""
    api = "linearize"
    leaves, treedef = _diff_leaves(primals)
    out_box = _Out()

    def f(*arrays):
        return _tensor_outputs(out_box, func(*wrap_tree(treedef, arrays)), api)

    outs, push = jax.linearize(f, *(t._array for t in leaves))

    def jvp_fn(*tangents):
        t_leaves, t_tree = flatten(tangents)
        if t_tree != treedef:
            raise RuntimeError(
                f"{api}: Expected tangents to have the same structure as "
                f"primals. Got {t_tree} and {treedef}"
            )
        ts = [t._array.astype(p._array.dtype) for t, p in zip(t_leaves, leaves)]
        return out_box.join(wrap(_float0_to_zeros(t, o)) for t, o in zip(push(*ts), outs))

    return out_box.join(wrap(o) for o in outs), jvp_fn


def functionalize(func, *, remove: str = "mutations"):
    """Matches `torch.func.functionalize`.

    jtorch's mutation is already functional underneath (an in-place op rebinds a jax
    array, DESIGN 1), so the function is returned as it is.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument "
            f"for remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be "
            "removed from the program, and replaced with their out-of-place "
            "equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all "
            "aliasing operators {view} will be replaced with their non-aliasing "
            "counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper
