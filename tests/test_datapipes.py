"""DataPipes (the shuffler libraries look for), graph settings, and the loader iterators'
PyTorch names."""

import warnings

from jtorch.utils.data import DataLoader, IterDataPipe, graph_settings
from jtorch.utils.data.datapipes.iter.combinatorics import ShufflerIterDataPipe
from jtorch.utils.data.graph import traverse_dps

import jtorch


class Range(IterDataPipe):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_shuffler_is_a_permutation_and_seedable():
    s = Range(20).shuffle(buffer_size=4)
    assert isinstance(s, ShufflerIterDataPipe) and len(s) == 20
    assert sorted(s) == list(range(20))
    s.set_seed(7)
    a = list(s)
    s.set_seed(7)
    assert list(s) == a != list(range(20))
    jtorch.manual_seed(3)
    b = list(s)
    jtorch.manual_seed(3)
    assert list(s) == b  # the seed comes from torch's generator


def test_shuffle_settings_over_the_graph():
    s = Range(5).shuffle()
    assert graph_settings.apply_shuffle_settings(s, shuffle=False) is s
    assert list(s) == [0, 1, 2, 3, 4]
    graph = traverse_dps(s)
    assert [type(p).__name__ for p in graph_settings.get_all_graph_pipes(graph)] == [
        "ShufflerIterDataPipe",
        "Range",
    ]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        added = graph_settings.apply_shuffle_settings(Range(3), shuffle=True)
    assert isinstance(added, ShufflerIterDataPipe) and "does not contain" in str(w[0].message)


def test_loader_iterators_have_pytorch_names():
    from jtorch.utils.data.dataloader import (
        _BaseDataLoaderIter,
        _MultiProcessingDataLoaderIter,
        _SingleProcessDataLoaderIter,
    )

    it = iter(DataLoader(Range(4), batch_size=2))
    assert isinstance(it, _SingleProcessDataLoaderIter) and isinstance(it, _BaseDataLoaderIter)
    assert issubclass(_MultiProcessingDataLoaderIter, _BaseDataLoaderIter)
    assert [b.tolist() for b in it] == [[0, 1], [2, 3]]
