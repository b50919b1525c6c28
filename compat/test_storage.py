"""Storage parity: untyped/typed storages as libraries read them (sizes, byte windows, data
pointers relative to each other, constructors, conversions back to tensors)."""

import ctypes
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - compared by type and message
        return (type(e).__name__, str(e).split("\n")[0])


def _mem(ptr, n):
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_ubyte)), (n,)).tolist()


CASES = {
    "sizes": lambda L: (
        lambda s: (
            s.nbytes(),
            len(s),
            s.size(),
            s.element_size(),
            s[2],
            type(s).__name__,
            s.device.type,
            s.is_shared(),
            s.type(),
        )
    )(L.arange(6, dtype=L.int16).untyped_storage()),
    "window": lambda L: (
        lambda s: (
            s[1:5].nbytes(),
            s[1:5].data_ptr() - s.data_ptr(),
            list(s[1:5]),
            s[4:].tolist(),
            repr(s[0:2]),
        )
    )(L.arange(3, dtype=L.int16).untyped_storage()),
    "window_write": lambda L: (lambda t: (t.untyped_storage()[2:4].fill_(1), t.tolist())[1])(
        L.zeros(3, dtype=L.int16)
    ),
    "index_error": lambda L: L.ones(1).untyped_storage()[4],
    "ctor_size": lambda L: (L.UntypedStorage(4).nbytes(), L.UntypedStorage(4).device.type),
    "ctor_list": lambda L: list(L.UntypedStorage([1, 2, 3])),
    "from_buffer": lambda L: L.UntypedStorage.from_buffer(b"\x01\x02\x03", dtype=L.uint8).tolist(),
    "byte_from_buffer": lambda L: (
        lambda b: (type(b).__name__, list(b), str(b.dtype), L.ByteTensor(b).tolist())
    )(L.ByteStorage._from_buffer(b"abc")),
    "typed_wrap": lambda L: (
        lambda s: (lambda ts: (ts.size(), str(ts.dtype), ts.tolist(), ts.nbytes()))(
            L.TypedStorage(wrap_storage=s, dtype=L.int16, _internal=True)
        )
    )(L.arange(4, dtype=L.int16).untyped_storage()),
    "typed_list": lambda L: L.TypedStorage([1, 2], dtype=L.float64).tolist(),
    "data_ptr_offsets": lambda L: (
        lambda z: (
            z[1].data_ptr() - z.data_ptr(),
            z[:, 2].data_ptr() - z.data_ptr(),
            z.untyped_storage().data_ptr() == z.data_ptr(),
            z[1:].untyped_storage().nbytes(),
            z.nbytes,
            z[1:].nbytes,
        )
    )(L.arange(12, dtype=L.float32).view(3, 4)),
    "empty_ptr": lambda L: (L.empty(0).data_ptr(), L.empty(0).untyped_storage().data_ptr()),
    "clone_distinct": lambda L: (
        lambda a: (
            a.clone().data_ptr() != a.data_ptr(),
            a.detach().data_ptr() == a.data_ptr(),
            a.view(2, 2).data_ptr() == a.data_ptr(),
        )
    )(L.ones(4)),
    "memory": lambda L: (lambda y: _mem(y.data_ptr(), 8))(L.tensor([1.5, -2.0])),
    "view_memory": lambda L: (lambda y: _mem(y[1].data_ptr(), 4))(L.tensor([1.5, -2.0])),
    "asarray_window": lambda L: (
        L.asarray(L.arange(4, dtype=L.int32).untyped_storage()[4:12], dtype=L.uint8)
        .view(dtype=L.int32)
        .tolist()
    ),
    "layout": lambda L: (
        repr(L.ones(1).layout),
        L.ones(1).layout == L.strided,
        L.ones(1).is_sparse,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_storage(name):
    assert _outcome(lambda: CASES[name](jtorch)) == _outcome(lambda: CASES[name](torch))


def test_from_file(tmp_path):
    p = os.path.join(tmp_path, "f.bin")
    with open(p, "wb") as f:
        f.write(bytes(range(10)))
    for L in (torch, jtorch):
        assert L.UntypedStorage.from_file(p, False, 6).tolist() == [0, 1, 2, 3, 4, 5]
