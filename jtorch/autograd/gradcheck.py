"""`torch.autograd.gradcheck` and `gradgradcheck`: the tape's gradients against finite
differences.

The numerical Jacobian is central differences, one input element at a time, in
the inputs' own dtype (PyTorch expects double precision and warns otherwise).
The analytical one is `autograd.grad` with one-hot grad_outputs, one output
element at a time. Complex numbers follow PyTorch: a complex output is checked
as its real and imaginary parts; for a complex input the numerical entry is
`ds/dx + 1j ds/dy`, the conjugate Wirtinger derivative PyTorch's backward
computes.

Supported checks: backward (the default), `check_forward_ad` (the forward
Jacobian from `jtorch.func.jacfwd`, real inputs and outputs), re-entrance
(`nondet_tol`) and `check_grad_dtypes`. Accepted and not performed:
`check_undefined_grad`, `check_batched_grad`, `check_batched_forward_grad`,
`masked`; `fast_mode=True` runs the full (slow-mode) check.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor, wrap
from ._engine import grad as _grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Matches `torch.autograd.gradcheck.GradcheckError`: raised when a check fails."""


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if isinstance(o, Tensor) and o.requires_grad)


def _tensor_str(a) -> str:
    return repr(wrap(jnp.asarray(a)))


def _is_complex(a) -> bool:
    return jnp.iscomplexobj(a)


# ---------------------------------------------------------------------------
# The two Jacobians. Layout as PyTorch prints them: (input numel, output numel).


def _replace_input(inputs: tuple, i: int, arr) -> tuple:
    t = inputs[i]
    new = wrap(arr).requires_grad_(t.requires_grad)
    return inputs[:i] + (new,) + inputs[i + 1 :]


def _outputs_at(func, inputs, out_idx) -> list:
    outs = _as_tuple(func(*inputs))
    return [outs[k].detach()._array for k in out_idx]


def _numerical(func, inputs, diff_idx, out_idx, eps):
    """`{(input, output): J}` by central differences, and the parts (real/imag) checked."""
    base = _outputs_at(func, inputs, out_idx)
    jac = {}
    for i in diff_idx:
        x = inputs[i].detach()._array
        n = x.size
        flat = x.reshape(-1)
        dirs = (1.0, 1j) if _is_complex(x) else (1.0,)
        cols = {
            (o, p): np.zeros(
                (n, base[o].size), dtype=np.complex128 if _is_complex(x) else np.float64
            )
            for o in range(len(out_idx))
            for p in _parts(base[o])
        }
        for k in range(n):
            for d in dirs:
                delta = eps * d
                plus = _outputs_at(
                    func, _replace_input(inputs, i, flat.at[k].add(delta).reshape(x.shape)), out_idx
                )
                minus = _outputs_at(
                    func,
                    _replace_input(inputs, i, flat.at[k].add(-delta).reshape(x.shape)),
                    out_idx,
                )
                for o in range(len(out_idx)):
                    diff = (
                        np.asarray(plus[o], dtype=np.complex128)
                        - np.asarray(minus[o], dtype=np.complex128)
                    ).reshape(-1) / (2 * eps)
                    for p in _parts(base[o]):
                        part = diff.imag if p == "imag" else diff.real
                        cols[(o, p)][k] += part if d == 1.0 else 1j * part
        for (o, p), m in cols.items():
            jac[(i, o, p)] = m
    return jac


def _parts(out) -> tuple:
    return ("real", "imag") if _is_complex(out) else ("real",)


def _analytical(outputs, diff_inputs, check_dtypes):
    """`{(input, output, part): J}` from the tape, one one-hot grad_output per element."""
    jac = {}
    for o, out in enumerate(outputs):
        arr = out._array
        for p in _parts(arr):
            unit = 1j if p == "imag" else 1.0
            mats = [
                np.zeros(
                    (x.numel(), arr.size), dtype=np.complex128 if x.is_complex() else np.float64
                )
                for x in diff_inputs
            ]
            for m in range(arr.size):
                ct = jnp.zeros(arr.size, arr.dtype).at[m].set(unit).reshape(arr.shape)
                grads = _grad(
                    (out,), diff_inputs, (wrap(ct),), retain_graph=True, allow_unused=True
                )
                for j, (g, x) in enumerate(zip(grads, diff_inputs)):
                    if g is None:
                        continue
                    if check_dtypes and g.dtype != x.dtype:
                        raise GradcheckError("Gradient has dtype mismatch")
                    if tuple(g.shape) != tuple(x.shape):
                        raise GradcheckError("Gradient has shape mismatch")
                    mats[j][:, m] = np.asarray(g.detach()._array).reshape(-1)
            for j, mat in enumerate(mats):
                jac[(j, o, p)] = mat
    return jac


