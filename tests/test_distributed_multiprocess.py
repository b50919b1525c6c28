"""jtorch.distributed over several processes: the launcher, collectives, DDP, FSDP2,
DTensor, mp.spawn.

The scripts in dist_scripts/ check their own results against numpy (or against a plain
model trained on the global batch) and print "ok N" from rank 0. Multi-process runs are
slow (each process imports jtorch and compiles its collectives), so the default suite runs
two short 2-process jobs (collectives, a failing rank; compat/test_distributed_torchrun.py
adds DDP); JTORCH_DIST_FULL=1 runs the rest (4 processes, DDP, FSDP, DTensor, mp.spawn).
"""

import os
import subprocess
import sys
import time

import pytest

from tests.helpers import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_scripts")
FULL = pytest.mark.skipif(
    os.environ.get("JTORCH_DIST_FULL") != "1",
    reason="multi-process runs beyond the default two: set JTORCH_DIST_FULL=1",
)


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT, JTORCH_COMPILE_NOTE="0")


def torchrun(script: str, nproc: int = 2, *flags, timeout: float = 300):
    """Runs dist_scripts/`script` with jtorch's torchrun in its own session."""
    cmd = [
        sys.executable,
        "-m",
        "jtorch",
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(nproc),
        *flags,
    ]
    if not any(f.startswith(("--master-port", "--master_port", "--rdzv")) for f in flags):
        # a free port of its own (torchrun's default 29500 would meet another run on this host)
        cmd += ["--master-port", str(free_port())]
    cmd.append(script)
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
        cwd=SCRIPTS,
        start_new_session=True,
    )


def test_collectives_over_two_processes():
    r = torchrun("collectives.py")
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "ok 2"
    assert "rank 1 all_reduce RedOpType.SUM: [10.0, 12.0, 14.0, 16.0, 18.0, 20.0]" in lines
    assert "[Gloo]" not in r.stdout  # gloo's connection line stays out of the output


FAILING = """
import time, torch, torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    dist.init_process_group("gloo")
    if dist.get_rank() == 1:
        raise ValueError("rank 1 fails")
    dist.all_reduce(torch.ones(2))      # waits for a rank that died
    time.sleep(600)

main()
"""


def test_a_failing_rank_ends_the_job(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    start = time.monotonic()
    r = torchrun(str(script), 2, "--monitor-interval", "0.1")
    elapsed = time.monotonic() - start
    assert r.returncode == 1
    assert "ChildFailedError" in r.stderr and "failing.py FAILED" in r.stderr
    assert "ValueError: rank 1 fails" in r.stderr and "rank      : 1 (local_rank: 1)" in r.stderr
    assert elapsed < 30  # the other rank was stopped, not waited for (about 6 s)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(script) not in ps


@FULL
def test_collectives_over_four_processes():
    r = torchrun("collectives.py", 4, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == "ok 4"


@FULL
@pytest.mark.parametrize("nproc", [2, 4])
def test_ddp_trains_like_one_process_on_the_global_batch(nproc):
    r = torchrun("ddp.py", nproc, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == f"ok {nproc}"


@FULL
def test_ddp_under_compile_is_one_program_with_its_all_reduces():
    """A compiled DDP step, a no_sync step and a compiled DDP module train like one process
    on the global batch (the script checks), a steady step runs no Python collective;
    only the cases that must run eagerly say so."""
    r = torchrun("ddp_compile.py", 2, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == "ok 2"
    fallbacks = [line for line in r.stderr.splitlines() if "falling back to eager" in line]
    # per rank: the compiled module (its forward broadcasts a buffer and its backward runs
    # outside) and the find_unused_parameters step
    assert len(fallbacks) == 4, fallbacks
    reasons = ("find_unused_parameters=True", "a forward with collectives over several processes")
    assert all(any(why in f for why in reasons) for f in fallbacks), fallbacks


@FULL
@pytest.mark.parametrize("nproc", [2, 4])
def test_dtensor_pieces_match_the_global_tensor(nproc):
    r = torchrun("dtensor.py", nproc, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == f"ok {nproc}"
    # rank 1 holds rows 3-4 of the 5x3 arange when 2 ranks split it (torch.chunk's pieces)
    if nproc == 2:
        assert "rank 1: local [[9.0, 10.0, 11.0], [12.0, 13.0, 14.0]] (Shard(dim=0),)" in lines


@FULL
@pytest.mark.parametrize("nproc", [2, 4])
def test_fully_shard_trains_like_one_process_on_the_global_batch(nproc):
    r = torchrun("fsdp.py", nproc, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == f"ok {nproc}"


@FULL
def test_tensor_parallel_trains_like_the_plain_model():
    r = torchrun("tp.py", 2, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "ok 2"
    # PyTorch's counts for this script (its torchrun, gloo): the layers compute on their local
    # pieces, so no weight is ever gathered.
    assert lines[:2] == [
        "forward: [('c10d_functional.all_reduce', 1)]",
        "forward and backward, input requiring grad: [('c10d_functional.all_reduce', 2)]",
    ]


@FULL
def test_tensor_parallel_language_model_computes_on_local_pieces():
    r = torchrun("tp_lm.py", 2, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert lines[-1] == "ok 2"
    # PyTorch's counts per training step of this script (its torchrun, gloo): the embedding's
    # masked partial sum, the MLP's and the head's input gradients are all-reduced, the
    # head's replicated output is gathered.
    for line in lines[:4]:
        assert line.endswith(
            "collectives [('c10d_functional.all_gather_into_tensor', 1), "
            "('c10d_functional.all_reduce', 4)]"
        ), line


@FULL
@pytest.mark.parametrize("nproc", [2, 4])
def test_checkpoint_of_sharded_state_resumes_training_exactly(nproc):
    r = torchrun("dcp.py", nproc, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == f"ok {nproc}"


@FULL
def test_multiprocessing_spawn_with_tcp_init():
    cmd = [sys.executable, "-m", "jtorch", "spawn.py", "2"]
    r = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=SCRIPTS,
        start_new_session=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "sum [0.0, 3.0, 6.0] ranks agree True"
    r = subprocess.run(
        cmd + ["fail"],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=SCRIPTS,
        start_new_session=True,
    )
    assert r.stdout.strip() == "failed: RuntimeError: rank 1 fails", r.stderr[-3000:]
