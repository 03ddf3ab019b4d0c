"""Throw-away sandboxes for trials: a template copy, an isolated HOME, PATH shims and a call log."""

from .process import ProcessOutcome, kill_group, run_process

__all__ = ["ProcessOutcome", "kill_group", "run_process"]
