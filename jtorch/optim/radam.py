"""`torch.optim.RAdam`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .adam import _check, lerp
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Matches `torch.optim.RAdam` (decoupled_weight_decay, maximize).

    The step count is traced, so the rectified / unrectified choice is a `jnp.where`.
    """

    _hyper = ("lr", "betas", "eps", "weight_decay")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(float(lr), eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("capturable", False)

    def _init_state(self, p, group):
        return {
            "step": step_tensor(),
            "exp_avg": p.detach().new_zeros(p.shape),
            "exp_avg_sq": p.detach().new_zeros(p.shape),
        }

    def _flags(self, group):
        return (group["maximize"], group["weight_decay"] != 0, group["decoupled_weight_decay"])

    @staticmethod
    def _update(p, g, state, hp, flags):
        maximize, decay, decoupled = flags
        lr = hp["lr"]
        beta1, beta2 = hp["betas"]
        if maximize:
            g = -g
        step = state["step"] + 1
        n = step.astype(jnp.float64)
        if decay:
            if decoupled:
                p = p * scalar_like(1 - lr * hp["weight_decay"], p)
            else:
                g = g + scalar_like(hp["weight_decay"], p) * p
        exp_avg = lerp(state["exp_avg"], g, scalar_like(1 - beta1, p))
        exp_avg_sq = state["exp_avg_sq"] * scalar_like(beta2, p) + scalar_like(1 - beta2, p) * g * g
        # Python doubles in PyTorch.
        beta2_t = jnp.asarray(beta2, jnp.float64) ** n
        bias1 = 1 - jnp.asarray(beta1, jnp.float64) ** n
        bias2 = 1 - beta2_t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * n * beta2_t / bias2
        rect = jnp.sqrt(
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        )
        corrected = exp_avg / scalar_like(bias1, p) * scalar_like(lr, p)
        # `double / tensor` is `tensor.reciprocal() * double` in PyTorch.
        adaptive = (1 / (jnp.sqrt(exp_avg_sq) + scalar_like(hp["eps"], p))) * scalar_like(
            jnp.sqrt(bias2), p
        )
        update = jnp.where(rho_t > 5.0, corrected * adaptive * scalar_like(rect, p), corrected)
        return p - update, {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