def _mismatch(o, i, n, a, part, out_complex, mode="") -> str:
    prefix = f"While considering the {part} part of complex outputs only, " if out_complex else ""
    return (
        f"{prefix}Jacobian {mode}mismatch for output {o:d} with respect to input {i:d},\n"
        f"numerical:{_tensor_str(n)}\nanalytical:{_tensor_str(a)}\n"
    )


def _allclose(a, n, rtol, atol) -> bool:
    return bool(np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False))


def _check(
    func,
    inputs,
    eps,
    atol,
    rtol,
    nondet_tol,
    check_grad_dtypes,
    check_forward_ad,
    check_backward_ad,
):
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but "
            "none of the them have requires_grad=True."
        )
    for i in diff_idx:
        if inputs[i].dtype.itemsize < 8 or not (
            inputs[i].is_floating_point() or inputs[i].is_complex()
        ):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating "
                "point or complex. This check will likely fail if all the inputs are "
                "not of double precision floating point or complex. ",
                stacklevel=3,
            )
    outs = _as_tuple(func(*inputs))
    out_idx = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not out_idx:
        # Nothing to differentiate: the function must not depend on its inputs numerically.
        all_idx = [
            k
            for k, o in enumerate(outs)
            if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex())
        ]
        num = _numerical(func, inputs, diff_idx, all_idx, eps)
        for m in num.values():
            if not _allclose(m, 0.0, rtol, atol):
                raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    num = _numerical(func, inputs, diff_idx, out_idx, eps)
    diff_inputs = tuple(inputs[i] for i in diff_idx)
    outputs = tuple(outs[k] for k in out_idx)
    if check_backward_ad:
        ana = _analytical(outputs, diff_inputs, check_grad_dtypes)
        for (j, o, p), a in ana.items():
            n = num[(diff_idx[j], o, p)]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch(o, j, n, a, p, _is_complex(outputs[o]._array)))
        again = _analytical(outputs, diff_inputs, False)
        for key, a in ana.items():
            if not np.allclose(a, again[key], rtol=0.0, atol=nondet_tol):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}."
                )
    if check_forward_ad:
        _check_forward(func, inputs, diff_idx, out_idx, num, atol, rtol)
    return True


def _check_forward(func, inputs, diff_idx, out_idx, num, atol, rtol):
    """The forward-mode Jacobian (jax's, through `jtorch.func.jacfwd`) against numerical."""
    from .. import func as _func

    def f(*diff):
        args = list(inputs)
        for i, x in zip(diff_idx, diff):
            args[i] = x
        outs = _as_tuple(func(*args))
        return tuple(outs[k] for k in out_idx)

    detached = tuple(inputs[i].detach() for i in diff_idx)
    jac = _func.jacfwd(f, argnums=tuple(range(len(diff_idx))))(*detached)
    for o, per_input in enumerate(jac):
        for j, J in enumerate(per_input):
            out_n = int(np.prod(J.shape[: J.dim() - detached[j].dim()]))
            a = np.asarray(J._array).reshape(out_n, -1).T
            n = num[(diff_idx[j], o, "real")]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(
                    _mismatch(o, j, n, a, "real", False, "computed with forward mode ")
                )


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Matches `torch.autograd.gradcheck.gradcheck` (see the module docstring for the checks
    performed): True when the tape's gradients match finite differences."""
    if not (check_forward_ad or check_backward_ad):
        raise ValueError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    try:
        return _check(
            func,
            _as_tuple(inputs),
            eps,
            atol,
            rtol,
            nondet_tol,
            check_grad_dtypes,
            check_forward_ad,
            check_backward_ad,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Matches `torch.autograd.gradcheck.gradgradcheck`: gradcheck of the backward itself
    (with respect to the inputs and the grad_outputs), through `create_graph=True`."""
    from .. import rand

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple((rand(o.shape, dtype=o.dtype) * 2 - 1).requires_grad_() for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_go = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args):
        ins = tuple(x.requires_grad_() if i in diff_in else x for i, x in enumerate(args[:-n_out]))
        outs = _differentiable_outputs(func(*ins))
        gos = tuple(x.requires_grad_() if i in diff_go else x for i, x in enumerate(args[-n_out:]))
        diff_args = tuple(x for i, x in enumerate(ins) if i in diff_in)
        grads = _grad(outs, diff_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        new_func,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        fast_mode=fast_mode,
        masked=masked,
    )
