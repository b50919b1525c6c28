"""Anomaly detection: `detect_anomaly`, `set_detect_anomaly` (global, as in PyTorch)."""

from __future__ import annotations

import warnings

_enabled = False
_check_nan = True


def is_anomaly_enabled() -> bool:
    return _enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _check_nan


def _set(mode: bool, check_nan: bool) -> None:
    global _enabled, _check_nan
    _enabled, _check_nan = bool(mode), bool(check_nan)


class detect_anomaly:
    """Matches `torch.autograd.detect_anomaly`: forward tracebacks on backward errors and a
    check that no backward function returns NaN."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self):
        self.prev = (_enabled, _check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)


class set_detect_anomaly:
    """Matches `torch.autograd.set_detect_anomaly`: a switch, also usable as a context."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (_enabled, _check_nan)
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
