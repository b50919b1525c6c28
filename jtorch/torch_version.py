"""`torch.torch_version.TorchVersion`: a version string that compares as a version."""

from __future__ import annotations

import re

_PRE = {"a": 0, "b": 1, "rc": 2}


def _key(v) -> tuple:
    """A sortable key for "2.13.0", "2.1.0rc1", "2.0.0+cpu", (2, 0) or [1, 8]."""
    if isinstance(v, (tuple, list)):
        v = ".".join(str(x) for x in v)
    if not isinstance(v, str):
        raise TypeError(f"Cannot compare TorchVersion with {type(v).__name__}")
    m = re.match(r"v?(\d+(?:\.\d+)*)(?:\.?(a|b|rc)(\d*))?(?:\.?dev(\d*))?", v.strip())
    if m is None:
        raise ValueError(f"Invalid version: {v!r}")
    release = [int(x) for x in m.group(1).split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    if m.group(2):
        pre = (_PRE[m.group(2)], int(m.group(3) or 0))
    elif m.group(4) is not None:
        pre = (-1, int(m.group(4) or 0))  # 2.0.dev1 < 2.0a0
    else:
        pre = (3, 0)  # a final release sorts after its pre-releases
    return tuple(release), pre


class TorchVersion(str):
    """Matches `torch.torch_version.TorchVersion`: `torch.__version__ >= "1.8"`, `>= (2, 0)`."""

    def __eq__(self, other):
        try:
            return _key(self) == _key(other)
        except (TypeError, ValueError):
            return str.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __lt__(self, other):
        return _key(self) < _key(other)

    def __le__(self, other):
        return _key(self) <= _key(other)

    def __gt__(self, other):
        return _key(self) > _key(other)

    def __ge__(self, other):
        return _key(self) >= _key(other)

    __hash__ = str.__hash__
