"""`torch.cpu.amp`: the deprecated CPU spellings of `torch.amp`."""

import warnings

from ..amp import autocast_mode as _mode
from ..amp import grad_scaler as _scaler


class autocast(_mode.autocast):
    """Matches `torch.cpu.amp.autocast(...)`, i.e. `torch.amp.autocast("cpu", ...)`."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cpu",
            dtype=_mode.get_autocast_dtype("cpu") if dtype is None else dtype,
            enabled=enabled,
            cache_enabled=cache_enabled,
        )


class GradScaler(_scaler.GradScaler):
    """Matches `torch.cpu.amp.GradScaler(...)`, i.e. `torch.amp.GradScaler("cpu", ...)`."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cpu",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )
