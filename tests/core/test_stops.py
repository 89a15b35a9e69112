"""``stops_contained``: SystemExit and KeyboardInterrupt raised in a task started inside it
end that task with an ordinary exception (or call ``on_interrupt``), not the event loop."""

from __future__ import annotations

import asyncio

import pytest

from langchain_evals_port.core._stops import stops_contained
from langchain_evals_port.core.errors import StoppedInEvaluation


async def _raise(stop: BaseException) -> None:
    await asyncio.sleep(0)
    raise stop


@pytest.mark.parametrize("stop", [SystemExit(0), KeyboardInterrupt()])
async def test_a_stop_in_a_task_fails_that_task_and_the_loop_goes_on(stop: BaseException) -> None:
    with stops_contained():
        task = asyncio.create_task(_raise(stop))
        with pytest.raises(StoppedInEvaluation, match=type(stop).__name__) as raised:
            await task
    assert raised.value.__cause__ is stop
    assert await asyncio.create_task(asyncio.sleep(0, "still running")) == "still running"


async def test_an_interrupt_calls_on_interrupt_and_cancels_its_task() -> None:
    seen: list[KeyboardInterrupt] = []
    with stops_contained(on_interrupt=seen.append):
        task = asyncio.create_task(_raise(KeyboardInterrupt()))
        with pytest.raises(asyncio.CancelledError):
            await task
    assert len(seen) == 1


async def test_tasks_started_outside_the_block_are_left_as_they_are() -> None:
    with stops_contained():
        inside = asyncio.create_task(asyncio.sleep(0))
    outside = asyncio.create_task(asyncio.sleep(0))
    await asyncio.gather(inside, outside)
    assert inside.get_coro().__qualname__ == "_contained"  # type: ignore[union-attr]
    assert outside.get_coro().__qualname__ == "sleep"  # type: ignore[union-attr]


def test_an_interrupt_s_cancellation_left_in_a_gather_is_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with stops_contained(on_interrupt=lambda stop: None):
            interrupted = asyncio.CancelledError("interrupted")
            interrupted.__cause__ = KeyboardInterrupt()
            # What a Future's finaliser reports for a gather's cancellation nobody retrieved.
            loop.call_exception_handler(
                {"message": "Future exception was never retrieved", "exception": interrupted}
            )
            loop.call_exception_handler(
                {"message": "Future exception was never retrieved", "exception": ValueError()}
            )

    with caplog.at_level("ERROR", logger="asyncio"):
        asyncio.run(main())
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["Future exception was never retrieved"]  # only the ValueError's
    assert caplog.records[0].exc_info is not None
    assert caplog.records[0].exc_info[0] is ValueError
