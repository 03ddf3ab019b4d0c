"""History of verdicts: one JSON line per eval x agent per run, kept in git or in a folder.

``GitBranchStore`` keeps ``history/<id>.jsonl`` on an orphan branch (default ``trialbook-results``)
written without a checkout and shared by fetch, union merge and push; ``DirectoryStore`` keeps
``<dir>/<id>.jsonl``. Both satisfy ``HistoryStore``; ``open_store`` picks one from the CLI options.
"""

from ._directory import DirectoryStore
from ._factory import open_store
from ._git import DEFAULT_BRANCH, GitBranchStore, default_signature
from ._line import LINE_VERSION, HistoryLine, Verdict, format_started_at, new_run_id, parse_started_at
from ._network import NetworkTimeouts
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

__all__ = [
    "DEFAULT_BRANCH",
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
