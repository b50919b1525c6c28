"""`torch.optim.Adadelta`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Matches `torch.optim.Adadelta` (rho, eps, weight_decay, maximize)."""

    _hyper = ("lr", "rho", "eps", "weight_decay")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _init_state(self, p, group):
        return {
            "step": step_tensor(),
            "square_avg": p.detach().new_zeros(p.shape),
            "acc_delta": p.detach().new_zeros(p.shape),
        }

    def _flags(self, group):
        return (group["maximize"], group["weight_decay"] != 0)

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay = flags
        rho, eps = scalar_like(hp["rho"], p), scalar_like(hp["eps"], p)
        one_minus_rho = scalar_like(1 - hp["rho"], p)
        if maximize:
            g = -g
        if decay:
            g = g + scalar_like(hp["weight_decay"], p) * p
        square_avg = state["square_avg"] * rho + one_minus_rho * g * g
        std = jnp.sqrt(square_avg + eps)
        delta = jnp.sqrt(state["acc_delta"] + eps) / std * g
        acc_delta = state["acc_delta"] * rho + one_minus_rho * delta * delta
        return p + scalar_like(-hp["lr"], p) * delta, {
            "step": state["step"] + 1,
            "square_avg": square_avg,
            "acc_delta": acc_delta,
        }
