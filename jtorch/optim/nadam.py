"""`torch.optim.NAdam`: PyTorch's single-tensor formula."""

from __future__ import annotations

import jax.numpy as jnp

from .adam import _check, lerp
from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Matches `torch.optim.NAdam` (momentum_decay, decoupled_weight_decay, maximize)."""

    _hyper = ("lr", "betas", "eps", "weight_decay", "momentum_decay")
    _complex_as_real = True

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
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
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)

    def _init_state(self, p, group):
        mu_product = step_tensor()
        mu_product.fill_(1.0)
        return {
            "step": step_tensor(),
            "mu_product": mu_product,
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
        bias2 = 1 - jnp.asarray(beta2, jnp.float64) ** n
        if decay:
            if decoupled:
                p = p * scalar_like(1 - lr * hp["weight_decay"], p)
            else:
                g = g + scalar_like(hp["weight_decay"], p) * p
        # mu, mu_next are Python doubles; mu_product is a float32 tensor read back by .item().
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (n * hp["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((n + 1) * hp["momentum_decay"]))
        mu_product = state["mu_product"] * mu.astype(jnp.float32)
        mu_prod = mu_product.astype(jnp.float64)
        exp_avg = lerp(state["exp_avg"], g, scalar_like(1 - beta1, p))
        exp_avg_sq = state["exp_avg_sq"] * scalar_like(beta2, p) + scalar_like(1 - beta2, p) * g * g
        denom = jnp.sqrt(exp_avg_sq / scalar_like(bias2, p)) + scalar_like(hp["eps"], p)
        p = p + scalar_like(-lr * (1.0 - mu) / (1.0 - mu_prod), p) * g / denom
        p = p + scalar_like(-lr * mu_next / (1.0 - mu_prod * mu_next), p) * exp_avg / denom
        return p, {
            "step": step,
            "mu_product": mu_product,
            "exp_avg": exp_avg,
            "exp_avg_sq": exp_avg_sq,
        }
