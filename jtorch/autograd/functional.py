"""`torch.autograd.functional`: jacobian, hessian, vjp, jvp, hvp, vhp on the eager tape.

As in PyTorch, these call the user function on fresh leaves that require grad
and differentiate with `autograd.grad`, so `create_graph=True` gives results
that are themselves differentiable. `jvp` and `hvp` use the double-backward
trick (the vjp of a vjp, with respect to its cotangent). Only the vectorized
forward-mode Jacobian (`strategy="forward-mode"`, which PyTorch allows only
without `create_graph`) runs on jax's forward mode (`jtorch.func.jacfwd`);
`vectorize=True` with reverse mode runs the same loop as `vectorize=False`.
"""

from __future__ import annotations

from .._tensor import Tensor, wrap
from . import grad_mode
from ._engine import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _zeros_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    from .. import zeros_like

    return zeros_like(t, requires_grad=requires_grad)


def _as_tuple(inp, arg_name: str, fn_name: str):
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or "
                    f"a tuple of Tensors but the value at index {i} has type "
                    f"{type(el)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                f"tuple of Tensors but the given {arg_name} has type {type(el)}."
            )
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool):
    """Fresh tensors to differentiate with respect to (differentiable views of the inputs
    when the result must stay connected to their history)."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            # PyTorch uses `inp.detach()`; a fresh root over the same array is the same leaf
            # for differentiation without being marked as a detached view.
            res.append(wrap(inp._array).requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph: bool):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(t.detach() for t in inputs)
    return tuple(_grad_postprocess(t, create_graph) for t in inputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}."
            )


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    if input_type not in ("outputs", "grad_inputs", "jacobian", "hessian"):
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of "
                f"input {i}. This is not allowed in strict mode."
            )
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect "
                    f"to input {i} is independent of the input. This is not "
                    "allowed in strict mode. You should ensure that your "
                    "function is thrice differentiable and that the hessian "
                    "depends on the inputs."
                )
            if input_type == "jacobian":
                raise RuntimeError(
                    f"While computing the hessian, found that the jacobian of "
                    f"the user-provided function with respect to input {i} is "
                    "independent of the input. This is not allowed in strict "
                    "mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the "
                    "inputs (this would be violated by a linear function for "
                    "example)."
                )
            if input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of "
                    "the inputs of the user-provided function. This is not "
                    "allowed in strict mode."
                )
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require "
                "gradients. The outputs must be computed in a differentiable "
                "manner from the input when running in strict mode."
            )


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """`autograd.grad` over the outputs that require grad (None for unused inputs)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(
        tuple(o for o, _ in pairs),
        inputs,
        tuple(g for _, g in pairs),
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
    )


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        "The output of the user-provided function is independent "
                        f"of input {i}. This is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent "
                        f"of entry {i} in the grad_outputs when using the double "
                        "backward trick to compute forward mode gradients. This "
                        "is not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        "The jacobian of the user-provided function is "
                        f"independent of input {i}. This is not allowed in "
                        "strict mode."
                    )
                raise RuntimeError(
                    "The hessian of the user-provided function is independent "
                    f"of entry {i} in the grad_jacobian. This is not allowed in "
                    "strict mode as it prevents from using the double backward "
                    "trick to replace forward mode AD."
                )
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(
                f"The jacobian of the user-provided function is independent of "
                f"input {i}. This is not allowed in strict mode when "
                "create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _prepare_v(v, other, is_other_tuple, create_graph, fn_name, none_msg):
    if v is None:
        if len(other) != 1 or other[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
    _validate_v(v, other, is_other_tuple)
    return v


_V_NONE_OUT = (
    "The vector v can only be None if the user-provided function returns a single "
    "Tensor with a single element."
)
_V_NONE_IN = (
    "The vector v can only be None if the input to the user-provided function is a "
    "single Tensor with a single element."
)


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Matches `torch.autograd.functional.vjp`: `(func(inputs), vjp)`."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp", _V_NONE_OUT)
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_inputs_tuple),
    )


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Matches `torch.autograd.functional.jvp`: `(func(inputs), jvp)`, by double backward."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_IN)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outputs, "outputs", strict)
        # The vjp is linear in its cotangent u; its vjp with respect to u, applied to v, is J v.
        grad_outputs = tuple(_zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (
        _tuple_postprocess(outputs, is_outputs_tuple),
        _tuple_postprocess(result, is_outputs_tuple),
    )


def jacobian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """Matches `torch.autograd.functional.jacobian`.

    Each entry has shape `output.shape + input.shape`; the result is a tuple over outputs of
    tuples over inputs, with a level dropped where `func` returns, or `inputs` is, a single
    Tensor.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise RuntimeError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". '
            "Hint: If your function has more outputs than inputs, "
            '"forward-mode" tends to be more performant. Otherwise, prefer to '
            'use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together '
                "(yet). Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-"
                "reverse Hessian is only implemented for `vectorize=True`."
            )
        return _jacobian_forward(func, inputs, strict)
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outputs, "outputs", strict)
        result = tuple(
            _jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs)
        )
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(i, out, inputs, create_graph, strict):
    """The Jacobians of output `out` with respect to each input, one vjp per element."""
    from .. import stack, zeros

    rows = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for j in range(out.nelement()):
        vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
        for k, (g, inp) in enumerate(zip(vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function is "
                        f"independent of input {k}. This is not allowed in "
                        "strict mode."
                    )
                g = _zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(
                    "The jacobian of the user-provided function is independent "
                    f"of input {i}. This is not allowed in strict mode when "
                    "create_graph=True."
                )
            rows[k].append(g)
    return tuple(
        stack(r, 0).view(out.size() + inp.size())
        if r
        else zeros(out.size() + inp.size(), dtype=inp.dtype)
        for r, inp in zip(rows, inputs)
    )


def _jacobian_forward(func, inputs, strict):
    """The vectorized forward-mode Jacobian, on jax's forward mode."""
    from .. import func as _func

    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            "`vectorized=True` are not supported together. Please either set "
            "`strict=False` or `vectorize=False`."
        )
    inputs = tuple(t.detach() for t in inputs)
    box = {}

    def f(*args):
        out = func(*args)
        box["tuple"] = isinstance(out, tuple)
        return out

    jac = _func.jacfwd(f, argnums=tuple(range(len(inputs))))(*inputs)
    return _tuple_postprocess(_as_lists(jac, box["tuple"]), (box["tuple"], is_inputs_tuple))


