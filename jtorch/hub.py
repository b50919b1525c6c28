"""`torch.hub`: the hub's cache directory and loading from it.

jtorch does not reach the network: a checkpoint already in the hub cache
(`get_dir()/checkpoints`) loads as in PyTorch; one that would have to be downloaded raises.
"""

from __future__ import annotations

import os
import urllib.parse

__all__ = [
    "download_url_to_file",
    "get_dir",
    "help",
    "list",
    "load",
    "load_state_dict_from_url",
    "set_dir",
]

_hub_dir = [None]


def _get_torch_home() -> str:
    return os.path.expanduser(
        os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch"))
    )


def get_dir() -> str:
    """Matches `torch.hub.get_dir`: `$TORCH_HOME/hub` unless `set_dir` changed it."""
    if os.getenv("TORCH_HUB"):
        import warnings

        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    return _hub_dir[0] if _hub_dir[0] is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    _hub_dir[0] = os.path.expanduser(os.fspath(d))


def _no_network(what: str) -> RuntimeError:
    return RuntimeError(
        f"torch.hub.{what}: jtorch does not download from the network; put "
        "the file in the hub cache (torch.hub.get_dir()) or load it from a "
        "local path"
    )


def load_state_dict_from_url(
    url: str,
    model_dir=None,
    map_location=None,
    progress=True,
    check_hash=False,
    file_name=None,
    weights_only=False,
):
    """Matches `torch.hub.load_state_dict_from_url` for a file already in the cache."""
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        raise _no_network(f"load_state_dict_from_url({url!r}) (not in {model_dir})")
    from .serialization import load as _load

    return _load(cached, map_location=map_location, weights_only=weights_only)


def download_url_to_file(url, dst, hash_prefix=None, progress=True) -> None:
    raise _no_network(f"download_url_to_file({url!r})")


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo=None,
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """Matches `torch.hub.load` with `source="local"`: calls `model` from the repo's
    hubconf.py."""
    if source != "local":
        raise _no_network(f"load({repo_or_dir!r}, source={source!r})")
    import importlib.util
    import sys

    path = os.path.join(repo_or_dir, "hubconf.py")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    hub = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_or_dir)
    try:
        spec.loader.exec_module(hub)
    finally:
        sys.path.remove(repo_or_dir)
    entry = getattr(hub, model, None)
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry(*args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):  # noqa: A001
    raise _no_network(f"list({github!r})")


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):  # noqa: A001
    raise _no_network(f"help({github!r}, {model!r})")
