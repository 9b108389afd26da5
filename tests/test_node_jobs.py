"""A node checks its peers' shuffle proofs one at a time (side by side, a seat's
three deferred checks took the cores from the receive-prove-send path the next shuffler waits
on), while its own shuffle's precomputation is never queued behind them."""

from __future__ import annotations

import threading

import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.net import node as nd


class _Table:
    """The little of a table that a finished job touches."""

    def __init__(self) -> None:
        self.done: list[int] = []

    def job_done(self, job_id: int, result: object) -> list:
        self.done.append(job_id)
        return []

    def needs_decision(self) -> None:
        return None

    def view(self) -> None:
        return None


async def test_peer_proofs_are_checked_one_at_a_time(monkeypatch):
    release = threading.Event()
    lock = threading.Lock()
    running = {"verify_shuffle": 0, "prepare_shuffle": 0}
    peak = dict(running)
    prepared_during_a_check = []

    def run_job(job: tbl.Job) -> str:
        with lock:
            running[job.kind] += 1
            peak[job.kind] = max(peak[job.kind], running[job.kind])
            if job.kind == "prepare_shuffle":
                prepared_during_a_check.append(running["verify_shuffle"])
        if job.kind == "verify_shuffle":
            assert release.wait(30), "the test never released the checks"
        with lock:
            running[job.kind] -= 1
        return "ok"

    monkeypatch.setattr(tbl, "run_job", run_job)
    table = _Table()
    node = nd.Node(table)  # type: ignore[arg-type]
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for i in (1, 2, 3):
                # no function: run_job is replaced
                nursery.start_soon(node._run_job, tbl.Job(i, "verify_shuffle", None, ()))  # type: ignore[arg-type]
            while running["verify_shuffle"] == 0:
                await trio.sleep(0.01)
            nursery.start_soon(node._run_job, tbl.Job(4, "prepare_shuffle", None, ()))  # type: ignore[arg-type]
            try:
                while 4 not in table.done:  # our own precomputation ran while a check was held
                    await trio.sleep(0.01)
                assert running["verify_shuffle"] == 1
            finally:
                release.set()
    assert sorted(table.done) == [1, 2, 3, 4]
    assert peak["verify_shuffle"] == 1
    assert prepared_during_a_check == [1]
