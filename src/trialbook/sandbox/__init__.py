"""Throw-away sandboxes for trials: a template copy, an isolated HOME, PATH shims and a call log."""

from ._calllog import CallLog, parse_call_log, read_call_log
from ._finished import SandboxTrial, run_command
from ._sandbox import Sandbox, create_sandbox, remove_tree
from ._shims import ShimConfig, ShimMode
from .process import ProcessOutcome, kill_group, run_process

__all__ = [
    "CallLog",
    "ProcessOutcome",
    "Sandbox",
    "SandboxTrial",
    "ShimConfig",
    "ShimMode",
    "create_sandbox",
    "kill_group",
    "parse_call_log",
    "read_call_log",
    "remove_tree",
    "run_command",
    "run_process",
]
