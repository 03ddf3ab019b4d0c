"""Run a coroutine to its end from synchronous code, whether or not the caller is inside an event loop.

``asyncio.run`` refuses to start while a loop runs in the calling thread, which is where a notebook, an
async test or an async application calls trialbook's synchronous functions from. There the coroutine
runs on a fresh loop in a thread of its own (with the caller's context), and the caller's loop, its
default executor included, is left as it was.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_blocking"]

_T = TypeVar("_T")


def run_blocking(coro: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coro)``, on a fresh thread when a loop already runs in this one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="trialbook-run") as pool:
        return pool.submit(context.run, asyncio.run, coro).result()
