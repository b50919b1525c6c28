"""`torch.cuda.amp`: the deprecated CUDA spellings of `torch.amp`."""

import functools
import warnings

from ..amp import autocast_mode as _mode
from ..amp import grad_scaler as _scaler


class autocast(_mode.autocast):
    """Matches `torch.cuda.amp.autocast(...)`, i.e. `torch.amp.autocast("cuda", ...)`."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_scaler.GradScaler):
    """Matches `torch.cuda.amp.GradScaler(...)`, i.e. `torch.amp.GradScaler("cuda", ...)`."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda",
            init_scale=init_scale,
            growth_factor=growth_factor,
            backoff_factor=backoff_factor,
            growth_interval=growth_interval,
            enabled=enabled,
        )


custom_fwd = functools.partial(_mode.custom_fwd, device_type="cuda")
custom_bwd = functools.partial(_mode.custom_bwd, device_type="cuda")
