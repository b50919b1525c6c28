"""The registry's generated functions' code, kept between runs.

Each op's Python entry is built from source (`_registry._gen`: a function with the op's own
signature and fast argument binding); compiling ~1300 of them took ~0.1-0.17 s of every
`import jtorch` on a CPU (of ~0.8 s). Their code objects are kept beside the compile cache
(`_disk_cache.directory()`, marshal's format, per Python build), keyed by their source: a
source met again is not compiled, one not met is, and the file is rewritten with this
import's code once jtorch is imported (`save`). With the persistent cache off, nothing is
kept. A file that does not read back is ignored (and rewritten).
"""

from __future__ import annotations

import marshal
import os
import sys

from .. import _disk_cache

_state: dict = {"loaded": None, "used": {}, "new": False}


def _path() -> str | None:
    where = _disk_cache.directory()
    if where is None:
        return None
    return os.path.join(where, f"jtorch-op-code.{sys.implementation.cache_tag}.marshal")


def _load() -> dict:
    path = _path()
    if path is None:
        return {}
    try:
        with open(path, "rb") as f:
            codes = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return codes if isinstance(codes, dict) else {}


def compiled(src: str, filename: str):
    """`compile(src, filename, "exec")`, from the kept code where it was kept."""
    loaded = _state["loaded"]
    if loaded is None:
        loaded = _state["loaded"] = _load()
    code = loaded.get(src)
    if code is None or getattr(code, "co_filename", None) != filename:
        code = compile(src, filename, "exec")
        _state["new"] = True
    _state["used"][src] = code
    return code


def save() -> None:
    """Keeps the code this import used, where some of it was compiled (the end of jtorch's
    import). Written whole: a temporary file renamed into place."""
    used, new = _state["used"], _state["new"]
    _state.update(loaded={}, used={}, new=False)
    path = _path()
    if not new or path is None:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            marshal.dump(used, f)
        os.replace(tmp, path)
    except OSError:  # (a read-only or full disk: compiled again next time)
        try:
            os.remove(tmp)
        except OSError:
            pass
