"""jtorch.data (also jtorch.utils.data): datasets, samplers, collation, DataLoader, workers.

Expected values come from the definitions (indices, numpy data); worker tests
use tiny datasets, two workers and the 'fork' start method (the default) where the
data is numpy (fork workers start in milliseconds), 'spawn' for jtorch tensors.
"""

import collections
import os
import time
import warnings

import jtorch.utils.data as tud
import numpy as np
import pytest
from jtorch.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

import jtorch as torch

from .helpers import to_np as _np

pytestmark = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called")

Point = collections.namedtuple("Point", "x y")


# -- module-level datasets (picklable, for worker processes) --------------------------------


class Squares(Dataset):
    """Sample i: {"x": float32 [i, i*i], "y": i, "name": "s<i>"}."""

    def __init__(self, n=6):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], np.float32), "y": i, "name": f"s{i}"}


class WorkerTagged(Dataset):
    """Sample i: (i, worker id, worker count, worker seed, pid)."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        return (i, info.id, info.num_workers, info.seed, os.getpid(), info.dataset is self)


class FailsAt(Dataset):
    def __init__(self, bad, how="raise"):
        self.bad, self.how = bad, how

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == "exit":
                os._exit(3)
            if self.how == "sleep":
                time.sleep(30)
            if self.how == "key":
                raise KeyError("missing-key")
            raise ValueError(f"bad sample {i}")
        return i


class Sharded(IterableDataset):
    """range(n) split between workers by stride."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


class Stream(IterableDataset):
    def __init__(self, n, length=None):
        self.n, self.length = n, length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.length if self.length is not None else self.n


class Strided(IterableDataset):
    """range(start, n, step); `_shard_by_worker` sets start/step in each worker's copy."""

    def __init__(self, n):
        self.n, self.start, self.step = n, 0, 1

    def __iter__(self):
        return iter(range(self.start, self.n, self.step))


def _shard_by_worker(worker_id):
    info = get_worker_info()
    info.dataset.start, info.dataset.step = worker_id, info.num_workers


def _failing_init(worker_id):
    raise OSError(f"init failed in {worker_id}")


class JtorchSamples(Dataset):
    """Samples built with jtorch ops (needs jax in the worker)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.tensor([i, 10 * i]) * 2


class HoldsTensor(Dataset):
    """Rows of a jtorch tensor made in the main process, read in the worker as numpy."""

    def __init__(self, t):
        self.t = t

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t.numpy()[i]


class NumpyMatmul(Dataset):
    """Numpy (BLAS) work in the worker."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        a = np.random.default_rng(i).standard_normal((32, 32)).astype(np.float32)
        return a @ a.T, i


class UsesJax(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torch.ones(2) + i


# -- datasets ------------------------------------------------------------------------------


def test_tensor_dataset():
    x = torch.arange(12.0).reshape(4, 3)
    y = torch.arange(4)
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    xi, yi = ds[2]
    np.testing.assert_array_equal(_np(xi), [6, 7, 8])
    assert yi.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, torch.arange(5))


def test_concat_stack_subset_chain():
    a, b = Squares(3), Squares(2)
    cat = ConcatDataset([a, b])
    assert len(cat) == 5 and cat.cumulative_sizes == [3, 5]
    assert cat[3]["y"] == 0 and cat[-1]["y"] == 1 and cat[2]["y"] == 2
    assert len(a + b) == 5
    with pytest.raises(ValueError, match="absolute value of index"):
        cat[-6]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream(2)])
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])

    st = StackDataset(Squares(3), Squares(3))
    assert st[1][0]["y"] == 1 and len(st) == 3
    sd = StackDataset(a=Squares(3), b=range(3))
    assert sd[2]["b"] == 2
    assert [d["b"] for d in sd.__getitems__([0, 2])] == [0, 2]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(Squares(3), Squares(2))
    with pytest.raises(ValueError, match="At least one dataset"):
        StackDataset()

    sub = Subset(Squares(6), [4, 0, 2])
    assert len(sub) == 3 and sub[0]["y"] == 4
    assert [s["y"] for s in sub.__getitems__([2, 1])] == [2, 0]

    chain = Stream(2) + Stream(3)
    assert isinstance(chain, ChainDataset)
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5


