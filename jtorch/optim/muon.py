"""`torch.optim.Muon`: momentum, then Newton-Schulz orthogonalization in bfloat16."""

from __future__ import annotations

import math

import jax.numpy as jnp

from .adam import lerp
from .optimizer import Optimizer, scalar_like

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _mm(a, b):
    """A bfloat16 matmul as PyTorch's CPU gemm does it: float32 sums, one rounding."""
    return jnp.matmul(a, b, preferred_element_type=jnp.float32)


def _zeropower_via_newtonschulz(g, coefficients, steps: int, eps):
    """PyTorch's quintic Newton-Schulz iteration, in bfloat16 (the wide side last)."""
    a, b, c = (jnp.asarray(v, jnp.float32) for v in coefficients)
    bf16 = jnp.bfloat16
    x = g.astype(bf16)
    tall = g.shape[0] > g.shape[1]
    if tall:
        x = x.T
    norm = jnp.sqrt(jnp.sum(jnp.square(x.astype(jnp.float32)))).astype(bf16)
    x = (x.astype(jnp.float32) / jnp.maximum(norm, jnp.asarray(eps, bf16))).astype(bf16)
    for _ in range(steps):
        gram = _mm(x, x.T).astype(bf16)
        # addmm(gram, gram, gram, beta=b, alpha=c), then addmm(x, update, x, beta=a)
        update = (b * gram.astype(jnp.float32) + c * _mm(gram, gram)).astype(bf16)
        x = (a * x.astype(jnp.float32) + _mm(update, x)).astype(bf16)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Matches `torch.optim.Muon`: for 2-D parameters only (use AdamW for the others)."""

    _hyper = ("lr", "weight_decay", "momentum", "ns_coefficients", "eps")

    def __init__(
        self,
        params,
        lr=1e-3,
        weight_decay=0.1,
        momentum=0.95,
        nesterov=True,
        ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps=EPS,
        ns_steps=DEFAULT_NS_STEPS,
        adjust_lr_fn=None,
    ):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=ns_coefficients,
            eps=eps,
            ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a "
                        f"parameter with size: {p.size()}"
                    )

    def _make_plan(self, group, params, flags):
        for p in params:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Muon does not support sparse gradients")
            if p.grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
        return super()._make_plan(group, params, flags)

    def _init_state(self, p, group):
        return {"momentum_buffer": p.detach().new_zeros(p.shape)}

    def _flags(self, group):
        # PyTorch checks these when it orthogonalizes, i.e. on each step.
        if group["ns_steps"] >= 100:
            raise ValueError("Number of steps must be less than 100 for computational efficiency")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError("Coefficients must be a tuple of exactly 3 values")
        return (group["nesterov"], group["ns_steps"], group["adjust_lr_fn"])

    @staticmethod
    def _update(p, g, state, hp, flags):
        nesterov, ns_steps, adjust_lr_fn = flags
        lr, momentum = hp["lr"], hp["momentum"]
        buf = lerp(state["momentum_buffer"], g, scalar_like(1 - momentum, p))
        update = lerp(g, buf, scalar_like(momentum, p)) if nesterov else buf
        update = _zeropower_via_newtonschulz(update, hp["ns_coefficients"], ns_steps, hp["eps"])
        adjusted_lr = _adjust_lr(lr, adjust_lr_fn, p.shape)
        p = p * scalar_like(1 - lr * hp["weight_decay"], p)
        p = p + scalar_like(-adjusted_lr, p) * update.astype(p.dtype)
        return p, {"momentum_buffer": buf}
