"""trialbook inside GitHub Actions: the run's environment, what its event asks for, and reporting back.

A step reports through step outputs, the job summary, annotations, secret masks and the sticky PR
comment; each has its own small module here.
"""

from ._ci import CiInputs, fetch_history, publish, run_ci, run_stage
from ._commands import (
    AnnotationLevel,
    add_mask_lines,
    annotation,
    emit_annotation,
    escape_data,
    escape_property,
    mask_secrets,
)
from ._comment import CommentResult, find_sticky_comment, upsert_sticky_comment
from ._env import DEFAULT_API_URL, ActionsEnv
from ._files import SUMMARY_LIMIT, format_outputs, truncate_utf8, write_outputs, write_summary
from ._http import ApiResponse, GitHubApi, GitHubApiError
from ._report import ANNOTATION_LIMIT, action_outputs, failure_annotations
from ._scrub import reexec_without_tokens, token_variables
from ._state import CiState
from ._stopped import hand_over_error, report_stopped
from ._trigger import DEFAULT_LABEL, TriggerPlan, decide_trigger, truthy_input

__all__ = [
    "ANNOTATION_LIMIT",
    "DEFAULT_API_URL",
    "DEFAULT_LABEL",
    "SUMMARY_LIMIT",
    "ActionsEnv",
    "AnnotationLevel",
    "ApiResponse",
    "CiInputs",
    "CiState",
    "CommentResult",
    "GitHubApi",
    "GitHubApiError",
    "TriggerPlan",
    "action_outputs",
    "add_mask_lines",
    "annotation",
    "decide_trigger",
    "emit_annotation",
    "escape_data",
    "escape_property",
    "failure_annotations",
    "fetch_history",
    "find_sticky_comment",
    "format_outputs",
    "hand_over_error",
    "mask_secrets",
    "publish",
    "reexec_without_tokens",
    "report_stopped",
    "run_ci",
    "run_stage",
    "token_variables",
    "truncate_utf8",
    "truthy_input",
    "upsert_sticky_comment",
    "write_outputs",
    "write_summary",
]