def test_random_split():
    parts = random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=torch.Generator().manual_seed(1))
    assert again[0].indices == parts[0].indices
    # fractions: floor(n * f), then the remainder one by one from the first split
    assert [len(p) for p in random_split(range(11), [0.3, 0.3, 0.4])] == [4, 3, 4]
    assert [len(p) for p in random_split(range(14), [0.25] * 4)] == [4, 4, 3, 3]
    assert [len(p) for p in random_split(range(31), [0.5, 0.5])] == [16, 15]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [1.0, 0.0])
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(5), [1.5, -0.5])


# -- samplers ------------------------------------------------------------------------------


def test_sequential_and_random_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = torch.Generator().manual_seed(3)
    perm = list(RandomSampler(range(7), generator=g))
    assert sorted(perm) == list(range(7))
    assert list(RandomSampler(range(7), generator=torch.Generator().manual_seed(3))) == perm
    more = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert (
        len(more) == 10 and sorted(more[:4]) == [0, 1, 2, 3] and sorted(more[4:8]) == [0, 1, 2, 3]
    )
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=40, generator=g))
    assert len(drawn) == 40 and set(drawn) <= {0, 1, 2}
    with pytest.raises(
        ValueError, match="num_samples should be a positive integer value, but got num_samples=0"
    ):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    sub = list(SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(sub) == [10, 20, 30]


def test_weighted_and_batch_samplers():
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 50, generator=torch.Generator().manual_seed(0))
    assert len(w) == 50 and set(w) <= {1, 3}
    nr = list(WeightedRandomSampler([1, 1, 1], 3, replacement=False))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], True)
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 1, 0)


def test_distributed_sampler():
    # 10 samples over 3 replicas: padded to 12 by repeating the start.
    shares = [list(DistributedSampler(range(10), 3, r, shuffle=False)) for r in range(3)]
    assert shares == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    dropped = [
        list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)
    ]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    s = [DistributedSampler(range(9), 3, r, seed=5) for r in range(3)]
    first = [list(x) for x in s]
    assert sorted(sum(first, [])) == list(range(9))
    assert [list(x) for x in s] == first  # same epoch, same order
    for x in s:
        x.set_epoch(1)
    assert sorted(sum([list(x) for x in s], [])) == list(range(9))
    with pytest.raises(
        ValueError,
        match=r"Invalid rank 3, rank should be in the interval "
        r"\[0, 2\]",
    ):
        DistributedSampler(range(9), 3, 3)


# -- collation ------------------------------------------------------------------------------


def test_default_collate_types():
    b = default_collate([1.5, 2.0])
    assert b.dtype == torch.float64 and _np(b).tolist() == [1.5, 2.0]
    assert default_collate([1, 2]).dtype == torch.int64
    assert default_collate([True, False]).dtype == torch.bool
    assert default_collate([1, 2.5]).dtype == torch.float32  # torch.tensor's inference
    assert default_collate([np.float32(1), np.float32(2)]).dtype == torch.float32
    assert default_collate([np.int64(1), np.float32(2)]).dtype == torch.float32
    assert default_collate(["a", "b"]) == ["a", "b"]
    arr = default_collate([np.zeros(2, np.int16), np.ones(2, np.int16)])
    assert arr.dtype == torch.int16 and _np(arr).tolist() == [[0, 0], [1, 1]]
    t = default_collate([torch.tensor([1, 2]), torch.tensor([3, 4])])
    assert _np(t).tolist() == [[1, 2], [3, 4]]
    mixed = default_collate([torch.zeros(2, dtype=torch.int64), torch.zeros(2)])
    assert mixed.dtype == torch.float32


def test_default_collate_structures():
    out = default_collate([{"a": 1, "b": (2.0, "x")}, {"a": 3, "b": (4.0, "y")}])
    assert set(out) == {"a", "b"}
    assert _np(out["a"]).tolist() == [1, 3]
    assert isinstance(out["b"], list) and out["b"][1] == ("x", "y")  # tuples become lists
    p = default_collate([Point(1, 2), Point(3, 4)])
    assert isinstance(p, Point) and _np(p.x).tolist() == [1, 3]
    lists = default_collate([[1, 2], [3, 4]])
    assert [_np(v).tolist() for v in lists] == [[1, 3], [2, 4]]


