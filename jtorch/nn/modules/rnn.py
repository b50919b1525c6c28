"""`RNNBase`, `RNN`, `LSTM`, `GRU` and the single-step `RNNCell`, `LSTMCell`, `GRUCell`.

The recurrences run in one fused kernel per call (`jtorch/_ops/nn/rnn.py`): every layer
and direction, with the time loop as a `jax.lax.scan`, differentiated as a whole.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import jtorch

from ... import _random, empty
from ..._ops.nn.rnn import rnn_cell_kernel, rnn_kernel
from ..._tensor import Tensor
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, padded_index
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_LABEL = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """Matches `torch.nn.RNNBase`: parameters, checks and the shared forward."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"dropout option adds dropout after all but last recurrent layer, so "
                f"non-zero dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden_size)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: there is no cuDNN weight buffer to compact."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes) -> None:
        wdt = self._flat_weights[0].dtype
        if input.dtype != wdt:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({wdt}). Convert input: input.to({wdt}), or convert model: "
                f"model.to({input.dtype})"
            )
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _zeros(self, input: Tensor, batch: int, size: int) -> Tensor:
        num_directions = 2 if self.bidirectional else 1
        return jtorch.zeros(
            self.num_layers * num_directions, batch, size, dtype=input.dtype, device=input.device
        )

    def _run(self, input: Tensor, hx: Tensor, cx, batch_sizes):
        """The fused kernel over every layer and direction: (output, h_n[, c_n]).

        Packed data runs padded: gathered into (T, B, I) here, run with its lengths, and
        the outputs gathered back into packed rows.
        """
        lengths = pack_index = None
        batch_first = self.batch_first
        if batch_sizes is not None:
            bs = np.asarray(batch_sizes.tolist(), dtype=np.int64)
            idx = padded_index(bs, len(bs))
            n = input.shape[0]
            rows = jtorch.cat([input, input.new_zeros((1, input.shape[1]))])
            input = rows.index_select(0, jtorch.tensor(idx.reshape(-1), device=input.device))
            input = input.reshape(idx.shape + (rows.shape[1],))
            lengths = jtorch.tensor((idx < n).sum(0), device=input.device)
            t, b = np.nonzero(idx < n)
            pack_index = jtorch.tensor(t * idx.shape[1] + b, device=input.device)
            batch_first = False
        p = self.dropout if self.training else 0.0
        rng = _random.key_for(None, input) if p > 0 and self.num_layers > 1 else None
        out = rnn_kernel(
            input,
            hx,
            cx,
            tuple(self._flat_weights),
            lengths,
            rng,
            self.mode,
            self.bias,
            self.num_layers,
            p,
            self.training and p > 0,
            self.bidirectional,
            batch_first,
            self.proj_size,
        )
        if pack_index is not None:
            y = out[0]
            y = y.reshape(-1, y.shape[-1]).index_select(0, pack_index)
            out = (y,) + tuple(out[1:])
        return out

    def forward(self, input, hx=None):
        label = _LABEL[self.mode]
        orig_input = input
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            is_batched, batch_dim = True, 1
            if hx is None:
                hx = self._zeros(input, max_batch_size, self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                tail = " tensor" if label == "RNN" else ""
                raise ValueError(
                    f"{label}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead"
                )
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError(
                            f"For unbatched 2-D input, hx should also be 2-D but "
                            f"got {hx.dim()}-D tensor"
                        )
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
                )
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            if hx is None:
                hx = self._zeros(input, max_batch_size, self.hidden_size)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, hx, None, batch_sizes)
        if isinstance(orig_input, PackedSequence):
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        elif not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    """Matches `torch.nn.RNN`: Elman RNN with tanh or relu."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class GRU(RNNBase):
    """Matches `torch.nn.GRU`."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Matches `torch.nn.LSTM`, including projections (`proj_size`)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return (_apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation))

    def forward(self, input, hx=None):
        orig_input = input
        batch_sizes = None
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            is_batched, batch_dim = True, 1
            if hx is None:
                hx = (
                    self._zeros(input, max_batch_size, real_hidden_size),
                    self._zeros(input, max_batch_size, self.hidden_size),
                )
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(input, hx, batch_sizes)
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            sorted_indices = unsorted_indices = None
            if hx is None:
                hx = (
                    self._zeros(input, max_batch_size, real_hidden_size),
                    self._zeros(input, max_batch_size, self.hidden_size),
                )
            else:
                want = 3 if is_batched else 2
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "batched 3-D" if is_batched else "unbatched 2-D"
                    raise RuntimeError(
                        f"For {kind} input, hx and cx should also be {want}-D "
                        f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                    )
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, batch_sizes)
        output, h_n, c_n = self._run(input, hx[0], hx[1], batch_sizes)
        hidden = (h_n, c_n)
        if isinstance(orig_input, PackedSequence):
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        elif not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (h_n.squeeze(1), c_n.squeeze(1))
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNNCellBase(Module):
    """Matches `torch.nn.RNNCellBase`: the parameters shared by the single-step cells."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name: str, input: Tensor, hx, n_states: int):
        """Checks and batches the arguments as `torch._VF.<cell>` expects them."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = None if hx is None else (tuple(hx) if n_states == 2 else (hx,))
        if states is not None:
            for i, v in enumerate(states):
                if v.dim() not in (1, 2):
                    what = f"hx[{i}]" if n_states == 2 else "hidden"
                    raise ValueError(
                        f"{name}: Expected {what} to be 1D or 2D, got {v.dim()}D instead"
                    )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if states is None:
            z = jtorch.zeros(
                input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
            )
            states = (z,) * n_states
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}"
            )
        for i, s in enumerate(states):
            if input.size(0) != s.size(0):
                raise RuntimeError(
                    f"Input batch size {input.size(0)} doesn't match hidden{i} "
                    f"batch size {s.size(0)}"
                )
            if s.size(1) != self.hidden_size:
                raise RuntimeError(
                    f"hidden{i} has inconsistent hidden_size: got {s.size(1)}, "
                    f"expected {self.hidden_size}"
                )
        return input, states, is_batched

    def _step(self, mode: str, input: Tensor, states):
        cx = states[1] if len(states) == 2 else None
        return rnn_cell_kernel(
            input, states[0], cx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, mode
        )


class RNNCell(RNNCellBase):
    """Matches `torch.nn.RNNCell`."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, states, is_batched = self._prepare("RNNCell", input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, states)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """Matches `torch.nn.LSTMCell`."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx=None):
        input, states, is_batched = self._prepare("LSTMCell", input, hx, 2)
        h, c = self._step("LSTM", input, states)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """Matches `torch.nn.GRUCell`."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, states, is_batched = self._prepare("GRUCell", input, hx, 1)
        ret = self._step("GRU", input, states)
        return ret if is_batched else ret.squeeze(0)
