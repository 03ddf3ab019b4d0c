"""run_blocking hands back a coroutine's result untouched, and never formats it on the way."""

import asyncio

import pytest

from trialbook._util.blocking import run_blocking


class Unshowable:
    """A result that counts how often it is formatted: a run's result is every trial's outcome.

    Formatting it is costly, and whoever formats it on the way (``reprlib``) swallows any error, so
    only a count tells.
    """

    def __init__(self) -> None:
        self.shown = 0

    def __repr__(self) -> str:
        self.shown += 1
        return "Unshowable()"


async def make() -> Unshowable:
    await asyncio.sleep(0)
    return Unshowable()


def test_the_result_comes_back_without_being_formatted() -> None:
    # asyncio.run's end asks signal.getsignal for its SIGINT handler, which on Python 3.11 formats the
    # main task and so its result; the box keeps the result out of that.
    result = run_blocking(make())
    assert isinstance(result, Unshowable)
    assert result.shown == 0


@pytest.mark.asyncio
async def test_inside_a_running_loop_too() -> None:
    result = run_blocking(make())
    assert isinstance(result, Unshowable)
    assert result.shown == 0


def test_an_exception_comes_through() -> None:
    async def fail() -> None:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run_blocking(fail())
