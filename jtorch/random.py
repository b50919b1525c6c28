"""`torch.random`: seeding, RNG state, and `fork_rng`."""

from __future__ import annotations

import contextlib
import warnings

from ._random import (  # noqa: F401
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(
    devices=None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
):
    """Matches `torch.random.fork_rng`: restores the RNG states when the block exits.

    The CPU generator is always forked; `devices` lists the accelerator devices whose
    generators are forked too (all of them by default, with PyTorch's warning when
    there are several).
    """
    global _fork_rng_warned_already
    if device_type == "meta":
        yield
        return
    from . import accelerator
    from ._knobs import get_device_module

    acc = accelerator.current_accelerator()
    # CPU's generator is always forked, so the default device type is the accelerator's.
    device_type = device_type or (acc.type if acc is not None else "cuda")
    device_mod = get_device_module(device_type)
    if not enabled:
        yield
        return
    if devices is None:
        num_devices = device_mod.device_count()
        if num_devices > 1 and not _fork_rng_warned_already:
            kind = device_type.upper()
            warnings.warn(
                f"{kind} reports that you have {num_devices} available devices, and you have "
                f"used {_caller} without explicitly specifying which devices are being used. "
                f"For safety, we initialize *every* {kind} device by default, which can be "
                f"quite slow if you have a lot of {kind}s. If you know that you are only making "
                f"use of a few {kind} devices, set the environment variable "
                f"{kind}_VISIBLE_DEVICES or the '{_devices_kw}' keyword argument of {_caller} "
                "with the set of devices you are actually using. For example, if you are using "
                "CPU only, set device.upper()_VISIBLE_DEVICES= or devices=[]; if you are using "
                f"device 0 only, set {kind}_VISIBLE_DEVICES=0 or devices=[0].  To initialize "
                f"all devices and suppress this warning, set the '{_devices_kw}' keyword "
                f"argument to `range(torch.{device_type}.device_count())`.",
                stacklevel=3,
            )
            _fork_rng_warned_already = True
        devices = list(range(num_devices))
    else:
        # A generator of devices would be exhausted by the first pass.
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            device_mod.set_rng_state(state, d)
