"""Parity of the small namespaces libraries touch: `torch._check*`, `torch._utils`,
`torch.types`, `torch.return_types`, `torch.Event`/`Stream` on the CPU, `torch.xpu`/`mps`/
`mtia` of a CPU build, `torch.hub`'s cache, `torch.onnx`/`export` predicates, `torch.classes`,
`torch.fx` names and `symbolic_shapes` answers, `legacy_contiguous_format`, layouts."""

import collections
import pickle

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the exception type and message are compared
        return (type(e).__name__, str(e).split("\n")[0])
    return ("ok", repr(out))


def _raised(fn):
    """Whether `fn` raises a RuntimeError (jtorch's is also an AttributeError), and what."""
    try:
        fn()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "no error"


CASES = {
    "check_true": lambda L: L._check(True),
    "check_false": lambda L: L._check(False),
    "check_msg": lambda L: L._check(False, lambda: "bad size"),
    "check_not_bool": lambda L: L._check(1),
    "check_index": lambda L: L._check_index(False, lambda: "idx"),
    "check_value": lambda L: L._check_value(False),
    "check_type": lambda L: L._check_type(False, lambda: "t"),
    "check_not_impl": lambda L: L._check_not_implemented(False, lambda: "ni"),
    "check_tensor_all": lambda L: L._check_tensor_all(L.tensor([True, False])),
    "check_tensor_all_ok": lambda L: L._check_tensor_all(L.tensor([True, True])),
    "check_tensor_dtype": lambda L: L._check_tensor_all(L.tensor([1])),
    "assert": lambda L: L._assert(False, "boom"),
    "sym_types": lambda L: (
        isinstance(3, L.SymInt),
        isinstance(2.0, L.SymFloat),
        isinstance(True, L.SymBool),
        L.SymInt.__name__,
    ),
    "device_index_cpu": lambda L: L._utils._get_device_index("cpu"),
    "device_index_cpu_ok": lambda L: L._utils._get_device_index("cpu", True, True),
    "device_index_cuda2": lambda L: L._utils._get_device_index(L.device("cuda", 2)),
    "device_index_int": lambda L: L._utils._get_device_index(3),
    "device_index_noidx": lambda L: L._utils._get_device_index("cuda"),
    "element_size": lambda L: [
        L._utils._element_size(d) for d in (L.float16, L.int64, L.bool, L.complex64)
    ],
    "flatten_dense": lambda L: [
        t.tolist()
        for t in L._utils._unflatten_dense_tensors(
            L._utils._flatten_dense_tensors([L.ones(2), L.zeros(1, 2)]), [L.ones(2), L.zeros(1, 2)]
        )
    ],
    "return_types": lambda L: (
        L.return_types.max.__name__,
        L.return_types.max.__module__,
        isinstance(L.max(L.ones(2, 2), 0), L.return_types.max),
    ),
    "types": lambda L: (
        L.types.Number == (int | float | bool),
        L.types.Device == (L.device | str | int | None),
    ),
    "event_cpu": lambda L: (
        repr(L.Event(device=L.device("cpu"), blocking=True)),
        L.Event().query(),
        L.Event().synchronize(),
        L.Event().wait(),
    ),
    "event_record_cpu": lambda L: L.Event().record(),
    "stream_cpu": lambda L: (
        repr(L.Stream()),
        L.Stream().query(),
        L.Stream().synchronize(),
        L.Stream() == L.Stream(device="cpu"),
        (L.Stream().stream_id, L.Stream().device_index),
    ),
    "stream_record_cpu": lambda L: L.Stream().record_event(),
    "xpu": lambda L: (
        L.xpu.is_available(),
        L.xpu.device_count(),
        L.xpu.is_initialized(),
        L.xpu.manual_seed(1),
        L.xpu.empty_cache(),
    ),
    "xpu_sync": lambda L: L.xpu.synchronize(),
    "xpu_current": lambda L: L.xpu.current_device(),
    "mps_count": lambda L: L.mps.device_count(),
    "mps_sync": lambda L: L.mps.synchronize(),
    "mps_empty": lambda L: L.mps.empty_cache(),
    "mtia": lambda L: (L.mtia.is_available(), L.mtia.device_count()),
    "mtia_sync": lambda L: L.mtia.synchronize(),
    "onnx_exporting": lambda L: L.onnx.is_in_onnx_export(),
    "classes": lambda L: _raised(lambda: L.classes.xielu.XIELU()),
    "legacy_format": lambda L: (
        repr(L.legacy_contiguous_format),
        L.legacy_contiguous_format == L.contiguous_format,
    ),
    "layouts": lambda L: (
        repr(L.strided),
        repr(L.sparse_coo),
        L.ones(1).layout is L.strided,
        L.ones(1).layout != L.sparse_csr,
        type(L.strided).__name__,
        pickle.loads(pickle.dumps(L.strided)) is L.strided,
    ),
    "fx_names": lambda L: (
        isinstance(L.ones(1), L.fx.Proxy),
        isinstance(L.nn.Linear(1, 1), L.fx.GraphModule),
        L.fx._symbolic_trace.is_fx_tracing(),
    ),
    "fx_wrap_in_function": lambda L: L.fx.wrap(len),
    "fx_map_arg": lambda L: L.fx.node.map_arg((1, [2, {"a": 3}]), lambda n: n),
    "symbolic_shapes": lambda L: (
        L.fx.experimental.symbolic_shapes.guard_or_false(3 == 3),
        L.fx.experimental.symbolic_shapes.guard_or_true(1 > 2),
        L.fx.experimental.symbolic_shapes.statically_known_true(2 > 1),
        len(L.fx.experimental.symbolic_shapes.free_symbols(4)),
        len(L.fx.experimental.symbolic_shapes.free_unbacked_symbols(4)),
        L.fx.experimental.symbolic_shapes.sym_eq([1, 2], (1, 2)),
    ),
    "fx_pytree_spec": lambda L: L.fx._pytree.tree_flatten_spec(
        {"b": 2, "a": [1, 3]}, L.utils._pytree.tree_structure({"a": [0, 0], "b": 0})
    ),
    "hub_dir": lambda L: L.hub.get_dir(),
    "storage_module": lambda L: (
        L.storage.UntypedStorage is L.UntypedStorage,
        L.storage.TypedStorage is L.TypedStorage,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_small_namespaces(name):
    import torch.fx._pytree  # noqa: F401
    import torch.fx.experimental.symbolic_shapes  # noqa: F401

    import jtorch.fx._pytree  # noqa: F401
    import jtorch.fx.experimental.symbolic_shapes  # noqa: F401

    assert _outcome(lambda: CASES[name](jtorch)) == _outcome(lambda: CASES[name](torch))


def test_rebuild_tensor_v2_over_a_storage():
    def run(L):
        st = L.arange(12, dtype=L.float32).untyped_storage()
        typed = L.TypedStorage(wrap_storage=st, dtype=L.float32, _internal=True)
        t = L._utils._rebuild_tensor_v2(typed, 2, (2, 3), (3, 1), False, collections.OrderedDict())
        return t.tolist(), t.stride(), t.storage_offset(), t.requires_grad

    assert run(jtorch) == run(torch)
