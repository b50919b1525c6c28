"""`torch.optim.Adagrad`: PyTorch's single-tensor formula (compiled for dense gradients;
sparse ones take PyTorch's sparse branch)."""

from __future__ import annotations

import jax.numpy as jnp

from .. import _tensor
from ..autograd import grad_mode
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Matches `torch.optim.Adagrad` (lr_decay, initial_accumulator_value, maximize).

    As in PyTorch, the state (`step`, `sum`) exists for every parameter from
    construction on.
    """

    _hyper = ("lr", "lr_decay", "eps", "weight_decay")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = self._init_state(p, group)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)

    def share_memory(self) -> None:
        """Matches `torch.optim.Adagrad.share_memory` (nothing to share on jax)."""

    def _init_state(self, p, group):
        # PyTorch reads the accumulator's start from `defaults`, not from the group.
        init = self.defaults["initial_accumulator_value"]
        if p.is_complex():
            init = complex(init, init)
        total = _tensor.wrap(jnp.full(p.shape, init, p.dtype.np))
        return {"step": step_tensor(), "sum": total}

    def _flags(self, group):
        return (group["maximize"], group["weight_decay"] != 0)

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay = flags
        step = state["step"] + 1
        if maximize:
            g = -g
        if decay:
            g = g + scalar_like(hp["weight_decay"], p) * p
        clr = hp["lr"] / (1 + (step.astype(jnp.float64) - 1) * hp["lr_decay"])
        total = state["sum"] + g * g
        std = jnp.sqrt(total) + scalar_like(hp["eps"], p)
        return p + scalar_like(-clr, p) * g / std, {"step": step, "sum": total}

    def _sparse_step(self, group, params):
        """PyTorch's single-tensor Adagrad with its sparse branch (coalesce, then update only
        the gradient's entries)."""
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        wd, maximize = group["weight_decay"], group["maximize"]
        with grad_mode.no_grad():
            for p in params:
                state = self.state[p]
                state["step"] += 1
                step = state["step"].item()
                grad = -p.grad if maximize else p.grad
                if wd != 0:
                    if grad.is_sparse:
                        raise RuntimeError(
                            "weight_decay option is not compatible with sparse gradients"
                        )
                    grad = grad.add(p, alpha=wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                total = state["sum"]
                if grad.is_sparse:
                    from ..sparse import sparse_coo_tensor

                    grad = grad.coalesce()
                    idx, vals = grad._indices(), grad._values()
                    total.add_(sparse_coo_tensor(idx, vals.pow(2), grad.shape))
                    std = total.sparse_mask(grad)._values().sqrt().add(eps)
                    p.add_(sparse_coo_tensor(idx, vals / std, grad.shape), alpha=-clr)
                else:
                    total.addcmul_(grad, grad, value=1)
                    p.addcdiv_(grad, total.sqrt().add(eps), value=-clr)
