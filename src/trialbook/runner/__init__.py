"""Scheduling trials: concurrency, budget, timeouts, verdicts, and the results folder."""

from ._arms import comparisons
from ._cancel import Cancellation, current_cancellation, handle_signals
from ._engine import EntryResult
from ._events import Notice, ProgressSink, TrialFinished, TrialStarted
from ._folder import claim, sweep_partials, unusable_path
from ._history import pending_lines
from ._ledger import BudgetLedger
from ._manifest import MANIFEST, pair_json, read_manifest
from ._options import RunOptions
from ._plan import CONTROL_LABEL, WITHOUT_SUFFIX, PlanEntry, agent_label
from ._rescore import NOT_RESCORABLE
from ._review import entry_remarks, review_of, table_rows
from ._run import RunReport, SilentSink, load_specs, run
from ._secrets import run_masker, run_secrets
from ._selection import closest
from ._trial import TrialOutcome
from ._triggers import trigger_groups
from ._versions import drift_headlines, version_drift

__all__ = [
    "CONTROL_LABEL",
    "MANIFEST",
    "NOT_RESCORABLE",
    "WITHOUT_SUFFIX",
    "BudgetLedger",
    "Cancellation",
    "EntryResult",
    "Notice",
    "PlanEntry",
    "ProgressSink",
    "RunOptions",
    "RunReport",
    "SilentSink",
    "TrialFinished",
    "TrialOutcome",
    "TrialStarted",
    "agent_label",
    "claim",
    "closest",
    "comparisons",
    "current_cancellation",
    "drift_headlines",
    "entry_remarks",
    "handle_signals",
    "load_specs",
    "pair_json",
    "pending_lines",
    "read_manifest",
    "review_of",
    "run",
    "run_masker",
    "run_secrets",
    "sweep_partials",
    "table_rows",
    "trigger_groups",
    "unusable_path",
    "version_drift",
]
