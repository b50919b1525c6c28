"""`torch.utils.hooks.RemovableHandle` parity (ids, removal, pickling) and the handles
module and tensor hook registrations return."""

import collections
import pickle

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _run(L):
    H = L.utils.hooks.RemovableHandle
    hooks, extra = collections.OrderedDict(), collections.OrderedDict()
    h = H(hooks, extra_dict=extra)
    hooks[h.id] = extra[h.id] = 1
    out = [type(h).__name__, hasattr(h, "hooks_dict_ref"), len(h.extra_dict_ref)]
    h.remove()
    out += [len(hooks), len(extra)]
    h2 = pickle.loads(pickle.dumps(h))
    out += [h2.id == h.id, H.next_id > h.id]
    m = L.nn.Linear(2, 2)
    handles = [
        m.register_forward_hook(lambda *a: None),
        m.register_forward_pre_hook(lambda *a: None),
        L.ones(1, requires_grad=True).register_hook(lambda g: g),
    ]
    out.append([isinstance(x, H) for x in handles])
    return out


def test_removable_handle():
    assert _run(jtorch) == _run(torch)
