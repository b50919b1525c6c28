"""Data-loading parity: jtorch.utils.data against torch.utils.data on the same datasets.

Deterministic loaders must give the same batches (structure, container types,
tensor dtypes, shapes and values); random ones a permutation of the same
samples, reproducible under a seeded generator (the streams themselves differ:
jtorch does not reproduce PyTorch's RNG). Errors must have the same type and
message.
"""

import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import jtorch.utils.data as jdata  # noqa: E402
import torch.utils.data as tdata  # noqa: E402

import jtorch  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called")

Point = collections.namedtuple("Point", "x y")
FW = {"torch": (torch, tdata), "jtorch": (jtorch, jdata)}


def _canon(b):
    """A batch as plain data: container types kept, tensors as (dtype, shape, values)."""
    if isinstance(b, (torch.Tensor, jtorch.Tensor)):
        arr = np.asarray(b.detach().numpy() if isinstance(b, torch.Tensor) else b.numpy())
        return ("tensor", str(b.dtype), tuple(b.shape), arr.tolist())
    if isinstance(b, np.ndarray):
        return ("ndarray", str(b.dtype), b.tolist())
    if isinstance(b, dict):
        return ("dict", {k: _canon(v) for k, v in b.items()})
    if isinstance(b, tuple) and hasattr(b, "_fields"):
        return (type(b).__name__, [_canon(v) for v in b])
    if isinstance(b, (list, tuple)):
        return (type(b).__name__, [_canon(v) for v in b])
    return (type(b).__name__, b)


def _batches(fw, make_ds, **kw):
    mod, data = FW[fw]
    return [_canon(b) for b in data.DataLoader(make_ds(mod, data), **kw)]


# -- datasets, built the same way in either framework (module level: picklable) ------------

_X = np.arange(30, dtype=np.float32).reshape(10, 3)
_Y = np.arange(10, dtype=np.int64) % 4


def tensor_ds(mod, data):
    return data.TensorDataset(mod.from_numpy(_X.copy()), mod.from_numpy(_Y.copy()))


class Records:
    """A map-style dataset of mixed samples (dicts, tuples, numpy, numbers, strings)."""

    def __init__(self, mod, n=7):
        self.mod, self.n = mod, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {
            "img": np.full((2, 2), i, np.float32),
            "label": i % 3,
            "w": 0.5 * i,
            "ok": i % 2 == 0,
            "id": f"r{i}",
            "pair": (np.int32(i), np.float64(-i)),
            "pt": Point(i, [i, i + 1]),
            "t": self.mod.tensor([i, 2 * i]),
        }


def records(mod, data):
    return Records(mod)


class Numbers:
    def __init__(self, n=6):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return (np.array([i, -i], np.int16), float(i))


def numbers(mod, data):
    return Numbers()


