"""Custom autograd functions: `torch.autograd.Function` and its `ctx`.

As in PyTorch, `ctx` *is* the backward node: `y.grad_fn` of a custom function's
output is the object `forward` saved tensors on, named `<ClassName>Backward`.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from .._tensor import SparseOperand, Tensor, meta, wrap
from . import grad_mode
from ._edges import edge_of
from ._fn_node import FREED_MESSAGE, _modified_message
from ._node import DIFF_DTYPES, Node

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class FunctionCtx:
    """Matches `torch.autograd.function.FunctionCtx`: what `forward` tells `backward`."""

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
        self._to_save = tensors
        self._saved = tuple(None if t is None else (t, t._vc[0]) for t in tensors)

    def save_for_forward(self, *tensors) -> None:
        self._saved_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if getattr(self, "_freed", False) and getattr(self, "_saved", None):
            raise RuntimeError(FREED_MESSAGE)
        out = []
        for entry in getattr(self, "_saved", ()):
            if entry is None:
                out.append(None)
                continue
            t, version = entry
            if t._vc[0] != version:
                raise RuntimeError(_modified_message(t._array, None, t._vc[0], version))
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node (and ctx) of one `Function.apply` call."""

    def __init__(self, cls):
        Node.__init__(self, cls.__name__ + "Backward", ())
        self._cls = cls
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._outputs = ()
        self._input_slots = ()

    # Node's slots are not enough for a ctx; it keeps its state in __dict__.
    n_outputs = property(lambda self: len(self._outputs))

    def apply(self, grads, create_graph):
        grads = list(grads)
        for i, g in enumerate(grads):
            if g is None and self.materialize_grads:
                shape, dtype = self._outputs[i]
                grads[i] = jnp.zeros(shape, dtype)
        tensors = tuple(g if isinstance(g, Tensor) or g is None else wrap(g) for g in grads)
        cls = self._cls
        user_fn = cls.backward
        if cls.vjp is not Function.vjp:  # `vjp` is `backward`'s other name
            if user_fn is not Function.backward:
                raise RuntimeError(
                    "Implementing both 'backward' and 'vjp' for a custom Function "
                    "is not allowed. You should only implement one of them."
                )
            user_fn = cls.vjp
        with grad_mode.set_grad_enabled(create_graph):
            res = user_fn(self, *tensors)
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self.needs_input_grad)
        if len(res) != n:
            if len(res) > n and all(r is None for r in res[n:]):
                res = res[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of "
                    f"gradients (expected {n}, got {len(res)})"
                )
        out = []
        for slot in self._input_slots:
            i, shape = slot
            g = res[i]
            if g is None or self._edges[len(out)] is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if tuple(g.shape) != shape:
                try:
                    g = g.sum_to_size(shape)
                except RuntimeError:
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {i} - "
                        f"got {list(g.shape)} but expected shape compatible with "
                        f"{list(shape)}"
                    ) from None
            try:
                out.append(g if create_graph else g._array)
            except SparseOperand:  # a sparse gradient travels as the tensor itself
                out.append(g)
        return tuple(out)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {})


class Function(metaclass=_FunctionMeta):
    """Matches `torch.autograd.Function`: subclass with static `forward` and `backward`.

    `forward(ctx, *args)` or, with a `setup_context(ctx, inputs, output)` staticmethod,
    `forward(*args)`; then call `MyFunction.apply(*args)`.
    """

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is "
            "deprecated. Please use new-style autograd function with static "
            "forward method. (Example: https://pytorch.org/docs/stable/"
            "autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for "
            "your custom autograd.Function to use it with backward "
            "mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom "
            "autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls(cls)
        enabled = grad_mode.is_grad_enabled()
        needs = tuple(isinstance(a, Tensor) and a._rg for a in args)
        ctx.needs_input_grad = tuple(n and enabled for n in needs)
        separate = cls.setup_context is not Function.setup_context
        with grad_mode.no_grad():
            if separate:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not (enabled and any(needs)):
            return output
        return _connect(ctx, args, output)


def _connect(ctx, args, output):
    """Makes `ctx` the grad_fn of `output`'s differentiable tensors."""
    edges, slots = [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            edges.append(edge_of(a) if a._rg else None)
            slots.append((i, tuple(a.shape)))
    dirty = getattr(ctx, "_dirty", ())
    for t in dirty:
        if t._rg and t.grad_fn is None:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
    ctx._edges = tuple(edges)
    ctx._input_slots = tuple(slots)
    non_diff = {id(t) for t in getattr(ctx, "_non_differentiable", ())}
    dirty_ids = {id(t) for t in dirty}
    for t in dirty:
        t._vc[0] += 1  # PyTorch bumps a dirty tensor's version once more on output
    if dirty and getattr(ctx, "_saved", None):  # a saved dirty tensor is saved as output
        ctx._saved = tuple(
            (e[0], e[0]._vc[0]) if e is not None and id(e[0]) in dirty_ids else e
            for e in ctx._saved
        )
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    result, metas = [], []
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            metas.append(((), jnp.float32))
            continue
        if any(o is a for a in args) and id(o) not in dirty_ids:
            o = Tensor._make_subclass(Tensor, o)  # an input returned as is: a new alias
        metas.append((tuple(o.shape), o._array.dtype))
        if id(o) not in non_diff and o._array.dtype in DIFF_DTYPES:
            o._rg = True
            o.grad_fn = ctx
            m = o._grad_state
            if k or m is not None:
                meta(o).output_nr = k
                o._grad_state.token = None
        result.append(o)
    ctx._outputs = tuple(metas)
    return result[0] if single else tuple(result)


def once_differentiable(fn):
    """Matches `torch.autograd.function.once_differentiable`: backward runs without a graph."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            return fn(ctx, *args)

    return wrapper
