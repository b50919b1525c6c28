"""`torch.optim.Adam` and `torch.optim.AdamW`: PyTorch's single-tensor formulas."""

from __future__ import annotations

import jax.numpy as jnp

from .optimizer import Optimizer, scalar_like, step_tensor

__all__ = ["Adam", "AdamW"]


def _check(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def lerp(start, end, weight):
    """PyTorch's lerp, which switches formula at weight 0.5 for accuracy."""
    return jnp.where(
        weight < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight)
    )


class Adam(Optimizer):
    """Matches `torch.optim.Adam` (amsgrad, weight_decay, decoupled_weight_decay, maximize).

    `foreach`, `fused`, `capturable` and `differentiable` are accepted: every step is
    already one compiled multi-tensor update.
    """

    _hyper = ("lr", "betas", "eps", "weight_decay")
    # AdamW (a subclass) says "Adam" too, as in PyTorch
    _sparse_message = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(float(lr), eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
            group.setdefault("decoupled_weight_decay", False)

    def _init_state(self, p, group):
        state = {
            "step": step_tensor(),
            "exp_avg": p.detach().new_zeros(p.shape),
            "exp_avg_sq": p.detach().new_zeros(p.shape),
        }
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = p.detach().new_zeros(p.shape)
        return state

    def _flags(self, group):
        return (
            group["amsgrad"],
            group["maximize"],
            group["weight_decay"] != 0,
            group["decoupled_weight_decay"],
        )

    @staticmethod
    def _update(p, g, state, hp, flags):
        amsgrad, maximize, decay, decoupled = flags
        lr = hp["lr"]
        beta1, beta2 = hp["betas"]
        if maximize:
            g = -g
        if decay:
            if decoupled:
                p = p * scalar_like(1 - lr * hp["weight_decay"], p)
            else:
                g = g + scalar_like(hp["weight_decay"], p) * p
        step = state["step"] + 1
        exp_avg = lerp(state["exp_avg"], g, scalar_like(1 - beta1, p))
        exp_avg_sq = state["exp_avg_sq"] * scalar_like(beta2, p) + scalar_like(1 - beta2, p) * (
            g * jnp.conj(g)
        )
        # The bias corrections are Python doubles in PyTorch's single-tensor path.
        n = step.astype(jnp.float64)
        bias1 = 1 - jnp.asarray(beta1, jnp.float64) ** n
        bias2_sqrt = jnp.sqrt(1 - jnp.asarray(beta2, jnp.float64) ** n)
        step_size = scalar_like(lr / bias1, p)
        new_state = {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
        second = exp_avg_sq
        if amsgrad:
            second = jnp.maximum(state["max_exp_avg_sq"], exp_avg_sq)
            new_state["max_exp_avg_sq"] = second
        denom = jnp.sqrt(second) / scalar_like(bias2_sqrt, p) + scalar_like(hp["eps"], p)
        return p - step_size * (exp_avg / denom), new_state


class AdamW(Adam):
    """Matches `torch.optim.AdamW`: Adam with decoupled weight decay (default 1e-2)."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        foreach=None,
        capturable=False,
        differentiable=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