def test_default_collate_errors():
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got "
        r"\[3\] at entry 0 and \[4\] at entry 1",
    ):
        default_collate([np.zeros(3), np.zeros(4)])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size"):
        default_collate([torch.zeros(3), torch.zeros(4)])
    with pytest.raises(
        TypeError,
        match="default_collate: batch must contain tensors, numpy "
        "arrays, numbers, dicts or lists; found <class 'object'>",
    ):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [1]])


def test_default_convert():
    out = default_convert([np.zeros(2), (1, 2), "x", np.array(["a"]), np.float32(3)])
    assert out[0].dtype == torch.float64 and out[1] == [1, 2] and out[2] == "x"
    assert isinstance(out[3], np.ndarray) and out[4].dtype == torch.float32
    t = torch.ones(2)
    assert default_convert(t) is t


# -- DataLoader, main process -----------------------------------------------------------------


def test_loader_tensor_dataset_sequential():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    ds = TensorDataset(torch.from_numpy(x), torch.arange(10))
    batches = list(DataLoader(ds, batch_size=4))
    assert len(batches) == 3 and isinstance(batches[0], list)
    np.testing.assert_array_equal(_np(batches[2][0]), x[8:])
    assert _np(batches[1][1]).tolist() == [4, 5, 6, 7]
    assert len(list(DataLoader(ds, batch_size=4, drop_last=True))) == 2
    assert len(DataLoader(ds, batch_size=4)) == 3 and len(DataLoader(ds, 4, drop_last=True)) == 2
    # a Subset under the fast path maps indices through the subset
    sub = list(DataLoader(Subset(ds, [9, 1, 5]), batch_size=2))
    assert _np(sub[0][1]).tolist() == [9, 1] and _np(sub[1][1]).tolist() == [5]
    with pytest.raises(IndexError, match="index 10 is out of bounds for dimension 0 with size 10"):
        next(iter(DataLoader(ds, batch_size=2, sampler=[10, 0])))


def test_loader_gathers_fresh_batches_from_the_current_values():
    # The fast path gathers on the host from the dataset's current values: a write into
    # the dataset shows in the next batch, and a write into a batch leaves the dataset.
    x = torch.arange(12.0).reshape(6, 2)
    ds = TensorDataset(x, torch.arange(6))
    loader = DataLoader(ds, batch_size=4, sampler=[5, 0, -1, 2])
    ((xb, yb),) = list(loader)
    np.testing.assert_array_equal(_np(xb), np.arange(12.0).reshape(6, 2)[[5, 0, -1, 2]])
    assert xb.dtype == torch.float32 and yb.dtype == torch.int64 and not xb.requires_grad
    xb.add_(100)
    x[0].fill_(-1)
    ((xb2, _),) = list(loader)
    assert _np(xb2)[1].tolist() == [-1, -1] and _np(xb2)[0].tolist() == [10, 11]
    assert _np(x)[5].tolist() == [10, 11]
    # a tensor that requires grad keeps the differentiable gather
    w = torch.ones(4, 2, requires_grad=True)
    ((wb,),) = list(DataLoader(TensorDataset(w), batch_size=4))
    assert wb.requires_grad and wb.grad_fn is not None


def test_random_sampler_advances_its_generator_as_pytorch_does():
    # PyTorch's RandomSampler draws one permutation per pass and one more for the
    # remainder (empty when num_samples is a multiple of n): the generator advances by both.
    g1 = torch.Generator().manual_seed(3)
    order = list(RandomSampler(range(10), generator=g1))
    g2 = torch.Generator().manual_seed(3)
    first = torch.randperm(10, generator=g2).tolist()
    torch.randperm(10, generator=g2)
    assert order == first
    assert torch.rand(3, generator=g1).tolist() == torch.rand(3, generator=g2).tolist()
    g3 = torch.Generator().manual_seed(3)
    assert len(list(RandomSampler(range(10), num_samples=15, generator=g3))) == 15


