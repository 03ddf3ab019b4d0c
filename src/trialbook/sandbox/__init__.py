"""Throw-away sandboxes for trials: a template copy, an isolated HOME, PATH shims and a call log."""

from ._backend import ISOLATION_BACKENDS, ISOLATIONS, NETWORKS, IsolationBackend
from ._calllog import CallLog, parse_call_log, read_call_log
from ._capture import DEFAULT_OUTPUT_LIMIT, MIN_OUTPUT_LIMIT, OutputCapture
from ._changes import CHANGES_FILE, record_changes
from ._copy import copy_tree
from ._exclude import ALWAYS_EXCLUDED, TemplateFilter, check_pattern
from ._finished import SandboxTrial, run_command
from ._host import runner_path
from ._isolation import hidden_paths, install_root
from ._rebuild import Rebuilt, apply_changes
from ._remover import SandboxRemover
from ._sandbox import Sandbox, create_sandbox, remove_tree
from ._shims import ShimConfig, ShimMode, bash_path, shim_name_problem
from ._special import find_special_files, special_kind
from .process import ProcessOutcome, kill_group, run_process

__all__ = [
    "ALWAYS_EXCLUDED",
    "CHANGES_FILE",
    "DEFAULT_OUTPUT_LIMIT",
    "ISOLATIONS",
    "ISOLATION_BACKENDS",
    "MIN_OUTPUT_LIMIT",
    "NETWORKS",
    "CallLog",
    "IsolationBackend",
    "OutputCapture",
    "ProcessOutcome",
    "Rebuilt",
    "Sandbox",
    "SandboxRemover",
    "SandboxTrial",
    "ShimConfig",
    "ShimMode",
    "TemplateFilter",
    "apply_changes",
    "bash_path",
    "check_pattern",
    "copy_tree",
    "create_sandbox",
    "find_special_files",
    "hidden_paths",
    "install_root",
    "kill_group",
    "parse_call_log",
    "read_call_log",
    "record_changes",
    "remove_tree",
    "run_command",
    "run_process",
    "runner_path",
    "shim_name_problem",
    "special_kind",
]
