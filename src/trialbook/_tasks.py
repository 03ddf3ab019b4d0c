"""Start a coroutine now, in the caller's turn of the event loop, and let it finish as a task.

``asyncio.ensure_future`` runs even a task's first step on a later turn of the loop, after every
callback that is ready before it. When eight trials finish their agents at once, each trial's
``ensure_future(loop.subprocess_exec(...))`` for its next agent waited behind the others' checks:
about 2 ms from asking for a process to its ``fork``, on every trial's critical path. The first step
of ``subprocess_exec`` is what forks, so running it at once starts the agent at once.

Python 3.12 does this itself (``Task(..., eager_start=True)``). On 3.11, :func:`start_now` sends the
coroutine its first ``None`` itself; when the coroutine then waits on a future, a task takes over once
that future is done (a task's step resumes a coroutine exactly there), and when it yields bare (as
``asyncio.sleep(0)`` does), at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["start_now"]

_T = TypeVar("_T")


def start_now(coro: Coroutine[Any, Any, _T]) -> asyncio.Future[_T]:
    """Run ``coro`` up to its first wait now; the returned future has its result (or exception).

    Call it from a coroutine on the running loop. Cancelling the returned future does not cancel the
    coroutine on 3.11 (shield it and wait, as for a task whose end must be seen).
    """
    if sys.version_info >= (3, 12):
        return asyncio.Task(coro, eager_start=True)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[_T] = loop.create_future()
    try:
        waits_on = coro.send(None)
    except StopIteration as stop:
        done.set_result(stop.value)
        return done
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        if isinstance(exc, asyncio.CancelledError):
            done.cancel()
        else:
            done.set_exception(exc)
        return done

    def finished(task: asyncio.Task[_T]) -> None:
        if done.cancelled():
            return
        if task.cancelled():
            done.cancel()
        elif (error := task.exception()) is not None:
            done.set_exception(error)
        else:
            done.set_result(task.result())

    def resume(_: object = None) -> None:
        # A task's first step sends None: the coroutine goes on from where it waits.
        asyncio.ensure_future(coro).add_done_callback(finished)

    if asyncio.isfuture(waits_on):
        waits_on._asyncio_future_blocking = False  # what a task does with a future it was handed
        waits_on.add_done_callback(resume)
    else:  # a bare yield: go on at the next turn
        resume()
    return done
