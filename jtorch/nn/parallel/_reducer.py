"""DDP's reducer: averaging gradients over the process group during backward.

As in PyTorch, parameters are laid into buckets of one dtype and device each
(`_buckets`, PyTorch's `compute_bucket_assignment_by_size`). At first all of them are one
bucket (with `find_unused_parameters`: buckets filled in registration order, the first
closing at 1 MiB and the others at `bucket_cap_mb`, reduced last to first). After the first
backward that reduced, and without `find_unused_parameters`, the buckets are made again
once in the order the gradients arrived, with those limits (PyTorch's `_rebuild_buckets`),
so that the last layers' gradients travel while backward goes on; the 1 MiB first bucket is
`bucket_cap_mb` when that was given. A hook after each parameter's gradient is accumulated
marks it ready; when every parameter of a bucket is ready, the bucket's gradients are
flattened into one buffer, divided by the group size and summed over the group by one
all-reduce (or handed to the registered communication hook), and written back into each
`.grad`.

The all-reduces overlap the rest of backward, as PyTorch's do: a bucket's all-reduce is
queued (`async_op=True`) and its result written into the `.grad`s as jax futures, with
nothing between that waits for the devices (no `.item()`, no numpy, no
`block_until_ready`); the reducer waits for all of them once, when the last bucket is
launched (PyTorch's `finalize_backward`). A communication hook's future is waited for when
its bucket is ready.

With `find_unused_parameters`, the forward's autograd graph is walked from the outputs and
the parameters it does not reach are ready at once; a map of which parameters each rank
used is summed too, so a parameter no rank used keeps its `.grad` (None stays None) while
one used elsewhere gets the average. Without it, a parameter that gets no gradient leaves
its bucket unreduced, and the next forward raises PyTorch's error.
"""

from __future__ import annotations

import jax.numpy as jnp

from ... import _tracing
from ... import distributed as dist

__all__ = ["GradBucket", "Reducer"]


class GradBucket:
    """Matches `torch.distributed.GradBucket`: what a communication hook is given."""

    def __init__(self, index: int, buffer, params: list, is_last: bool):
        self._index, self._buffer, self._params, self._is_last = index, buffer, params, is_last

    def index(self) -> int:
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self) -> list:
        out, start = [], 0
        for p in self._params:
            out.append(self._buffer[start : start + p.numel()].view(p.shape))
            start += p.numel()
        return out

    def parameters(self) -> list:
        return list(self._params)

    def is_last(self) -> bool:
        return self._is_last

    def set_buffer(self, buffer) -> None:
        self._buffer = buffer


_NOT_FINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable)."
)


def _buckets(params: list, order, limits: list) -> list:
    """Lists of parameter indices (PyTorch's `compute_bucket_assignment_by_size`): the
    parameters taken in `order`, one open bucket per dtype and device, a bucket closed once
    it holds `limits[k]` bytes or more (k counting that key's closed buckets, the last limit
    repeating); the buckets in the order they closed, then the open ones by first index
    (PyTorch then sorts them all by first index when `order` is the registration order)."""
    closed, open_, used = [], {}, {}
    for i in order:
        p = params[i]
        key = (p.dtype, p.device)
        bucket = open_.setdefault(key, [[], 0])
        bucket[0].append(i)
        bucket[1] += p.numel() * p.element_size()
        if bucket[1] >= limits[min(used.get(key, 0), len(limits) - 1)]:
            closed.append(bucket[0])
            del open_[key]
            used[key] = used.get(key, 0) + 1
    return closed + sorted((b for b, _ in open_.values()), key=lambda b: b[0])


