"""DataPipes and graph settings against PyTorch's: a seeded shuffler yields the same order
(both draw from Python's `random.Random(seed)`), and the graph helpers agree."""

import warnings

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _range_class(lib):
    class Range(lib.utils.data.IterDataPipe):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    Range.__qualname__ = Range.__name__ = f"Range_{lib.__name__}"
    return Range


# Module level: PyTorch's graph traversal pickles DataPipes.
Range_torch, Range_jtorch = _range_class(torch), _range_class(jtorch)


def _scenario(lib):
    from importlib import import_module

    data = import_module(f"{lib.__name__}.utils.data")
    graph = import_module(f"{lib.__name__}.utils.data.graph")
    gs = import_module(f"{lib.__name__}.utils.data.graph_settings")
    Range = globals()[f"Range_{lib.__name__}"]
    out = []
    s = Range(30).shuffle(buffer_size=5)
    for seed in (0, 1, 123):
        s.set_seed(seed)
        out.append(list(s))
    out.append(len(s))
    gs.apply_shuffle_settings(s, shuffle=False)
    out.append(list(s))
    out.append(
        [
            type(p).__name__.replace(f"_{lib.__name__}", "")
            for p in gs.get_all_graph_pipes(graph.traverse_dps(s))
        ]
    )
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        added = gs.apply_shuffle_settings(Range(3), shuffle=True)
    out += [type(added).__name__, [str(x.message) for x in w]]
    out.append([b.tolist() for b in data.DataLoader(Range(5), batch_size=2)])
    return out


def test_datapipes_match_pytorch():
    assert _scenario(jtorch) == _scenario(torch)
