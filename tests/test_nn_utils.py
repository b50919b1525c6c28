"""`nn.utils`: BatchNorm fusion (closed forms), skip_init, stateless.functional_call and
the conv weight memory-format conversion."""

import numpy as np
import pytest

import jtorch
from jtorch import nn


def _conv_bn(cls=nn.Conv2d, bn_cls=nn.BatchNorm2d):
    conv, bn = cls(1, 1, 1), bn_cls(1, eps=1.0)
    with jtorch.no_grad():
        conv.weight.fill_(2.0)
        conv.bias.fill_(1.0)
        bn.weight.fill_(3.0)
        bn.bias.fill_(0.5)
        bn.running_mean.fill_(1.0)
        bn.running_var.fill_(3.0)
    return conv.eval(), bn.eval()


def test_fuse_conv_and_linear_bn():
    # 1/sqrt(var + eps) = 1/2: weight 2*3/2 = 3, bias (1 - 1)*3/2 + 0.5 = 0.5.
    for cls, bn_cls, fuse in (
        (nn.Conv2d, nn.BatchNorm2d, nn.utils.fuse_conv_bn_eval),
        (nn.Linear, nn.BatchNorm1d, nn.utils.fuse_linear_bn_eval),
    ):
        m, bn = _conv_bn(cls, bn_cls)
        fused = fuse(m, bn)
        assert fused is not m and m.weight.flatten().tolist() == [2.0]
        assert fused.weight.flatten().tolist() == [3.0] and fused.bias.tolist() == [0.5]
        assert isinstance(fused.weight, nn.Parameter) and fused.weight.is_leaf
    w, b = nn.utils.fusion.fuse_conv_bn_weights(
        jtorch.ones(2, 3, 1, requires_grad=True),
        None,
        jtorch.zeros(3),
        jtorch.full((3,), 3.0),
        1.0,
        None,
        None,
        transpose=True,
    )
    assert tuple(w.shape) == (2, 3, 1) and np.allclose(w.detach().numpy(), 0.5)
    assert b.tolist() == [0.0, 0.0, 0.0] and not b.requires_grad and w.requires_grad
    m, bn = _conv_bn()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(m.train(), bn)
    with pytest.raises(AssertionError, match="linear.out_features=1 and bn.num_features=3"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(2, 1).eval(), nn.BatchNorm1d(3).eval())


def test_skip_init_stateless_memory_format():
    jtorch.manual_seed(0)
    a = jtorch.rand(3)
    jtorch.manual_seed(0)
    m = nn.utils.skip_init(nn.Linear, 3, 2, bias=False)
    assert bool((jtorch.rand(3) == a).all())  # construction drew no numbers
    assert tuple(m.weight.shape) == (2, 3) and m.bias is None and m.weight.requires_grad
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)

    lin = nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="use `torch.func.functional_call` instead"):
        y = nn.utils.stateless.functional_call(
            lin, {"weight": jtorch.ones(1, 2), "bias": jtorch.zeros(1)}, (jtorch.ones(1, 2),)
        )
    assert y.tolist() == [[2.0]]

    seq = nn.Sequential(nn.Conv2d(2, 2, 1), nn.Sequential(nn.ConvTranspose2d(2, 2, 1)))
    before = [p.detach().clone() for p in seq.parameters()]
    assert nn.utils.convert_conv2d_weight_memory_format(seq, jtorch.channels_last) is seq
    assert all(bool((x == y).all()) for x, y in zip(before, seq.parameters()))
