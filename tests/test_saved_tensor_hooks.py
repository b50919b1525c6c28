"""Saved-tensor hooks and the CUDA-graph names (expected values from PyTorch's documented
behaviour: pack runs when a backward formula saves a tensor, unpack when it reads it)."""

import pytest

import jtorch as torch


def test_pack_and_unpack_wrap_what_backward_reads():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t.clone())
        return ("box", t)

    def unpack(box):
        unpacked.append(box[0])
        return box[1] * 2  # what backward sees: d(x*y)/dx = y doubled

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        z = (x * y).sum()
        w = (x + y).sum()  # add saves nothing
    assert len(packed) == 2
    z.backward()
    assert unpacked == ["box", "box"]
    assert x.grad.tolist() == [6.0, 8.0] and y.grad.tolist() == [2.0, 4.0]
    w.backward()
    assert len(unpacked) == 2


def test_save_on_cpu_keeps_gradients():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    with torch.autograd.graph.save_on_cpu():
        y = x.sin().sum()
    y.backward()
    assert torch.allclose(x.grad, x.detach().cos())


def test_disable_saved_tensors_hooks():
    with torch.autograd.graph.disable_saved_tensors_hooks("no hooks"):
        with pytest.raises(RuntimeError, match="no hooks"):
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass


def test_cuda_graph_names():
    assert torch.cuda.is_current_stream_capturing() is False
    assert len(torch.cuda.default_generators) == torch.cuda.device_count()  # () on a CPU
    with pytest.raises(RuntimeError, match="torch.compile"):
        torch.cuda.CUDAGraph()
    assert torch.cuda.random.manual_seed is torch.cuda.manual_seed
    assert torch.cuda.streams.Event is torch.cuda.Event
