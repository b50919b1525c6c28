"""`torch.utils.hooks.RemovableHandle` (PyTorch's semantics: ids, weak dicts, extras)."""

import collections
import gc
import pickle

from jtorch.utils.hooks import RemovableHandle, unserializable_hook


def test_remove_from_hooks_and_extra_dicts():
    hooks, extra = collections.OrderedDict(), collections.OrderedDict()
    h = RemovableHandle(hooks, extra_dict=[extra])
    hooks[h.id] = extra[h.id] = "fn"
    with h:
        pass
    assert not hooks and not extra
    h.remove()  # twice is harmless


def test_ids_increase_and_dicts_are_weak():
    a, b = RemovableHandle(collections.OrderedDict()), RemovableHandle(collections.OrderedDict())
    assert b.id == a.id + 1
    d = collections.OrderedDict()
    h = RemovableHandle(d)
    del d
    gc.collect()
    assert h.hooks_dict_ref() is None
    h.remove()


def test_pickle_keeps_the_id():
    d = collections.OrderedDict()
    h = RemovableHandle(d)
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id and RemovableHandle.next_id > h.id


def test_unserializable_hook_marks():
    def f(grad):
        return grad

    assert unserializable_hook(f).__torch_unserializable__ is True
