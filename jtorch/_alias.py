"""Making `import torch` resolve to jtorch (the `torch` alias).

A meta-path finder maps `torch` and every `torch.x.y` onto `jtorch` and
`jtorch.x.y`; each module is registered under both names, so
`torch.nn.functional is jtorch.nn.functional`.

Libraries gate features on package metadata (`importlib.metadata.version("torch")`,
`importlib.util.find_spec("torch")`): the finder answers both as for PyTorch of the
version jtorch follows, ahead of any real torch installed beside it. The metadata is the
`torch-<version>.dist-info` folder in `jtorch/_shim`, which child interpreters also find
first on their `sys.path`.

Child interpreters do not inherit a meta-path finder: `install_in_children` puts a
directory holding a `torch` package that is jtorch (`jtorch/_shim`) first on the
`PYTHONPATH` that children inherit.
"""

from __future__ import annotations

import functools
import glob
import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import os
import pathlib
import re
import sys

_ALIASES = {"torch": "jtorch"}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass

    # What `runpy` asks of a loader, so `python -m jtorch -m torch.x.y` runs jtorch.x.y's code.
    def _real_loader(self):
        return importlib.util.find_spec(self.target).loader

    def get_code(self, fullname):
        return self._real_loader().get_code(self.target)

    def get_source(self, fullname):
        return self._real_loader().get_source(self.target)

    def is_package(self, fullname) -> bool:
        return self._real_loader().is_package(self.target)

    def get_filename(self, fullname):
        return self._real_loader().get_filename(self.target)


def _normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them (`Torch`, `torch_` ... are `torch`)."""
    return re.sub(r"[-_.]+", "_", name).lower()


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if head not in _ALIASES:
            return None
        real = _ALIASES[head] + ("." + rest if rest else "")
        real_spec = importlib.util.find_spec(real)
        if real_spec is None:
            return None
        # Where the code lives, as PyTorch's spec says where torch's does.
        spec = importlib.util.spec_from_loader(
            fullname,
            _AliasLoader(real),
            origin=real_spec.origin,
            is_package=real_spec.submodule_search_locations is not None,
        )
        if real_spec.submodule_search_locations is not None:
            spec.submodule_search_locations = list(real_spec.submodule_search_locations)
        spec.has_location = real_spec.has_location
        return spec

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        """The `torch` distribution, found before any other finder's (a real torch's)."""
        name = context.name
        if name is not None and _normalize(name) not in _ALIASES:
            return iter(())
        if name is None and SHIM_DIR in sys.path:
            return iter(())  # a listing of all: the path finder lists the shim's already
        return iter([torch_distribution()])


@functools.lru_cache(maxsize=1)
def torch_distribution() -> importlib.metadata.Distribution:
    """The package metadata `torch` answers with under the alias (Name: torch, Version...)."""
    (info,) = glob.glob(os.path.join(SHIM_DIR, "torch-*.dist-info"))
    return importlib.metadata.PathDistribution(pathlib.Path(info))


def install_as_torch() -> None:
    """Makes `import torch` (and `torch.*`) import jtorch from now on, in this process."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    for name, mod in list(sys.modules.items()):
        if name == "jtorch" or name.startswith("jtorch."):
            sys.modules.setdefault("torch" + name[len("jtorch") :], mod)


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
