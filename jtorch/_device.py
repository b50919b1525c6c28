"""`torch.device` and its mapping onto jax devices.

The mapping (DESIGN 8):

- ``cpu``            -> ``jax.local_devices(backend="cpu")[index]``
- ``cuda[:n]``       -> the n-th NVIDIA GPU when jax has one; on a TPU host, the n-th TPU core
                        (set ``JTORCH_CUDA_IS_TPU=0`` to turn that off)
- ``tpu``/``xla[:n]``-> the n-th accelerator (TPU, else GPU)

``JTORCH_CUDA_IS_CPU=1`` makes ``cuda:n`` mean the local CPU device ``n + 1`` instead
(device 0 stays ``cpu``): with ``XLA_FLAGS=--xla_force_host_platform_device_count=N+1``,
multi-GPU code (``nn.DataParallel``, ``.to('cuda:3')``, a ``'cuda'`` device mesh) runs on a
laptop or in CI over N simulated accelerators, each a real jax device of its own.

A tensor on an accelerator reports ``device(type='cuda', index=n)`` when ``cuda``
means that accelerator, so scripts that test ``x.device.type == 'cuda'`` work.

Devices are this process's (`jax.local_devices`): in a multi-process world
(`jtorch.distributed`) the others' devices are not addressable here. Importing jtorch does
not start a jax backend, so `jax.distributed` can still be joined afterwards
(`reset_caches` forgets the devices seen before).
"""

from __future__ import annotations

import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.array import ArrayImpl as _ArrayImpl

from . import _programs

__all__ = ["device"]

# PyTorch's device types (c10's DeviceType names), and jtorch's `tpu`.
_TYPES = (
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
    "tpu",
)


class device:
    """Matches `torch.device`: `device('cuda:1')`, `device('cuda', 1)`, `device(0)` (= cuda:0)."""

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got ({type!r})"
            )
        if ":" in type:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was "
                    f"passed explicitly: {type}"
                )
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _TYPES:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, "
                "fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type "
                f"at start of device string: {type}"
            )
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = type, index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        # PyTorch compares devices only with devices: `torch.device('cpu') == 'cpu'` is False.
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __enter__(self) -> device:
        """`with torch.device(d):` makes `d` the default device of factories inside."""
        push_default(self)
        return self

    def __exit__(self, *exc) -> None:
        pop_default()

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


def _cuda_is_tpu() -> bool:
    return os.environ.get("JTORCH_CUDA_IS_TPU", "1") != "0"


def _cuda_is_cpu() -> bool:
    return os.environ.get("JTORCH_CUDA_IS_CPU", "0") == "1"


@functools.lru_cache(maxsize=None)
def accelerators(kind: str) -> tuple:
    """The jax devices a torch device type means (empty if none)."""

    def safe(platform):
        try:
            return tuple(jax.local_devices(backend=platform))
        except RuntimeError:
            return ()

    if kind == "cpu":
        return safe("cpu")
    if kind == "cuda":
        if _cuda_is_cpu():
            return safe("cpu")[1:]  # the first host device stays `cpu`
        gpus = safe("gpu")
        if gpus or not _cuda_is_tpu():
            return gpus
        return safe("tpu")
    if kind in ("tpu", "xla"):
        return safe("tpu") or safe("gpu")
    return ()


# The current accelerator index (`torch.cuda.set_device`): what `'cuda'` without an index
# names, as PyTorch's tensors made on device 'cuda' go to the current device.
CURRENT = {"cuda": 0}


def to_jax(d: device | str | int | None):
    """The jax device for a torch device (None means jax's default)."""
    if d is None:
        return None
    d = d if isinstance(d, device) else device(d)
    devs = accelerators(d.type)
    if not devs:
        if d.type == "cuda":
            raise AssertionError("Torch not compiled with CUDA enabled")
        raise RuntimeError(f"no jax device is available for torch device '{d}'")
    idx = d.index if d.index is not None else CURRENT.get(d.type, 0)
    if idx >= len(devs):
        raise RuntimeError(
            "CUDA error: invalid device ordinal"
            if d.type == "cuda"
            else f"device index {idx} out of range for '{d.type}'"
        )
    return devs[idx]


@functools.lru_cache(maxsize=64)
def from_jax(jdev) -> device:
    """The torch device a jax device is reported as."""
    platform = jdev.platform
    if platform == "cpu":
        if _cuda_is_cpu() and jdev in accelerators("cuda"):
            return device("cuda", accelerators("cuda").index(jdev))
        return device("cpu")  # torch has one CPU device
    if platform in ("gpu", "cuda", "rocm") or (platform == "tpu" and _cuda_is_tpu()):
        kind = "cuda"
    else:
        kind = "xla"
    return device(kind, accelerators(kind).index(jdev))


CPU = device("cpu")
META = device("meta")

# ---------------------------------------------------------------------------
# The default device of factories: `torch.set_default_device` sets the bottom of the stack,
# `with torch.device(d):` pushes and pops.

_default_stack: list = [None]
_jax_default = []  # jax's default device before jtorch first changed it


def default_device() -> device | None:
    """The default device of factories (None: the CPU)."""
    return _default_stack[-1]


def _sync_jax_default() -> None:
    # Arrays are made where jax's default device is; the meta device has no jax device.
    if not _jax_default:
        _jax_default.append(jax.config.jax_default_device)
    d = _default_stack[-1]
    jdev = _jax_default[0] if d is None or d.type in ("cpu", "meta") else to_jax(d)
    if jax.config.jax_default_device != jdev:
        jax.config.update("jax_default_device", jdev)


def set_default(d) -> None:
    """Matches `torch.set_default_device`."""
    _default_stack[0] = None if d is None else device(d)
    _sync_jax_default()


