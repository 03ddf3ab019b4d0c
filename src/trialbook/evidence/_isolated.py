"""What isolation saw a trial do outside its sandbox: the files it wrote, the connections it was refused.

Both are ``None`` on a result when nothing watched (no isolation, or an agent whose processes trialbook
does not start): unknown, never an empty list that would read as "nothing happened".
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OutsideWrite", "RefusedConnection"]


@dataclass(frozen=True)
class OutsideWrite:
    """A file the agent wrote (or removed) outside its project folder; it stayed in the trial's own layer.

    ``path`` is the path as the agent saw it: ``/etc/x``, ``/tmp/y``, or ``~/.bashrc`` for the trial's
    own ``HOME``. ``size`` is in bytes (``0`` for a removal).
    """

    path: str
    size: int
    removed: bool = False


@dataclass(frozen=True)
class RefusedConnection:
    """A connection the trial's network policy refused: where the agent tried to connect."""

    host: str
    port: int
