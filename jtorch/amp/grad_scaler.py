"""`torch.amp.GradScaler`: loss scaling with skipped steps on inf/NaN gradients.

Matches PyTorch's semantics: the scale and growth tracker are lazily created tensors,
`unscale_` multiplies the gradients by the float32 reciprocal of the scale and notes
whether any is not finite, `step` skips `optimizer.step()` when one was, and `update`
backs off (or grows after `growth_interval` clean steps).
"""

from __future__ import annotations

import enum
import warnings
from collections import defaultdict

from .. import _dtype
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Matches `torch.amp.GradScaler(device="cuda", init_scale=2.**16, ...)`."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            import jtorch  # `torch.cuda.is_available()`, as PyTorch's GradScaler asks it

            if not jtorch.cuda.is_available():
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname: str):
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init(self, device) -> None:
        import jtorch

        self._scale = jtorch.full((), self._init_scale, dtype=_dtype.float32, device=device)
        self._growth_tracker = jtorch.full(
            (), self._init_growth_tracker, dtype=_dtype.int32, device=device
        )

    def scale(self, outputs):
        """Multiplies a tensor (or the tensors of a nested list/tuple) by the scale."""
        from .._tensor import Tensor

        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply(v):
            if isinstance(v, Tensor):
                if self._scale is None:
                    self._lazy_init(v.device)
                return v * self._scale.to(device=v.device)
            if isinstance(v, (list, tuple)):
                return type(v)(apply(x) for x in v)
            if hasattr(v, "__iter__"):
                return map(apply, v)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16: bool) -> dict:
        """Multiplies every grad by `inv_scale`; {device: 1.0 if any was inf/NaN else 0.0}."""
        import jtorch

        found = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    bad = (~jtorch.isfinite(g)).any().to(_dtype.float32)
                    dev = g.device
                    found[dev] = bad if dev not in found else jtorch.maximum(found[dev], bad)
                    g.mul_(
                        inv_scale.to(device=dev, dtype=g.dtype)
                        if g.dtype is not _dtype.float32
                        else inv_scale.to(device=dev)
                    )
        return found

    def unscale_(self, optimizer) -> None:
        """Matches `GradScaler.unscale_`: divides the optimizer's grads by the scale, once."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # PyTorch computes the reciprocal in double, then rounds to float32.
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales (if not done yet), then runs `optimizer.step()` unless a grad was inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Backs the scale off after a skipped step, grows it after `growth_interval` clean ones."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [
                f
                for st in self._per_optimizer_states.values()
                for f in st["found_inf_per_device"].values()
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(f.item() for f in found):
                scale.mul_(self._backoff_factor)
                tracker.fill_(0)
            else:
                grown = int(tracker.item()) + 1
                if grown == self._growth_interval:
                    import jtorch

                    grown_scale = scale * self._growth_factor
                    if jtorch.isfinite(grown_scale).item():
                        scale.copy_(grown_scale)
                    grown = 0
                tracker.fill_(grown)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_fresh_state)
