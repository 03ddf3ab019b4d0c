"""Work that must end in bounded time even when it never returns: a daemon thread the deadline gives up on.

A trial's checks run user code (``assert_that``), commands and file walks. None of those can be
interrupted from outside a thread, so the checks run in a daemon thread of their own: the event loop
waits for it at most until the deadline (or until the run is cancelled by a signal), then goes on and
records what it knows. A thread given up on keeps running until it returns or the process exits;
being a daemon, it never keeps the process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["within"]

_T = TypeVar("_T")


async def within(function: Callable[[], _T], deadline_s: float, *, name: str = "trialbook-checks") -> _T:
    """``function()`` in a daemon thread; its result, or :class:`TimeoutError` at ``deadline_s``.

    Cancelling the caller stops the wait at once (the thread is given up on, as at the deadline).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(outcome: Callable[[], None]) -> None:
        # The loop may have closed meanwhile (RuntimeError): then nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(outcome)

    def settle_result(value: _T) -> None:
        if not future.done():
            future.set_result(value)

    def settle_error(error: BaseException) -> None:
        if not future.done():
            future.set_exception(error)

    def run() -> None:
        try:
            value = context.run(function)
        except BaseException as exc:  # handed to the awaiting coroutine, which re-raises it
            deliver(functools.partial(settle_error, exc))
        else:
            deliver(functools.partial(settle_result, value))

    threading.Thread(target=run, name=name, daemon=True).start()
    return await asyncio.wait_for(future, deadline_s)