@pytest.mark.parametrize("n", [0, 1, 2, 1625, 1626, 5000])
def test_samplers_shuffle_as_randperm(n):
    # The samplers sort randperm's random keys with numpy (one round up to n = 1625, two
    # from 1626): the order and the generator's advance are randperm's.
    if n:  # (a RandomSampler of nothing raises, as PyTorch's does)
        g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
        order = list(RandomSampler(range(n), generator=g1))
        assert order == torch.randperm(n, generator=g2).tolist()
        torch.randperm(n, generator=g2)  # PyTorch's trailing empty draw
        assert torch.rand(2, generator=g1).tolist() == torch.rand(2, generator=g2).tolist()
    idx = list(range(100, 100 + n))
    sub = list(SubsetRandomSampler(idx, generator=torch.Generator().manual_seed(2)))
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(2)).tolist()
    assert sub == [idx[i] for i in perm]
    torch.manual_seed(9)
    drawn = list(SubsetRandomSampler(idx))  # the default generator
    torch.manual_seed(9)
    assert drawn == [idx[i] for i in torch.randperm(n).tolist()]
    if n:
        ds = DistributedSampler(range(n), num_replicas=1, rank=0, seed=4)
        ds.set_epoch(2)
        assert list(ds) == torch.randperm(n, generator=torch.Generator().manual_seed(6)).tolist()


def test_loader_shuffle_reproducible():
    ds = TensorDataset(torch.arange(10))

    def order(seed):
        g = torch.Generator().manual_seed(seed)
        return [
            v
            for (b,) in DataLoader(ds, batch_size=3, shuffle=True, generator=g)
            for v in _np(b).tolist()
        ]

    first = order(0)
    assert sorted(first) == list(range(10))
    assert order(0) == first
    loader = DataLoader(ds, batch_size=10, shuffle=True)  # draws from the default generator
    torch.manual_seed(5)
    a = _np(next(iter(loader))[0]).tolist()
    torch.manual_seed(5)
    assert _np(next(iter(loader))[0]).tolist() == a and sorted(a) == list(range(10))

    class Plain(Dataset):  # not a TensorDataset: the per-sample path
        def __len__(self):
            return 10

        def __getitem__(self, i):
            return (torch.tensor(i),)

    g = torch.Generator().manual_seed(0)
    slow = [
        v
        for (b,) in DataLoader(Plain(), batch_size=3, shuffle=True, generator=g)
        for v in _np(b).tolist()
    ]
    assert slow == first  # the fast path gives the same batches


def test_loader_dicts_and_no_batching():
    batches = list(DataLoader(Squares(5), batch_size=2))
    assert (
        _np(batches[0]["x"]).tolist() == [[0, 0], [1, 1]] and batches[0]["x"].dtype == torch.float32
    )
    assert batches[2]["name"] == ["s4"] and _np(batches[1]["y"]).tolist() == [2, 3]
    single = list(DataLoader(Squares(3), batch_size=None))
    assert single[2]["y"] == 2 and _np(single[2]["x"]).tolist() == [2, 4]
    t = list(DataLoader(TensorDataset(torch.arange(3)), batch_size=None))
    assert isinstance(t[1], list) and t[1][0].item() == 1


def test_loader_samplers_and_collate_fn():
    bs = [[0, 2], [1, 3, 4]]
    out = list(DataLoader(Squares(5), batch_sampler=bs))
    assert [_np(b["y"]).tolist() for b in out] == bs
    out = list(DataLoader(Squares(5), batch_size=2, collate_fn=lambda b: [s["y"] for s in b]))
    assert out == [[0, 1], [2, 3], [4]]
    out = list(DataLoader(Squares(5), sampler=[4, 3], batch_size=1))
    assert [b["name"] for b in out] == [["s4"], ["s3"]]


def test_loader_option_errors():
    ds = Squares(4)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(
        ValueError,
        match="batch_sampler option is mutually exclusive with "
        "batch_size, shuffle, sampler, and drop_last",
    ):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used"):
        DataLoader(ds, multiprocessing_context="spawn")
    with pytest.raises(ValueError, match="should specify a valid start method"):
        DataLoader(ds, num_workers=1, multiprocessing_context="nope")
    loader = DataLoader(ds)
    with pytest.raises(
        ValueError, match="batch_size attribute should not be set after DataLoader is initialized"
    ):
        loader.batch_size = 3


