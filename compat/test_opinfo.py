"""OpInfo forward parity: every OpInfo of PyTorch's database, run against jtorch.

Knobs (environment variables):
  JTORCH_OPINFO=<regex>        only OpInfos whose id (name[.variant]) matches
  JTORCH_OPINFO_FULL=1         every sample, in float32, int64 and bool (the recorded run);
                               otherwise float32 and at most 6 samples per op, which keeps a
                               cold-cache CI run within minutes (each sample shape compiles)
  JTORCH_OPINFO_DTYPES=a,b     override the dtypes sampled
  JTORCH_OPINFO_MAX_SAMPLES=n  at most n samples per op and dtype
  JTORCH_OPINFO_UPDATE=1       write this run's results into compat/ops_status.json

The committed record `compat/ops_status.json` makes regressions fail: an op
recorded as passing must still pass. Ops not yet passing are reported as
xfail with their first mismatch. The summary line is printed at the end.
"""

import json
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

from compat import opinfo  # noqa: E402

RECORD = os.path.join(os.path.dirname(__file__), "ops_status.json")
_recorded = json.load(open(RECORD)) if os.path.exists(RECORD) else {}
_FULL = os.environ.get("JTORCH_OPINFO_FULL") == "1"
_dtypes = tuple(
    getattr(torch, d)
    for d in os.environ.get(
        "JTORCH_OPINFO_DTYPES", "float32,int64,bool" if _FULL else "float32"
    ).split(",")
)
_max_samples = int(os.environ.get("JTORCH_OPINFO_MAX_SAMPLES", 0)) or (None if _FULL else 6)

RESULTS: dict = {}  # op id -> status record, read by the summary hook in conftest

_ops = opinfo.selected_ops()


@pytest.mark.parametrize("op", _ops, ids=[opinfo.op_id(o) for o in _ops])
def test_opinfo_forward(op):
    oid = opinfo.op_id(op)
    rec = opinfo.run_op(op, _dtypes, _max_samples)
    RESULTS[oid] = rec
    status = rec["status"]
    before = _recorded.get(oid, {}).get("status")
    if status == "pass":
        return
    if before == "pass":
        pytest.fail(f"regression: {oid} passed before, now {status}: {rec.get('first_failure')}")
    if status == "skip":
        pytest.skip(rec["reason"])
    pytest.xfail(f"{status}: {rec.get('first_failure', '')}")
