"""Throw-away sandboxes for trials: a template copy, an isolated HOME, PATH shims and a call log."""

from ._calllog import CallLog, parse_call_log, read_call_log
from ._exclude import ALWAYS_EXCLUDED, TemplateFilter, check_pattern
from ._finished import SandboxTrial, run_command
from ._host import runner_path
from ._isolation import ISOLATIONS, NETWORKS, Isolation, bwrap_problem, hidden_paths
from ._sandbox import Sandbox, create_sandbox, remove_tree
from ._shims import ShimConfig, ShimMode
from .process import ProcessOutcome, kill_group, run_process

__all__ = [
    "ALWAYS_EXCLUDED",
    "ISOLATIONS",
    "NETWORKS",
    "CallLog",
    "Isolation",
    "ProcessOutcome",
    "Sandbox",
    "SandboxTrial",
    "ShimConfig",
    "ShimMode",
    "TemplateFilter",
    "bwrap_problem",
    "check_pattern",
    "create_sandbox",
    "hidden_paths",
    "kill_group",
    "parse_call_log",
    "read_call_log",
    "remove_tree",
    "run_command",
    "run_process",
    "runner_path",
]
