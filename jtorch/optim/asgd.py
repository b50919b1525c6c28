"""`torch.optim.ASGD`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Matches `torch.optim.ASGD` (averaged SGD; state `step`, `eta`, `mu`, `ax`)."""

    _hyper = ("lr", "lambd", "alpha", "t0", "weight_decay")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
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
        eta = step_tensor()
        eta.fill_(float(group["lr"]))
        mu = step_tensor()
        mu.fill_(1.0)
        return {"step": step_tensor(), "eta": eta, "mu": mu, "ax": p.detach().new_zeros(p.shape)}

    def _flags(self, group):
        return (group["maximize"], group["weight_decay"] != 0)

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay = flags
        lr, lambd = hp["lr"], hp["lambd"]
        if maximize:
            g = -g
        step = state["step"] + 1
        if decay:
            g = g + scalar_like(hp["weight_decay"], p) * p
        eta = state["eta"].astype(jnp.float64)  # `eta.item()`
        p = p * scalar_like(1 - lambd * eta, p)
        p = p + scalar_like(-eta, p) * g
        mu, ax = state["mu"], state["ax"]
        # PyTorch copies the parameter while mu is exactly 1 (before t0).
        ax = jnp.where(mu != 1, ax + (p - ax) * mu.astype(p.dtype), p)
        n = step.astype(jnp.float64)
        new_eta = (lr / ((1 + lambd * lr * n) ** hp["alpha"])).astype(jnp.float32)
        new_mu = (1 / jnp.maximum(1.0, n - hp["t0"])).astype(jnp.float32)
        return p, {"step": step, "eta": new_eta, "mu": new_mu, "ax": ax}
