"""Which secret values can be masked honestly: 1–3 characters cannot, 4–7 characters only with a warning."""

from __future__ import annotations

__all__ = ["SHORT_SECRET", "WEAK_SECRET", "length_problem", "length_warning"]

SHORT_SECRET = 4
"""Values shorter than this refuse the run: masking ``ab`` would turn ordinary words into ``***``."""

WEAK_SECRET = 8
"""Values shorter than this run with a warning that ordinary words containing them are masked too."""


def length_problem(name: str, value: str) -> str | None:
    """Why a secret value is too short to mask, or ``None`` when it can be masked."""
    if not value or len(value) >= SHORT_SECRET:
        return None
    return (
        f"{name} is {len(value)} character{'s' if len(value) > 1 else ''} long, too short to mask without "
        f"masking ordinary text; use a value of at least {SHORT_SECRET} (better {WEAK_SECRET}) characters"
    )


def length_warning(name: str, value: str) -> str | None:
    """A warning for a value that is masked but short enough to hide ordinary words, else ``None``."""
    if not SHORT_SECRET <= len(value) < WEAK_SECRET:
        return None
    return (
        f"{name} is {len(value)} characters long: any text containing its value, ordinary words included, "
        "shows as *** in results and logs"
    )
