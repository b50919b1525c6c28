"""`torch.optim.SGD`."""

from __future__ import annotations

from ..autograd import grad_mode
from .optimizer import Optimizer, required, scalar_like

__all__ = ["SGD"]


class SGD(Optimizer):
    """Matches `torch.optim.SGD` (momentum, dampening, nesterov, weight_decay, maximize)."""

    _hyper = ("lr", "momentum", "dampening", "weight_decay")

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    def _flags(self, group):
        return (
            group["momentum"] != 0,
            group["weight_decay"] != 0,
            group["nesterov"],
            group["maximize"],
        )

    @staticmethod
    def _update(p, g, state, hp, flags):
        use_momentum, decay, nesterov, maximize = flags
        if maximize:
            g = -g
        if decay:
            g = g + scalar_like(hp["weight_decay"], p) * p
        new_state = {}
        if use_momentum:
            momentum = scalar_like(hp["momentum"], p)
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = g  # PyTorch's first step: the buffer is a copy of the gradient
            else:
                buf = buf * momentum + scalar_like(1 - hp["dampening"], p) * g
            new_state["momentum_buffer"] = buf
            g = g + momentum * buf if nesterov else buf
        return p - scalar_like(hp["lr"], p) * g, new_state

    def _sparse_step(self, group, params):
        """PyTorch's single-tensor SGD, which sparse gradients take (no compiled step)."""
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        with grad_mode.no_grad():
            for p in params:
                grad = -p.grad if maximize else p.grad
                if wd != 0:
                    grad = grad.add(p, alpha=wd)  # sparse + dense raises, as in PyTorch
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.clone().detach()
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad.add(buf, alpha=momentum) if nesterov else buf
                p.add_(grad, alpha=-lr)
