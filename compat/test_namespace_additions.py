"""Names scripts reach that jtorch added from the namespace scan (`compat/namespace_scan.py`):
`torch.onnx`'s public surface, small top-level functions, and the subsystems jtorch does not
have, which import and then raise a clear ImportError."""

import importlib
import warnings

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def test_onnx_public_names():
    import torch.onnx

    import jtorch.onnx

    assert [n for n in torch.onnx.__all__ if not hasattr(jtorch.onnx, n)] == []
    for name in ("TrainingMode", "OperatorExportTypes"):
        assert list(getattr(jtorch.onnx, name).__members__) == list(
            getattr(torch.onnx, name).__members__
        )
    assert (jtorch.onnx.producer_name, jtorch.onnx.producer_version) == (
        torch.onnx.producer_name,
        torch.onnx.producer_version,
    )
    for name in (
        "OnnxExporterError",
        "OnnxExporterWarning",
        "SymbolicValueError",
        "UnsupportedOperatorError",
    ):
        want = [c.__name__ for c in getattr(torch.onnx.errors, name).__mro__]
        assert [c.__name__ for c in getattr(jtorch.onnx.errors, name).__mro__] == want
    assert jtorch.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    with pytest.raises(jtorch.onnx.OnnxExporterError, match="jtorch.interop.functional"):
        jtorch.onnx.export(jtorch.nn.Linear(1, 1), (jtorch.ones(1, 1),))


def test_onnx_select_model_mode_for_export():
    for lib in (torch, jtorch):
        m = lib.nn.Linear(1, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.onnx.select_model_mode_for_export(m, lib.onnx.TrainingMode.EVAL):
                assert m.training is False
        assert m.training is True


def test_exportable_module_subclass():
    for lib in (torch, jtorch):

        class M(lib.onnx.ExportableModule):
            def forward(self, x):
                return x * 2

            def example_arguments(self):
                return (lib.ones(2),), None

        assert M()(lib.ones(2)).tolist() == [2.0, 2.0]
        with pytest.raises(TypeError):
            lib.onnx.ExportableModule()


CASES = {
    "is_vulkan_available": lambda L: L.is_vulkan_available(),
    "is_distributed": lambda L: L.is_distributed(L.ones(2)),
    "cudnn_is_acceptable": lambda L: L.cudnn_is_acceptable(L.ones(2)),
    "index_put_": lambda L: (
        lambda x: (L.index_put_(x, (L.tensor([1]),), L.tensor(5.0)), x.tolist())[1]
    )(L.ones(3)),
    "detach_": lambda L: (lambda y: (L.detach_(y) is y, y.requires_grad))(
        L.ones(2, requires_grad=True) * 2
    ),
    "dsmm": lambda L: L.dsmm(
        L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)), L.ones(2, 3)
    ).tolist(),
    "hsmm": lambda L: (
        lambda r: (str(r.layout), r._indices().tolist(), r._values().tolist(), r.is_coalesced())
    )(L.hsmm(L.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)), L.ones(2, 3))),
    "GradScaler": lambda L: L.GradScaler is L.amp.GradScaler,
    "fork_wait": lambda L: L.wait(L.fork(lambda a: a + 1, L.ones(1))).tolist(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_top_level(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert CASES[name](jtorch) == CASES[name](torch)


@pytest.mark.parametrize(
    "module,name",
    [
        ("jtorch.ao.quantization", "QuantStub"),
        ("jtorch.quantization", "quantize_dynamic"),
        ("jtorch.nn.quantized", "Linear"),
        ("jtorch.nested", "nested_tensor"),
        ("jtorch.utils.cpp_extension", "load"),
        ("jtorch.utils.benchmark", "Timer"),
    ],
)
def test_absent_subsystems_import_then_say_so(module, name):
    mod = importlib.import_module(module)
    with pytest.raises(ImportError, match="is not available in jtorch"):
        getattr(mod, name)


def test_model_zoo_is_hub():
    from torch.utils import model_zoo as t

    from jtorch.utils import model_zoo as j

    assert j.load_url is jtorch.hub.load_state_dict_from_url
    assert t.load_url is torch.hub.load_state_dict_from_url
