"""ChildPool (wildtoolbench/runner/child_pool.py): the worker pool of ``wtb eval --workers`` and
``wtb generate --workers`` (docs/settings.md §2.1, docs/generation.md §12), with a small child that doubles numbers."""

from __future__ import annotations

import asyncio
import json

import pytest

from wildtoolbench.runner.child_pool import ChildPool


class Doubler(ChildPool):
    module = "tests.support.pool_child"

    def header(self):
        return {"hello": True}

    def result(self, answer, key):
        return (key, answer["value"])

    def lost(self, child, key, reason):
        return (key, reason)

    async def ask(self, key, **request):
        child = self.least_busy()
        if child is None:
            return (key, "none left")
        return await self.send(child, key, lambda n: json.dumps({"n": n, **request}).encode() + b"\n")


def test_fewer_than_one_worker_is_refused():
    with pytest.raises(ValueError, match="--workers must be >= 1, got 0"):
        Doubler(0)


async def test_answers_resolve_their_requests_over_the_children():
    async with Doubler(2) as pool:
        results = await asyncio.gather(*(pool.ask(f"r{x}", x=x) for x in range(1, 6)))
        assert results == [("r1", 2), ("r2", 4), ("r3", 6), ("r4", 8), ("r5", 10)]
        assert len(pool.children) == 2 and all(c.alive and not c.pending for c in pool.children)
    assert [c.process.returncode for c in pool.children] == [0, 0]  # stdin closed: each child ended


async def test_a_child_that_exits_loses_its_requests_and_takes_no_more():
    async with Doubler(1) as pool:
        held = asyncio.ensure_future(pool.ask("held", x=1, hold=True))
        await asyncio.sleep(0.2)
        assert await pool.ask("dies", x=1, die=True) == ("dies", "the worker process exited (status 3)")
        assert await held == ("held", "the worker process exited (status 3)")
        assert pool.least_busy() is None
        assert await pool.ask("after", x=1) == ("after", "none left")


async def test_a_bad_reply_kills_the_child_and_loses_its_requests():
    async with Doubler(1) as pool:
        key, reason = await pool.ask("bad", x=1, garble=True)
        assert key == "bad" and reason.startswith("bad reply from the worker process: Expecting value")
        assert not pool.children[0].alive and pool.children[0].process.returncode == -9
