"""Making `import torch` resolve to jtorch (the `torch` alias).

A meta-path finder maps `torch` and every `torch.x.y` onto `jtorch` and
`jtorch.x.y`; each module is registered under both names, so
`torch.nn.functional is jtorch.nn.functional`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

_ALIASES = {"torch": "jtorch"}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if head not in _ALIASES:
            return None
        real = _ALIASES[head] + ("." + rest if rest else "")
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


def install_as_torch() -> None:
    """Makes `import torch` (and `torch.*`) import jtorch from now on, in this process."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    for name, mod in list(sys.modules.items()):
        if name == "jtorch" or name.startswith("jtorch."):
            sys.modules.setdefault("torch" + name[len("jtorch"):], mod)
