"""Histograms (`jtorch/_ops/histogram.py`): `histogramdd` and its `_histogramdd_*` kernels;
expected values counted by hand."""

import numpy as np
import pytest

import jtorch as torch
from tests.helpers import close, same

PTS = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 2.0], [5.0, 5.0]], np.float32)


def test_histogramdd_counts_edges_weights_density():
    r = torch.histogramdd(torch.from_numpy(PTS), [2, 3])
    hist, edges = np.histogramdd(PTS, bins=[2, 3])
    assert type(r).__name__ == "histogramdd" and r._fields == ("hist", "bin_edges")
    same(r.hist, hist, torch.float32)
    assert len(r.bin_edges) == 2
    close(r.bin_edges[1], edges[1])
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    bins = [torch.tensor([0.0, 1.0, 3.0]), torch.tensor([0.0, 2.0, 5.0])]
    r = torch.histogramdd(torch.from_numpy(PTS), bins, weight=torch.from_numpy(w), density=True)
    expected, _ = np.histogramdd(PTS, bins=[[0, 1, 3], [0, 2, 5]], weights=w, density=True)
    close(r.hist, expected)
    r = torch.histogramdd(torch.ones(3, 2), 2)  # a degenerate range widens by half a unit
    close(r.bin_edges[0], [0.5, 1.0, 1.5])


def test_histogramdd_errors():
    x = torch.from_numpy(PTS)
    with pytest.raises(RuntimeError, match="size of bins must be equal"):
        torch.histogramdd(x, [2, 3, 4])
    with pytest.raises(RuntimeError, match="min should not exceed max"):
        torch.histogramdd(x, 2, range=[1.0, 0.0, 0.0, 1.0])
    with pytest.raises(RuntimeError, match="same shape as the input tensor excluding"):
        torch.histogramdd(x, 2, weight=torch.ones(3))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        torch.histogramdd(torch.ones(2, 2, dtype=torch.int64), 2)
