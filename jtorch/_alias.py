"""Making `import torch` resolve to jtorch (the `torch` alias).

A meta-path finder maps `torch` and every `torch.x.y` onto `jtorch` and
`jtorch.x.y`; each module is registered under both names, so
`torch.nn.functional is jtorch.nn.functional`.

Child interpreters do not inherit a meta-path finder: `install_in_children` puts a
directory holding a `torch` package that is jtorch (`jtorch/_shim`) first on the
`PYTHONPATH` that children inherit.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
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


SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")


def install_in_children() -> None:
    """Makes `import torch` mean jtorch in child Python processes started from now on.

    Prepends `SHIM_DIR` to `os.environ["PYTHONPATH"]`, which `subprocess` runs of Python
    inherit, and to `sys.path`, which spawned and forkserver multiprocessing children are
    given (in this process the meta-path finder answers for `torch` before `sys.path`).
    """
    if SHIM_DIR not in sys.path:
        sys.path.insert(0, SHIM_DIR)
    old = os.environ.get("PYTHONPATH", "")
    parts = [p for p in old.split(os.pathsep) if p]
    if parts[:1] != [SHIM_DIR]:
        os.environ["PYTHONPATH"] = os.pathsep.join([SHIM_DIR] + parts)
