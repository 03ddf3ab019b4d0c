"""History of verdicts: one JSON line per eval x agent per run, kept in git or in a folder.

``GitBranchStore`` keeps ``history/<id>.jsonl`` on an orphan branch (default ``trialbook-results``)
written without a checkout and shared by fetch, union merge and push; ``DirectoryStore`` keeps
``<dir>/<id>.jsonl``. Both satisfy ``HistoryStore``; ``open_store`` picks one from the CLI options.

The names load on first use: a run without history (or with ``--history-dir``) never imports pygit2
and the git store, whose import alone costs a local one-trial run more than its trial.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy_exports

if TYPE_CHECKING:
    from ._directory import DirectoryStore
    from ._factory import open_store
    from ._git import DEFAULT_BRANCH, GitBranchStore, default_signature
    from ._line import LINE_VERSION, HistoryLine, Verdict, format_started_at, new_run_id, parse_started_at
    from ._network import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_IDLE_TIMEOUT_S, NetworkTimeouts
    from ._protocol import (
        HistoryAuthError,
        HistoryError,
        HistoryFetchError,
        HistoryPushError,
        HistoryStore,
        SyncAction,
        SyncReport,
    )
    from ._union import union_lines

_LAZY = {
    "DEFAULT_CONNECT_TIMEOUT_S": "_network",
    "DEFAULT_IDLE_TIMEOUT_S": "_network",
    "DirectoryStore": "_directory",
    "open_store": "_factory",
    "DEFAULT_BRANCH": "_git",
    "GitBranchStore": "_git",
    "default_signature": "_git",
    "LINE_VERSION": "_line",
    "HistoryLine": "_line",
    "Verdict": "_line",
    "format_started_at": "_line",
    "new_run_id": "_line",
    "parse_started_at": "_line",
    "NetworkTimeouts": "_network",
    "HistoryAuthError": "_protocol",
    "HistoryError": "_protocol",
    "HistoryFetchError": "_protocol",
    "HistoryPushError": "_protocol",
    "HistoryStore": "_protocol",
    "SyncAction": "_protocol",
    "SyncReport": "_protocol",
    "union_lines": "_union",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)


__all__ = [
    "DEFAULT_BRANCH",
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "LINE_VERSION",
    "DirectoryStore",
    "GitBranchStore",
    "HistoryAuthError",
    "HistoryError",
    "HistoryFetchError",
    "HistoryLine",
    "HistoryPushError",
    "HistoryStore",
    "NetworkTimeouts",
    "SyncAction",
    "SyncReport",
    "Verdict",
    "default_signature",
    "format_started_at",
    "new_run_id",
    "open_store",
    "parse_started_at",
    "union_lines",
]
