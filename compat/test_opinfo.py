"""OpInfo forward parity: every OpInfo of PyTorch's database, run against jtorch.

Knobs (environment variables):
  JTORCH_OPINFO=<regex>        only OpInfos whose id (name[.variant]) matches
  JTORCH_OPINFO_DTYPES=a,b     dtypes to sample (default: float32,int64,bool)
  JTORCH_OPINFO_UPDATE=1       rewrite compat/ops_status.json from this run

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
_dtypes = tuple(getattr(torch, d) for d in os.environ.get(
    "JTORCH_OPINFO_DTYPES", "float32,int64,bool").split(","))

RESULTS: dict = {}  # op id -> status record, read by the summary hook in conftest

_ops = opinfo.selected_ops()


@pytest.mark.parametrize("op", _ops, ids=[opinfo.op_id(o) for o in _ops])
def test_opinfo_forward(op):
    oid = opinfo.op_id(op)
    rec = opinfo.run_op(op, _dtypes)
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