def _as_lists(jac, is_outputs_tuple):
    # PyTorch's vectorized forward-mode path nests lists where the others nest tuples.
    jac = jac if is_outputs_tuple else (jac,)
    return [list(per_output) for per_output in jac]


def hessian(
    func,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """Matches `torch.autograd.functional.hessian`: the Jacobian of the gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise RuntimeError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should "
                "contain a single element"
            )
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    if outer_jacobian_strategy == "forward-mode":
        # Forward over reverse on jax's transforms (PyTorch requires vectorize=True here).
        from .. import func as _func

        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-"
                "reverse Hessian is only implemented for `vectorize=True`."
            )
        argnums = tuple(range(len(inputs)))
        res = _as_lists(
            _func.jacfwd(_func.jacrev(single_output, argnums), argnums)(
                *(t.detach() for t in inputs)
            ),
            True,
        )
    else:
        res = jacobian(
            jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize
        )
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Matches `torch.autograd.functional.vhp`: `(func(inputs), v^T H)`."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_NONE_IN)
        outputs = _single_scalar(func(*inputs), "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return outputs[0], _tuple_postprocess(result, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Matches `torch.autograd.functional.hvp`: `(func(inputs), H v)`, by double backward."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_NONE_IN)
        outputs = _single_scalar(func(*inputs), "hvp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(_zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return outputs[0], _tuple_postprocess(result, is_inputs_tuple)


def _single_scalar(out, fn_name, strict):
    is_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should "
            "contain a single element"
        )
    return outputs