def push_default(d: device) -> None:
    _default_stack.append(d)
    _sync_jax_default()


def pop_default() -> None:
    if len(_default_stack) > 1:
        _default_stack.pop()
    _sync_jax_default()


def is_meta(d) -> bool:
    """Whether a `device=` argument names the meta device."""
    if d is None:
        return False
    if isinstance(d, device):
        return d.type == "meta"
    return isinstance(d, str) and d.split(":")[0] == "meta"


def from_host(data, dtype=None):
    """A jax array holding a private copy of host data (numpy arrays, nested sequences).

    jax may alias an aligned numpy buffer instead of copying it (on CPU, `jnp.asarray` with a
    dtype does), and a caller that goes on writing into its buffer (a reused numpy array, a
    PyTorch tensor's `.numpy()`) would then change an immutable jax array under jtorch. A
    copy made here is never seen by anyone else, so aliasing it is safe. The array is
    committed to its device, as other tensors' are (`commit`): `from_numpy` data and a
    DataLoader's batches would otherwise compile each kernel they reach a second time.
    """
    copy = np.array(data, dtype=dtype, copy=True)
    return commit(jnp.asarray(copy, dtype=copy.dtype))


@functools.lru_cache(maxsize=None)
def multi_device() -> bool:
    """True when tensors can live on more than one jax device (then ops check they agree)."""
    return (
        len(jax.local_devices()) > 1
        or len(accelerators("cpu")) > 1
        or jax.default_backend() != "cpu"
    )


@functools.lru_cache(maxsize=None)
def several_local() -> bool:
    """True when a platform has several devices in this process (8 simulated CPU devices,
    a host with several GPUs): arrays may then be laid out over a mesh of them. A host with
    one GPU beside its CPU has two devices, one of each kind: its CPU tensors still take the
    host paths of one device (`_host`, `_rows`)."""
    return len(jax.local_devices()) > 1 or len(accelerators("cpu")) > 1


def use_cpu_by_default() -> None:
    """Makes jax allocate on the CPU by default, as torch does, even on an accelerator host.

    Said by platform name, which jax resolves to this process's first CPU device when it
    first allocates: naming a device object here would start jax's backends at import.
    """
    jax.config.update("jax_default_device", "cpu")


def reset_caches() -> None:
    """Forgets the jax devices seen so far (jax's backends were restarted)."""
    accelerators.cache_clear()
    from_jax.cache_clear()
    multi_device.cache_clear()
    several_local.cache_clear()


def commit(arr):
    """`arr` committed to its device (the same buffer), in a process with one device.

    jax compiles a program again for an input it met uncommitted that comes committed (the
    placement is part of its key), and a tensor turns from one to the other when a kernel
    with a committed input rewrites it: a parameter made by `zeros` meets committed
    gradients in the optimizer's step, and every program it reaches would compile twice.
    So factories, draws and optimizer state are made committed, as data and gradients are.
    With several devices, uncommitted arrays stay so: jax moves them to laid-out ones, and a
    CPU scalar (an optimizer's `step`) into a program on an accelerator.
    """
    if type(arr) is not _ArrayImpl or arr.committed or multi_device():
        return arr
    return _programs.to_device(arr, next(iter(arr.devices())), True)


def place_like(value, like):
    """`value` (numpy data, a Python number, or a jax array) as a jax array on the device of
    the jax array `like`.

    What an op works out on the host (index positions from a list or a mask, `nonzero`'s
    result, a quantile's `q`) or keeps on the CPU (a generator's key) must meet its inputs
    where they are: on a CUDA device, a CPU array beside them is refused. With one device,
    or a `like` that is traced or laid out over several devices, it is left where jax puts it.
    """
    if not multi_device() or isinstance(like, jax.core.Tracer) or not hasattr(like, "devices"):
        return jnp.asarray(value)
    devs = like.devices()
    if len(devs) != 1:
        return jnp.asarray(value)
    if not isinstance(value, jax.Array):
        value = jnp.asarray(value)  # (a Python number stays weakly typed)
    elif isinstance(value, jax.core.Tracer) or value.devices() == devs:
        return value
    return jax.device_put(value, next(iter(devs)))


def check_same_device(arrays, cpu_scalars: bool = False) -> tuple:
    """PyTorch's error when an op's tensor inputs sit on different devices.

    Returns the arrays. With `cpu_scalars` (an elementwise op: PyTorch's TensorIterator takes
    a 0-dim CPU tensor beside tensors on an accelerator, `x.cuda() * torch.tensor(2.0)`), a
    0-dim array on the CPU is moved to the other inputs' device instead of refused.
    """
    arrays = tuple(arrays)
    first = None
    scalars = []
    for i, a in enumerate(arrays):
        if isinstance(a, jax.core.Tracer) or not hasattr(a, "devices"):
            continue
        devs = a.devices()
        if len(devs) > 1:
            # Laid out over a mesh of local devices (a DTensor's array): jax moves the
            # uncommitted single-device operands onto the mesh.
            continue
        if cpu_scalars and a.ndim == 0 and from_jax(next(iter(devs))).type == "cpu":
            scalars.append(i)
            continue
        if first is None:
            first = devs
        elif devs != first:
            d1, d2 = (from_jax(next(iter(x))) for x in (first, devs))
            if d1 == d2:  # two host devices both report as 'cpu'
                d1, d2 = (f"cpu:{next(iter(x)).id}" for x in (first, devs))
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at "
                f"least two devices, {d1} and {d2}!"
            )
    if not scalars or first is None:
        return arrays
    target = next(iter(first))
    moved = list(arrays)
    for i in scalars:
        if moved[i].devices() != first:
            moved[i] = jax.device_put(moved[i], target)
    return tuple(moved)
