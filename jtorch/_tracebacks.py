"""Tracebacks that show the user's code, as PyTorch's do.

PyTorch's ops are C++: an error raised in one shows the user's line, then the message.
jtorch's ops are Python over jax, so a traceback would list the registry's and the kernels'
frames, and jax appends a note ("For simplicity, JAX has removed its internal frames ...")
to every exception that passes through a jitted function, as a kernel's shape checks do.
`clean` takes both off an exception where it leaves a public op (the registry's generated
functions), and the `python -m jtorch` runner cleans an uncaught exception's whole chain.
Frames of jtorch's private modules (a path component starting with `_`) and of jax count
as internal; public modules (`jtorch/nn/modules/linear.py`) stay, as `torch/nn/...` frames
stay in PyTorch's tracebacks. Exceptions that look like a bug in jtorch rather than a
mistake in the call (AttributeError, KeyError, AssertionError, ...) keep every frame.

`JTORCH_TRACEBACK_FILTERING=off` keeps everything, for debugging jtorch itself.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
import types
import warnings

import jax
import jaxlib

__all__ = ["boundary", "clean", "clean_chain", "GENERATED_FILE", "user_stack", "warn_at_user_frame"]

GENERATED_FILE = "<jtorch>"  # the file name of the registry's generated functions
_ROOT = os.path.dirname(os.path.abspath(__file__)) + os.sep
_JAX = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (jax, jaxlib))
_JAX_NOTE = "For simplicity, JAX has removed its internal frames"
# the errors PyTorch raises for a bad call; anything else is more likely a jtorch bug
_USER_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError)


def _enabled() -> bool:
    return os.environ.get("JTORCH_TRACEBACK_FILTERING", "on").lower() != "off"


@functools.lru_cache(maxsize=4096)
def internal(filename: str) -> bool:
    """Whether a frame of this file is jtorch's or jax's machinery, not the user's code."""
    if filename == GENERATED_FILE or filename.startswith(_JAX):
        return True
    if filename.startswith(_ROOT):
        parts = filename[len(_ROOT) :].split(os.sep)
        return any(p.startswith("_") and p not in ("__init__.py", "__main__.py") for p in parts)
    return False


def clean(e: BaseException) -> None:
    """Drops jax's note and internal frames from `e` (in place), if it is a user error."""
    notes = getattr(e, "__notes__", None)
    if notes and any(_JAX_NOTE in n for n in notes):
        kept = [n for n in notes if _JAX_NOTE not in n]
        if kept:
            e.__notes__ = kept
        else:
            del e.__notes__
    if not isinstance(e, _USER_ERRORS) or not _enabled():
        return
    tb, kept, dropped = e.__traceback__, [], False
    while tb is not None:
        if internal(tb.tb_frame.f_code.co_filename):
            dropped = True
        else:
            kept.append(tb)
        tb = tb.tb_next
    if not dropped:
        return
    new = None
    for t in reversed(kept):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    e.__traceback__ = new


def clean_chain(e: BaseException) -> None:
    """`clean` on an exception and the exceptions it was raised from or during."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        clean(e)
        e = (
            e.__cause__
            if e.__cause__ is not None
            else (None if e.__suppress_context__ else e.__context__)
        )


def user_stack(skip: int = 1) -> list:
    """The calling stack up to the user's call into jtorch (oldest first), without internal
    frames, as `traceback.FrameSummary` entries, for messages that point at the user's code.
    """
    frames = traceback.extract_stack(sys._getframe(skip))
    if not _enabled():
        return list(frames)
    frames = [f for f in frames if not internal(f.filename)]
    while frames and frames[-1].filename.startswith(_ROOT):
        frames.pop()  # jtorch's own public frames below the user's call
    return frames


def boundary(fn):
    """`fn` as a public entry point: errors leaving it are `clean`ed (see `_gen` for ops)."""

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            clean(e)
            raise

    return entry


def warn_at_user_frame(message: str, category=UserWarning) -> None:
    """`warnings.warn` attributed to the innermost frame of the user's code."""
    f, level = sys._getframe(1), 2  # stacklevel 2 is our caller's frame
    while f is not None and internal(f.f_code.co_filename):
        f, level = f.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
