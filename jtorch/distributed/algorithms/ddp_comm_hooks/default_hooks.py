"""`torch.distributed.algorithms.ddp_comm_hooks.default_hooks`: DDP's gradient hooks.

A hook takes `(state, bucket)` and returns a future of the bucket's reduced gradients:
`allreduce_hook` averages them over the group; the compress hooks average them in float16 or
bfloat16 (so gradients come back rounded to that precision, over one rank too); the wrappers
apply that compression around another hook.
"""

from __future__ import annotations

from ... import distributed_c10d as c10d

__all__ = [
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _group(process_group):
    return process_group if process_group is not None else c10d._get_default_group()


def _allreduce_fut(process_group, tensor):
    group = _group(process_group)
    tensor.div_(group.size())
    work = c10d.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """Averages the bucket's gradients over the group."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut):
        value = fut.value()[0]
        buffer.copy_(value)
        return buffer

    work = c10d.all_reduce(compressed, group=group, async_op=True)
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Averages the bucket's gradients in float16."""
    from .... import float16

    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Averages the bucket's gradients in bfloat16."""
    from .... import bfloat16

    return _compress_hook(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket):
        buffer = bucket.buffer()
        group = _group(getattr(hook_state, "process_group", None))
        bucket.set_buffer(buffer.to(dtype).div_(group.size()))
        fut = hook(hook_state, bucket)

        def decompress(f):
            buffer.copy_(f.value())
            return buffer

        return fut.then(decompress)

    return wrapped


def fp16_compress_wrapper(hook):
    """`hook`, run on the gradients cast to float16."""
    from .... import float16

    return _compress_wrapper(float16, hook)


def bf16_compress_wrapper(hook):
    """`hook`, run on the gradients cast to bfloat16."""
    from .... import bfloat16

    return _compress_wrapper(bfloat16, hook)
