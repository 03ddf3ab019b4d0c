"""Scheduling trials: concurrency, budget, timeouts, verdicts, and the results folder."""

from ._cancel import Cancellation, handle_signals
from ._engine import EntryResult
from ._events import ProgressSink, TrialFinished, TrialStarted
from ._ledger import BudgetLedger
from ._options import RunOptions
from ._plan import PlanEntry
from ._run import RunReport, SilentSink, load_specs, run
from ._trial import TrialOutcome

__all__ = [
    "BudgetLedger",
    "Cancellation",
    "EntryResult",
    "PlanEntry",
    "ProgressSink",
    "RunOptions",
    "RunReport",
    "SilentSink",
    "TrialFinished",
    "TrialOutcome",
    "TrialStarted",
    "handle_signals",
    "load_specs",
    "run",
]
