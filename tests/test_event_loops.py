"""PerLoop: one resource per running event loop, on real asyncio loops."""

from __future__ import annotations

import asyncio
import gc

import pytest

from mcs.errors import ConfigurationError
from mcs.event_loops import PerLoop, close_outside_loops


class Pool:
    """Stands for an async client: it records which loop closed it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed_on: list[asyncio.AbstractEventLoop] = []

    async def aclose(self) -> None:
        self.closed_on.append(asyncio.get_running_loop())


async def _aclose(pool: Pool) -> None:
    await pool.aclose()


def test_each_asyncio_run_closes_its_own_resource_on_its_loop_and_forgets_it() -> None:
    pools: PerLoop[Pool] = PerLoop(_aclose)
    made: list[tuple[Pool, asyncio.AbstractEventLoop]] = []

    async def use(name: str) -> Pool:
        pool = pools.current() or await pools.add(Pool(name))
        assert pools.current() is pool
        made.append((pool, asyncio.get_running_loop()))
        return pool

    for number in range(25):
        asyncio.run(use(f"run {number}"))
        assert len(pools) == 0  # the loop's shutdown closed it and let it go
    assert [pool.closed_on for pool, _ in made] == [[loop] for _, loop in made]


def test_a_loop_reuses_its_resource_until_its_shutdown() -> None:
    pools: PerLoop[Pool] = PerLoop(_aclose)

    async def twice() -> tuple[Pool, Pool]:
        first = pools.current() or await pools.add(Pool("a"))
        second = pools.current() or await pools.add(Pool("b"))
        return first, second

    first, second = asyncio.run(twice())
    assert first is second and first.closed_on


def test_a_loop_closed_without_its_shutdown_is_forgotten_when_the_next_resource_comes() -> None:
    pools: PerLoop[Pool] = PerLoop(_aclose)
    loop = asyncio.new_event_loop()
    orphan = loop.run_until_complete(pools.add(Pool("orphan")))
    loop.close()  # no shutdown_asyncgens: nothing could close the orphan on its loop
    assert len(pools) == 1

    async def next_one() -> None:
        await pools.add(Pool("next"))
        assert len(pools) == 1  # the closed loop's entry went

    asyncio.run(next_one())
    assert len(pools) == 0 and orphan.closed_on == []
    gc.collect()  # the orphan's suspended closer is dropped with its loop, quietly


def test_a_released_resources_late_finalisation_leaves_the_newer_one_in_place() -> None:
    pools: PerLoop[Pool] = PerLoop(_aclose)

    async def release_then_add() -> tuple[Pool, Pool, Pool | None]:
        old = await pools.add(Pool("old"))
        assert pools.release() == [old]
        new = await pools.add(Pool("new"))
        gc.collect()  # the old closer, now unreferenced, is finalised on this loop
        for _ in range(3):
            await asyncio.sleep(0)
        return old, new, pools.current()

    old, new, current = asyncio.run(release_then_add())
    assert current is new
    assert len(old.closed_on) == 1 and len(new.closed_on) == 1


def test_close_outside_loops_closes_each_released_resource() -> None:
    pools: PerLoop[Pool] = PerLoop(_aclose)
    loop = asyncio.new_event_loop()
    kept = loop.run_until_complete(pools.add(Pool("kept")))
    released = pools.release()
    close_outside_loops(released, _aclose)
    assert released == [kept] and len(kept.closed_on) == 1 and kept.closed_on[0] is not loop
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def test_close_outside_loops_refuses_inside_a_running_loop_and_names_aclose() -> None:
    async def inside() -> None:
        with pytest.raises(ConfigurationError, match=r"await driver\.aclose\(\)"):
            close_outside_loops([Pool("p")], _aclose)

    asyncio.run(inside())


def test_aclose_current_closes_this_loops_resource_at_once_and_once() -> None:
    pools: PerLoop[Pool] = PerLoop(_aclose)

    async def close_now() -> tuple[Pool, int, Pool | None]:
        pool = await pools.add(Pool("now"))
        await pools.aclose_current()
        closed_before_shutdown = len(pool.closed_on)
        await pools.aclose_current()  # nothing left: a no-op
        return pool, closed_before_shutdown, pools.current()

    pool, closed_before_shutdown, current = asyncio.run(close_now())
    assert closed_before_shutdown == 1 and current is None
    assert len(pool.closed_on) == 1 and len(pools) == 0  # the loop's shutdown did not close it again


def test_loops_on_several_threads_share_one_table_while_another_thread_releases_it() -> None:
    import threading

    pools: PerLoop[Pool] = PerLoop(_aclose)
    made: list[Pool] = []
    failures: list[BaseException] = []

    async def use(name: str) -> None:
        pool = await pools.add(Pool(name))
        made.append(pool)
        for _ in range(3):
            await asyncio.sleep(0)
            assert pools.current() in (pool, None)  # None once a release took it

    def runs(thread: int) -> None:
        try:
            for number in range(30):
                asyncio.run(use(f"{thread}.{number}"))
        except BaseException as exc:  # reported below, with the thread's traceback
            failures.append(exc)

    threads = [threading.Thread(target=runs, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        pools.release()  # what a driver's close() does, racing the loops
    for thread in threads:
        thread.join()
    assert failures == [] and len(made) == 60 and len(pools) == 0
    assert all(len(pool.closed_on) == 1 for pool in made)  # each closed once, by its own loop's shutdown
