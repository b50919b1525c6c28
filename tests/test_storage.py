"""Storages as libraries read them: layouts, real data pointers, byte windows, bytes in and
out (PyTorch's documented storage behaviour; the memory itself is checked through ctypes)."""

import ctypes
import os

import numpy as np
import pytest

import jtorch as torch


def _read(ptr: int, nbytes: int) -> np.ndarray:
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_ubyte)), (nbytes,))


def test_layout_is_strided():
    t = torch.ones(2)
    assert t.layout is torch.strided and repr(t.layout) == "torch.strided"
    assert t.layout != torch.sparse_coo and not t.is_sparse


def test_data_ptr_is_readable_memory():
    x = torch.tensor([[1.5, -2.0], [3.25, 4.0]])
    assert _read(x.data_ptr(), 16).view(np.float32).tolist() == [1.5, -2.0, 3.25, 4.0]
    row = x[1]
    assert row.data_ptr() == x.data_ptr() + 8
    assert _read(row.data_ptr(), 8).view(np.float32).tolist() == [3.25, 4.0]
    assert x.untyped_storage().data_ptr() == x.data_ptr() and x.nbytes == 16


def test_distinct_storages_have_distinct_addresses():
    a = torch.ones(4)
    b = a.clone()  # jax may share the buffer; the storages must not
    assert a.data_ptr() != b.data_ptr()
    assert a.detach().data_ptr() == a.data_ptr()  # detach shares the storage
    assert torch.empty(0).data_ptr() == 0


def test_untyped_storage_bytes_and_windows():
    s = torch.arange(6, dtype=torch.int16).untyped_storage()
    assert s.nbytes() == len(s) == 12 and s.element_size() == 1
    w = s[2:6]
    assert w.nbytes() == 4 and w.data_ptr() == s.data_ptr() + 2 and w.tolist() == [1, 0, 2, 0]
    w[0] = 9
    assert s[2] == 9
    with pytest.raises(IndexError, match="out of range for storage of size 12"):
        s[12]
    assert torch.asarray(w, dtype=torch.uint8).tolist() == [9, 0, 2, 0]


def test_storage_constructors(tmp_path):
    assert torch.UntypedStorage(3).nbytes() == 3
    assert torch.UntypedStorage([1, 2, 255]).tolist() == [1, 2, 255]
    b = torch.ByteStorage._from_buffer(b"abc")
    assert b.dtype is torch.uint8 and list(b) == [97, 98, 99]
    assert torch.ByteTensor(b).tolist() == [97, 98, 99]
    p = os.path.join(tmp_path, "f.bin")
    with open(p, "wb") as f:
        f.write(bytes(range(10)))
    assert torch.UntypedStorage.from_file(p, False, 6).tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(NotImplementedError, match="shared=True"):
        torch.UntypedStorage.from_file(p, True, 6)
    typed = torch.TypedStorage(
        wrap_storage=torch.UntypedStorage([0, 0, 128, 63]), dtype=torch.float32, _internal=True
    )
    assert typed.tolist() == [1.0] and typed.untyped().nbytes() == 4


def test_copy_clone_and_fill():
    s = torch.zeros(2, dtype=torch.uint8).untyped_storage()
    s.copy_(torch.UntypedStorage([7, 8]))
    c = s.clone()
    s.fill_(1)
    assert c.tolist() == [7, 8] and s.tolist() == [1, 1]