def test_iterable_dataset_main_process():
    assert [_np(b).tolist() for b in DataLoader(Stream(5), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert len(list(DataLoader(Stream(5), batch_size=2, drop_last=True))) == 2
    loader = DataLoader(Stream(5, length=3), batch_size=None)
    assert len(loader) == 3
    with pytest.warns(UserWarning, match="was reported to be 3"):
        assert len(list(loader)) == 5


# -- DataLoader, worker processes ------------------------------------------------------------


def test_workers_batches_and_worker_info():
    loader = DataLoader(
        WorkerTagged(),
        batch_size=2,
        num_workers=2,
        multiprocessing_context="fork",
        generator=torch.Generator().manual_seed(0),
    )
    batches = list(loader)
    assert [_np(b[0]).tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
    assert [_np(b[1]).tolist() for b in batches] == [[0, 0], [1, 1], [0, 0]]  # round robin
    assert all(_np(b[2]).tolist() == [2, 2] for b in batches)
    seeds = {w: s for b in batches for w, s in zip(_np(b[1]).tolist(), _np(b[3]).tolist())}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker id
    assert all(_np(b[5]).tolist() == [True, True] for b in batches)  # info.dataset: the copy
    assert get_worker_info() is None


def test_workers_iterable_sharding_and_unordered():
    got = [
        _np(b).tolist()
        for b in DataLoader(Sharded(7), batch_size=2, num_workers=2, multiprocessing_context="fork")
    ]
    assert got == [[0, 2], [1, 3], [4, 6], [5]]
    got = [
        _np(b).tolist()
        for b in DataLoader(
            Strided(5),
            batch_size=2,
            num_workers=2,
            worker_init_fn=_shard_by_worker,
            multiprocessing_context="fork",
        )
    ]
    assert got == [[0, 2], [1, 3], [4]]
    with pytest.raises(OSError, match="Caught OSError in DataLoader worker process 0"):
        list(
            DataLoader(
                Strided(5),
                num_workers=1,
                worker_init_fn=_failing_init,
                multiprocessing_context="fork",
            )
        )
    un = DataLoader(
        Squares(6), batch_size=1, num_workers=2, multiprocessing_context="fork", in_order=False
    )
    assert sorted(b["y"].item() for b in un) == list(range(6))


def test_worker_error_is_reraised():
    loader = DataLoader(FailsAt(3), batch_size=2, num_workers=2, multiprocessing_context="fork")
    with pytest.raises(ValueError) as e:
        list(loader)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback")
    assert "bad sample 3" in msg and "__getitem__" in msg
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(DataLoader(FailsAt(0, "key"), num_workers=1, multiprocessing_context="fork"))


def _unpicklable_batch(batch):
    return lambda: batch


def test_worker_unpicklable_result_raises():
    with pytest.raises(Exception, match="in DataLoader worker process 0") as e:
        list(
            DataLoader(
                Squares(2),
                num_workers=1,
                collate_fn=_unpicklable_batch,
                multiprocessing_context="fork",
                timeout=60,
            )
        )
    assert "pickle" in str(e.value).lower()


def test_worker_death_and_timeout():
    with pytest.raises(
        RuntimeError,
        match=r"DataLoader worker \(pid\(s\) \d+\) exited "
        "unexpectedly",
    ):
        list(DataLoader(FailsAt(0, "exit"), num_workers=1, multiprocessing_context="fork"))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(
            DataLoader(
                FailsAt(0, "sleep"), num_workers=1, timeout=0.5, multiprocessing_context="fork"
            )
        )
    assert time.monotonic() - t0 < 20
    with pytest.raises(AssertionError):  # as PyTorch: timeout needs workers
        iter(DataLoader(Squares(2), timeout=1))


def test_persistent_workers_are_reused():
    loader = DataLoader(
        WorkerTagged(),
        batch_size=3,
        num_workers=2,
        persistent_workers=True,
        multiprocessing_context="fork",
    )
    first = [_np(b[4]).tolist() for b in loader]
    it = loader._iterator
    second = [_np(b[4]).tolist() for b in loader]
    assert loader._iterator is it and first == second  # same worker processes
    assert [_np(b[0]).tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    # an epoch left early: the next epoch starts cleanly
    next(iter(loader))
    assert [_np(b[0]).tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_forked_worker_refuses_jax():
    with pytest.raises(
        RuntimeError, match="JAX cannot run in a DataLoader worker started with 'fork'"
    ):
        list(DataLoader(UsesJax(), num_workers=1, multiprocessing_context="fork"))


def test_spawned_workers_run_jtorch():
    # The dataset builds jtorch tensors in the worker: the default forked workers cannot,
    # so the loader starts the epoch over with spawned ones.
    loader = DataLoader(JtorchSamples(), batch_size=2, num_workers=2)
    assert loader._worker_context()[0].get_start_method() == "fork"
    batches = list(loader)
    assert [_np(b).tolist() for b in batches] == [[[0, 0], [2, 20]], [[4, 40], [6, 60]]]
    assert batches[0].dtype == torch.int64
    assert loader._worker_context()[0].get_start_method() == "spawn"  # later epochs too
    assert [_np(b).tolist() for b in loader] == [_np(b).tolist() for b in batches]


def test_default_workers_fork_and_run_numpy_datasets():
    loader = DataLoader(Squares(5), batch_size=2, num_workers=2)
    assert loader._worker_context() == (loader._worker_context()[0], True)
    assert loader._worker_context()[0].get_start_method() == "fork"
    assert [_np(b["x"])[:, 0].tolist() for b in loader] == [[0, 1], [2, 3], [4]]


def test_respawned_epoch_is_the_epoch_spawned_workers_would_give():
    # The epoch starts over from the random state it began with: same shuffle, same seeds.
    def epoch(context):
        loader = DataLoader(
            JtorchSamples(),
            batch_size=2,
            num_workers=2,
            shuffle=True,
            generator=torch.Generator().manual_seed(5),
            multiprocessing_context=context,
        )
        return [_np(b).tolist() for b in loader]

    assert epoch(None) == epoch("spawn")


def test_a_start_method_set_globally_is_used(monkeypatch):
    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "forkserver")
    ctx, may_respawn = DataLoader(Squares(), num_workers=1)._worker_context()
    assert ctx.get_start_method() == "forkserver" and not may_respawn


def test_forked_workers_read_arrays_the_parent_was_still_computing():
    # Every live array is finished before the fork: a child cannot wait for the parent's
    # threads, which it does not have.
    a = torch.randn(600, 600)
    held = HoldsTensor(a @ a @ a)  # a root tensor: the worker reads its buffer, no jax
    loader = DataLoader(held, batch_size=300, num_workers=2, timeout=60)
    got = np.concatenate([_np(b) for b in loader])
    assert loader._worker_context()[0].get_start_method() == "fork"  # no respawn needed
    np.testing.assert_array_equal(got, _np(held.t))


def test_forked_workers_survive_a_busy_parent():
    # Forks taken while the parent's XLA threads run: no worker hangs or fails.
    import threading

    stop = threading.Event()
    x = torch.randn(128, 128)

    def busy():
        while not stop.is_set():
            (x @ x).sum().item()

    t = threading.Thread(target=busy, daemon=True)
    t.start()
    try:
        for k in range(4):
            loader = DataLoader(
                NumpyMatmul(),
                batch_size=4,
                num_workers=2,
                timeout=60,
                persistent_workers=k % 2 == 0,
            )
            assert sum(len(y) for _, y in loader) == 8
    finally:
        stop.set()
        t.join()


def test_scripts_without_a_main_guard_run_under_the_runner(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "unguarded.py"
    body = """
        import numpy as np
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Squares(Dataset):
            def __len__(self):
                return 5

            def __getitem__(self, i):
                return np.array([i, i * i], dtype=np.float32){extra}

        for x in DataLoader(Squares(), batch_size=2, num_workers=2):
            print(x.sum(1).tolist())
    """
    root = os.path.dirname(os.path.dirname(torch.__file__))
    env = dict(os.environ, PYTHONPATH=root)

    def run(extra):
        script.write_text(textwrap.dedent(body.format(extra=extra)))
        return subprocess.run(
            [sys.executable, "-m", "jtorch", str(script)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    out = run("")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["[0.0, 2.0]", "[6.0, 12.0]", "[20.0]"]
    # a dataset that runs torch ops needs spawned workers, hence the main guard: said clearly
    out = run(" + torch.zeros(2).numpy()")
    assert out.returncode == 1
    assert "if __name__ == '__main__':" in out.stderr.splitlines()[-1]


def test_alias_module_paths():
    import importlib

    assert tud is torch.data
    for name in (
        "dataloader",
        "dataset",
        "sampler",
        "distributed",
        "_utils.collate",
        "_utils.worker",
    ):
        mod = importlib.import_module("jtorch.utils.data." + name)
        assert mod is importlib.import_module("jtorch.data." + name)
    assert importlib.import_module("jtorch.utils.data.dataloader").DataLoader is DataLoader
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (
            importlib.import_module("jtorch.utils.data.distributed").DistributedSampler
            is DistributedSampler
        )
