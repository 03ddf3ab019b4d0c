"""Which secret values can be masked honestly: 1–3 characters cannot, 4–7 characters only with a warning.

Lengths are counted without the whitespace around the value.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from ..errors import ConfigError

__all__ = [
    "SHORT_SECRET",
    "WEAK_SECRET",
    "ShortSecretWarning",
    "enforce_lengths",
    "length_problem",
    "length_report",
    "length_warning",
]

SHORT_SECRET = 4
"""Values shorter than this refuse the run: masking ``ab`` would turn ordinary words into ``***``."""

WEAK_SECRET = 8
"""Values shorter than this run with a warning that ordinary words containing them are masked too."""


class ShortSecretWarning(UserWarning):
    """A credential of 4 to 7 characters: masked, and ordinary words containing it are masked too."""


def _length(value: str) -> tuple[int, str]:
    # Measured without surrounding whitespace: ``$(cat key)`` or a YAML block can leave a newline on the
    # value, and ``echo $X`` prints it stripped. The stripped form is the shortest one that gets out, so
    # it decides whether the value can be masked at all.
    stripped = len(value.strip())
    return stripped, "" if stripped == len(value) else " without its surrounding whitespace"


def length_problem(name: str, value: str) -> str | None:
    """Why a secret value is too short to mask, or ``None`` when it can be masked (empty: missing)."""
    length, how = _length(value)
    if not value or length >= SHORT_SECRET:
        return None
    return (
        f"{name} is {length} character{'' if length == 1 else 's'} long{how}, too short to mask without "
        f"masking ordinary text; use a value of at least {SHORT_SECRET} (better {WEAK_SECRET}) characters"
    )


def length_warning(name: str, value: str) -> str | None:
    """A warning for a value that is masked but short enough to hide ordinary words, else ``None``."""
    length, how = _length(value)
    if not SHORT_SECRET <= length < WEAK_SECRET:
        return None
    return (
        f"{name} is {length} characters long{how}: any text containing its value, ordinary words "
        "included, shows as *** in results and logs"
    )


def length_report(named: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """The problems (1–3 characters) and warnings (4–7) for named credential values, each name once.

    For the paths that take credentials without the runner (the pytest plugin's fixtures, scripts), so a
    key there is refused or warned about as a declared secret is by ``trialbook eval``.
    """
    problems: dict[str, str] = {}
    warnings: dict[str, str] = {}
    for name, value in named:
        problem = length_problem(name, value)
        if problem is not None:
            problems.setdefault(name, problem)
            continue
        warning = length_warning(name, value)
        if warning is not None:
            warnings.setdefault(name, warning)
    return list(problems.values()), [text for name, text in warnings.items() if name not in problems]


def enforce_lengths(named: Iterable[tuple[str, str]], *, stacklevel: int = 2) -> None:
    """Refuse named credentials too short to mask; warn about weak ones (:func:`length_report`).

    Raises:
        ConfigError: one line per value of 1 to 3 characters, naming it. Values of 4 to 7 characters
            give a :class:`ShortSecretWarning` each, attributed ``stacklevel`` frames up from the caller.
    """
    problems, weak = length_report(named)
    if problems:
        raise ConfigError(problems)
    for warning in weak:
        warnings.warn(warning, ShortSecretWarning, stacklevel=stacklevel + 1)