def _sharded(data):
    class Sharded(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(np.int64(v) for v in range(start, 9, step))

    return Sharded()


_SHARDED = {name: _sharded(data) for name, (_, data) in FW.items()}


def sharded(mod, data):
    return _SHARDED["torch" if data is tdata else "jtorch"]


def first_labels(batch):
    return [s[1] for s in batch]


CASES = [
    ("tensor.b4", tensor_ds, dict(batch_size=4)),
    ("tensor.b4.drop_last", tensor_ds, dict(batch_size=4, drop_last=True)),
    ("tensor.b1", tensor_ds, dict()),
    ("tensor.no_batch", tensor_ds, dict(batch_size=None)),
    ("tensor.batch_sampler", tensor_ds, dict(batch_sampler=[[3, 1], [0, 2, 9], [5]])),
    ("tensor.sampler", tensor_ds, dict(batch_size=3, sampler=[9, 8, 7, 0, 1])),
    ("tensor.collate_fn", tensor_ds, dict(batch_size=3, collate_fn=first_labels)),
    ("records.b3", records, dict(batch_size=3)),
    ("records.no_batch", records, dict(batch_size=None)),
    ("numbers.b4", numbers, dict(batch_size=4)),
    ("numbers.no_batch", numbers, dict(batch_size=None)),
    ("numbers.b2.workers", numbers, dict(batch_size=2, num_workers=2)),
    ("iterable.b2", sharded, dict(batch_size=2)),
    ("iterable.b2.workers", sharded, dict(batch_size=2, num_workers=2)),
    ("iterable.b4.workers.drop_last", sharded, dict(batch_size=4, num_workers=2, drop_last=True)),
]


@pytest.mark.parametrize("name,make_ds,kw", CASES, ids=[c[0] for c in CASES])
def test_same_batches(name, make_ds, kw):
    jkw = dict(kw)
    if kw.get("num_workers"):
        jkw["multiprocessing_context"] = "fork"  # numpy data: fork workers start fastest
    expected = _batches("torch", make_ds, **kw)
    assert _batches("jtorch", make_ds, **jkw) == expected
    mod_t, data_t = FW["torch"]
    mod_j, data_j = FW["jtorch"]
    n_t = (
        len(data_t.DataLoader(make_ds(mod_t, data_t), **kw))
        if name.startswith(("tensor", "records", "numbers"))
        else None
    )
    if n_t is not None:
        assert len(data_j.DataLoader(make_ds(mod_j, data_j), **jkw)) == n_t


def test_tensor_dataset_with_workers_default_context():
    # jtorch's default start method (fork, as PyTorch's on Linux): jtorch tensors come back.
    expected = _batches("torch", tensor_ds, batch_size=4, num_workers=2)
    assert _batches("jtorch", tensor_ds, batch_size=4, num_workers=2) == expected


@pytest.mark.parametrize("fw", ["torch", "jtorch"])
def test_shuffle_is_a_reproducible_permutation(fw):
    mod, data = FW[fw]

    def epoch(seed):
        loader = data.DataLoader(
            tensor_ds(mod, data),
            batch_size=3,
            shuffle=True,
            generator=mod.Generator().manual_seed(seed),
        )
        return [v for _, y in loader for v in y.tolist()], [
            v for x, _ in loader for v in x[:, 0].tolist()
        ]

    (labels, rows), (labels2, rows2) = epoch(7), epoch(7)
    assert rows == rows2 and sorted(rows) == sorted(_X[:, 0].tolist())
    assert labels == labels2 and sorted(labels) == sorted(_Y.tolist())
    loader = data.DataLoader(tensor_ds(mod, data), batch_size=3, shuffle=True)
    sizes = [len(y) for _, y in loader]
    assert sizes == [3, 3, 3, 1]


def test_random_split_sizes():
    for lengths in ([3, 7], [0.3, 0.7], [0.3, 0.3, 0.4], [0.25] * 4, [0.1] * 10):
        for n in (10, 11, 14, 31):
            if sum(lengths) > 1.01 and sum(lengths) != n:
                continue
            got = [len(s) for s in jdata.random_split(range(n), lengths)]
            want = [len(s) for s in tdata.random_split(range(n), lengths)]
            assert got == want, (n, lengths)


def test_random_subsets_partition():
    parts = jdata.random_split(
        range(20), [0.5, 0.25, 0.25], generator=jtorch.Generator().manual_seed(3)
    )
    assert sorted(i for p in parts for i in p.indices) == list(range(20))


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_unshuffled(drop_last):
    for n, reps in ((10, 3), (9, 3), (5, 4)):
        for rank in range(reps):
            t = list(
                tdata.DistributedSampler(range(n), reps, rank, shuffle=False, drop_last=drop_last)
            )
            j = list(
                jdata.DistributedSampler(range(n), reps, rank, shuffle=False, drop_last=drop_last)
            )
            assert j == t


def test_samplers_deterministic_parts():
    assert list(jdata.BatchSampler(range(10), 4, False)) == list(
        tdata.BatchSampler(range(10), 4, False)
    )
    assert list(jdata.BatchSampler(range(10), 4, True)) == list(
        tdata.BatchSampler(range(10), 4, True)
    )
    assert list(jdata.SequentialSampler(range(5))) == list(tdata.SequentialSampler(range(5)))
    for cls in ("RandomSampler", "SequentialSampler"):
        assert len(getattr(jdata, cls)(range(7))) == len(getattr(tdata, cls)(range(7)))
    assert len(jdata.RandomSampler(range(7), True, 20)) == len(
        tdata.RandomSampler(range(7), True, 20)
    )


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (any error is compared)
        return type(e).__name__, str(e)
    return None


def _both(build):
    return _error(lambda: build(FW["torch"])), _error(lambda: build(FW["jtorch"]))


ERRORS = {
    "shuffle+sampler": lambda f: f[1].DataLoader(range(3), sampler=[0], shuffle=True),
    "batch_sampler+batch_size": lambda f: f[1].DataLoader(
        range(3), batch_sampler=[[0]], batch_size=2
    ),
    "batch_sampler+drop_last": lambda f: f[1].DataLoader(
        range(3), batch_sampler=[[0]], drop_last=True
    ),
    "none+drop_last": lambda f: f[1].DataLoader(range(3), batch_size=None, drop_last=True),
    "workers<0": lambda f: f[1].DataLoader(range(3), num_workers=-1),
    "timeout<0": lambda f: f[1].DataLoader(range(3), timeout=-1),
    "prefetch": lambda f: f[1].DataLoader(range(3), prefetch_factor=2),
    "persistent": lambda f: f[1].DataLoader(range(3), persistent_workers=True),
    "context.no_workers": lambda f: f[1].DataLoader(range(3), multiprocessing_context="spawn"),
    "context.bad": lambda f: f[1].DataLoader(
        range(3), num_workers=1, multiprocessing_context="nope"
    ),
    "context.type": lambda f: f[1].DataLoader(range(3), num_workers=1, multiprocessing_context=3),
    "iterable.shuffle": lambda f: f[1].DataLoader(
        _SHARDED["jtorch" if f[1] is jdata else "torch"], shuffle=True
    ),
    "setattr": lambda f: setattr(f[1].DataLoader(range(3)), "batch_size", 2),
    "random.num_samples": lambda f: f[1].RandomSampler(range(3), num_samples=0),
    "random.replacement": lambda f: f[1].RandomSampler(range(3), replacement=1),
    "weighted.shape": lambda f: f[1].WeightedRandomSampler([[1.0, 2.0]], 2),
    "weighted.num": lambda f: f[1].WeightedRandomSampler([1.0], -1),
    "batch.size": lambda f: f[1].BatchSampler(range(3), 0, False),
    "batch.drop_last": lambda f: f[1].BatchSampler(range(3), 2, None),
    "distributed.rank": lambda f: f[1].DistributedSampler(range(3), 2, 2),
    "tensor.size": lambda f: f[1].TensorDataset(f[0].zeros(2), f[0].zeros(3)),
    "stack.size": lambda f: f[1].StackDataset(range(2), range(3)),
    "stack.both": lambda f: f[1].StackDataset(range(2), a=range(2)),
    "concat.empty": lambda f: f[1].ConcatDataset([]),
    "concat.index": lambda f: f[1].ConcatDataset([range(2)])[-3],
    "split.sum": lambda f: f[1].random_split(range(5), [2, 2]),
    "split.fraction": lambda f: f[1].random_split(range(5), [1.5, -0.5]),
    "single.timeout": lambda f: iter(f[1].DataLoader(range(3), timeout=1)),
    "collate.object": lambda f: f[1].default_collate([object(), object()]),
    "collate.none": lambda f: f[1].default_collate([None, None]),
    "collate.complex": lambda f: f[1].default_collate([1j, 2j]),
    "collate.str_array": lambda f: f[1].default_collate([np.array(["a"]), np.array(["b"])]),
    "collate.object_array": lambda f: f[1].default_collate([np.array([None])] * 2),
    "collate.ragged_np": lambda f: f[1].default_collate([np.zeros(3), np.zeros((3, 1))]),
    "collate.ragged_t": lambda f: f[1].default_collate([f[0].zeros(3), f[0].zeros(4)]),
    "collate.ragged_list": lambda f: f[1].default_collate([[1, 2], [1]]),
    "index.out_of_range": lambda f: next(
        iter(f[1].DataLoader(f[1].TensorDataset(f[0].zeros(4)), batch_size=2, sampler=[1, 4]))
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_same_error(case):
    want, got = _both(ERRORS[case])
    assert want is not None
    assert got == want


COLLATE_INPUTS = {
    "floats": [1.5, 2.0],
    "ints": [1, 2],
    "bools": [True, False],
    "int_then_float": [1, 2.5],
    "float_then_int": [2.5, 1],
    "np_scalars": [np.float32(1), np.float32(2)],
    "np_mixed_scalars": [np.int64(1), np.float32(2)],
    "np_int_scalars": [np.uint8(1), np.int8(2)],
    "np_0d": [np.array(1.0), np.array(2.0)],
    "np_arrays": [np.zeros((2, 2), np.int16), np.ones((2, 2), np.int16)],
    "np_mixed_arrays": [np.zeros(2, np.int64), np.zeros(2, np.float32)],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "dicts": [{"a": 1, "b": (2.0, "x")}, {"a": 3, "b": (4.0, "y")}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "lists": [[1, 2], [3, 4]],
    "tuples": [(1, "a"), (2, "b")],
    "nested": [{"p": [np.zeros(1), {"q": 1}]}, {"p": [np.ones(1), {"q": 2}]}],
}


@pytest.mark.parametrize("case", sorted(COLLATE_INPUTS))
def test_default_collate_and_convert(case):
    batch = COLLATE_INPUTS[case]
    assert _canon(jdata.default_collate(batch)) == _canon(tdata.default_collate(batch))
    assert _canon(jdata.default_convert(batch)) == _canon(tdata.default_convert(batch))


def test_default_collate_tensors():
    for dts in (
        (torch.float32, torch.float32),
        (torch.float32, torch.float64),
        (torch.int64, torch.float32),
        (torch.uint8, torch.int8),
    ):
        tb = [torch.ones(2, dtype=d) for d in dts]
        jb = [jtorch.ones(2, dtype=getattr(jtorch, str(d).split(".")[1])) for d in dts]
        assert _canon(jdata.default_collate(jb)) == _canon(tdata.default_collate(tb))


def test_worker_error_message_shape():
    class Boom:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise ValueError("boom")

    msgs = []
    for _, data, ctx in ((None, tdata, None), (None, jdata, "fork")):
        try:
            list(data.DataLoader(Boom(), num_workers=1, multiprocessing_context=ctx))
        except ValueError as e:
            msgs.append(str(e).splitlines())
    assert len(msgs) == 2
    assert msgs[0][:2] == msgs[1][:2]  # "Caught ValueError in ... process 0.", "Original Tr..."
    assert msgs[0][-1] == msgs[1][-1] == "ValueError: boom"