class Reducer:
    """The gradient reduction of one `DistributedDataParallel` (see the module doc)."""

    def __init__(
        self, params: list, process_group, cap_bytes: int, find_unused: bool, first_cap: int
    ):
        self.params = params
        self.process_group = process_group
        self.find_unused = find_unused
        # Filled in registration order, sorted by first index, reduced from the last.
        limits = [first_cap, cap_bytes] if find_unused else [float("inf")]
        self._set_buckets(sorted(_buckets(params, range(len(params)), limits), key=min)[::-1])
        self.limits = [first_cap, cap_bytes]
        self.arrival: list | None = None if find_unused else []  # None: no rebuild
        self.comm_hook = None  # (state, hook)
        self.pending = False  # a backward is expected to reduce
        self.fired = False  # a gradient of that backward has arrived
        self.ready: set = set()
        self.used: set = set()
        self.reduced: set = set()
        self.works: list = []  # the launched all-reduces of this backward
        self.handles = [
            p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)
        ]

    def _set_buckets(self, buckets: list) -> None:
        self.buckets = buckets
        self.bucket_of = {i: b for b, idx in enumerate(buckets) for i in idx}

    def _rebuild_buckets(self) -> bool:
        """Once, after a backward that reduced every parameter: buckets in the order the
        gradients arrived (see the module doc). Bucketing changes no value: an all-reduce
        of a flat buffer sums element by element."""
        if not self.arrival or len(self.arrival) != len(self.params) or self.pending:
            return False
        self._set_buckets(_buckets(self.params, self.arrival, self.limits))
        self.arrival = None
        return True

    # -- one iteration ----------------------------------------------------------------

    def prepare_for_backward(self, outputs) -> None:
        """Arms the reduction of the next backward (PyTorch's name)."""
        self.check_finished()
        self._rebuild_buckets()
        if self.arrival is not None:
            self.arrival = []  # this iteration's order of arrival
        if _tracing.is_compiling():
            # If this trace fails, the eager retry of the call starts from here again.
            self._before_trace = (self.pending, self.fired, self.ready, self.used, self.reduced)
            _tracing.ABORT_HOOKS.add(self)
        self.pending, self.fired = True, False
        self.ready, self.used, self.reduced = set(), set(), set()
        self.works = []
        if self.find_unused:
            reached = _reachable_leaves(outputs)
            for i, p in enumerate(self.params):
                if id(p) not in reached:
                    self.ready.add(i)

    def trace_aborted(self) -> None:
        """A `jtorch.compile` trace that armed this reducer failed: back to before it."""
        before = self.__dict__.pop("_before_trace", None)
        if before is not None:
            self.pending, self.fired, self.ready, self.used, self.reduced = before

    def check_finished(self) -> None:
        """PyTorch's error at a forward when the last backward left buckets unreduced."""
        if self.pending and self.fired and len(self.reduced) < len(self.buckets):
            raise RuntimeError(_NOT_FINISHED)

    def _hook(self, i: int):
        def hook(param) -> None:
            if not self.pending:
                return
            self.fired = True
            if self.arrival is not None and i not in self.ready:
                self.arrival.append(i)
            self.ready.add(i)
            self.used.add(i)
            if self.find_unused:
                if len(self.ready) == len(self.params):
                    self._reduce_all()
                return
            b = self.bucket_of[i]
            if all(j in self.ready for j in self.buckets[b]):
                self._reduce_bucket(b, None)
                if len(self.reduced) == len(self.buckets):
                    self._finalize()

        return hook

    def _reduce_all(self) -> None:
        """With unused-parameter detection: sum the used maps, then reduce every bucket."""
        from ... import int32, tensor

        used = tensor([1 if i in self.used else 0 for i in range(len(self.params))], dtype=int32)
        dist.all_reduce(used, group=self.process_group)
        used = used.tolist()
        for b in range(len(self.buckets)):
            self._reduce_bucket(b, used)
        self._finalize()

    def _finalize(self) -> None:
        """Every bucket is launched: waits for their all-reduces (PyTorch's
        `finalize_backward`)."""
        works, self.works = self.works, []
        for work in works:
            work.wait()
        self.pending = False

    def _reduce_bucket(self, b: int, global_used) -> None:
        from ..._tensor import wrap

        idx = self.buckets[b]
        params = [self.params[i] for i in idx]
        parts = []
        for p in params:
            g = p.grad
            parts.append(
                jnp.zeros((p.numel(),), p._array.dtype) if g is None else g._array.reshape(-1)
            )
        buffer = wrap(jnp.concatenate(parts))
        if self.comm_hook is None:
            buffer.div_(self.process_group.size())
            self.works.append(dist.all_reduce(buffer, group=self.process_group, async_op=True))
        else:
            state, hook = self.comm_hook
            fut = hook(state, GradBucket(b, buffer, params, b == len(self.buckets) - 1))
            buffer = fut.wait()
            if isinstance(buffer, (list, tuple)):
                buffer = buffer[0]
        flat, start = buffer._array, 0
        for i, p in zip(idx, params):
            n = p.numel()
            value = flat[start : start + n].reshape(p._array.shape)
            start += n
            if global_used is not None and not global_used[i]:
                continue  # no rank used it: its grad stays as it was
            if p.grad is None:
                p.grad = wrap(value)
            else:
                p.grad._write(value)
        self.reduced.add(b)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    # PyTorch's reducer methods that Python code calls.

    def _delay_all_reduce(self) -> None:
        return None


def _reachable_leaves(outputs) -> set:
    """The ids of the leaves the autograd graph of `outputs` reaches."""
    from ..._tensor import Tensor

    tensors, stack = [], [outputs]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            tensors.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif hasattr(o, "__dataclass_fields__"):
            stack.extend(getattr(o, f) for f in o.__dataclass_fields__)
    seen, leaves = set(), set()
    nodes = [t.grad_fn for t in tensors if t.grad_fn is not None]
    leaves.update(id(t) for t in tensors if t.grad_fn is None and t.requires_grad)
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                nodes.append(nxt)
    return leaves
