"""`torch.nn.AdaptiveLogSoftmaxWithLoss`: the adaptive softmax of Grave et al. (2016).

The classes are split by `cutoffs` into a frequent shortlist, scored by the head together
with one logit per tail cluster, and tail clusters scored by their own low-rank projections.
A class's log-probability is its head log-probability (shortlist) or its cluster's head
log-probability plus its log-probability inside the cluster. As in PyTorch, each tail runs
only on the rows whose targets fall in it.
"""

from __future__ import annotations

import collections

from ... import argmax
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Matches `torch.nn.AdaptiveLogSoftmaxWithLoss` (parameters, outputs and errors)."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs,
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted "
                "in an increasing order, where each value is between 1 and "
                "n_classes-1"
            )
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **kw),
                    Linear(hidden, size, bias=False, **kw),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_, target_) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    f"1D target tensor expects 2D input tensors, but found "
                    f"inputs with size {input_.size()}"
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    f"0D target tensor expects 1D input tensors, but found "
                    f"inputs with size {input_.size()}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        # Which head column scores each row: its class (shortlist) or its cluster's logit.
        head_column = target.clone()
        output = input.new_zeros(n)
        covered = (target >= 0) & (target < self.shortlist_size)
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            in_cluster = (target >= low) & (target < high)
            rows = in_cluster.nonzero().squeeze(1)
            covered = covered | in_cluster
            if rows.numel() == 0:
                continue
            head_column = head_column.masked_fill(in_cluster, self.shortlist_size + i)
            local = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            picked = local.gather(1, (target.index_select(0, rows) - low).unsqueeze(1))
            output = output.index_copy(0, rows, picked.squeeze(1))
        if not bool(covered.all()):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but "
                f"values in range [{target.min().item()}, "
                f"{target.max().item()}] were found. "
            )
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_column.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster = F.log_softmax(projection(input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        from ... import cat

        return cat(parts, dim=1)

    def log_prob(self, input):
        """Log-probabilities of every class: (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row (`log_prob(input).argmax(1)`, cheaper when the
        head's best column is a shortlist class)."""
        head_output = self.head(input)
        best = argmax(head_output, dim=1)
        outside = best >= self.shortlist_size
        if not bool(outside.any()):
            return best
        full = argmax(self._full_log_prob(input, head_output), dim=1)
        return best.masked_scatter(outside, full[outside]) if not bool(outside.all()) else full
