"""`TransformGetItemToIndex` (as transformers uses it): indexing by 0-dim index tensors under
vmap inside the mode gives what indexing by the same Python ints gives."""

import jtorch as torch
from jtorch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex


def test_indexing_by_batched_scalars_inside_the_mode():
    table = torch.arange(12).reshape(3, 4)
    rows, cols = torch.tensor([0, 2]), torch.tensor([1, 3])
    pick = torch.vmap(torch.vmap(lambda a, b: table[a, b], in_dims=(None, 0)), in_dims=(0, None))
    with TransformGetItemToIndex():
        got = pick(rows, cols)
    assert got.tolist() == [[table[r, c].item() for c in (1, 3)] for r in (0, 2)]
