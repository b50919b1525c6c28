"""`torch.nn.modules`: the layer classes."""

from .activation import *  # noqa: F401,F403
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import Flatten, Unflatten  # noqa: F401
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .lazy import LazyModuleMixin  # noqa: F401
from .linear import Bilinear, Identity, LazyLinear, Linear  # noqa: F401
from .loss import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .multihead import MultiheadAttention  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import *  # noqa: F401,F403
from .transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .upsampling import *  # noqa: F401,F403

# The layer classes only: without this, `from .modules import *` in `jtorch.nn` would also
# export the submodule names (`conv`, `loss`, ...), which `torch.nn` does not have.
__all__ = sorted(
    _n
    for _n, _v in list(globals().items())
    if isinstance(_v, type) and not _n.startswith("_") and _n != "LazyModuleMixin"
)
