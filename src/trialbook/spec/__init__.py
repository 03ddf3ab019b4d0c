"""Eval files: finding, loading and checking them, rendering their prompts, and their cache material.

This package is pure: it reads eval and prompt files and imports the user's check modules, and
nothing else. Problems are collected per file and raised together as one ``ConfigError``.

The names load on first use: a run needs neither the JSON Schema of eval files nor ``define_eval``
(Python eval files), and defining them would cost every start of ``trialbook eval``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy_exports

if TYPE_CHECKING:
    from ._cache import CACHE_FORMAT, cache_material, trials_material
    from ._compare import CompareSpec
    from ._discover import EVAL_SUFFIXES, discover_eval_files
    from ._inputs import InstructionFile, SkillFolder, input_names, without_inputs
    from ._load import load_evals
    from ._model import DEFAULT_TIMEOUT_S, EvalSpec, ShimSpec
    from ._placeholders import secret_marker
    from ._python import EvalDefinition, define_eval
    from ._render import RenderedPrompt, check_secrets, render_options, render_prompt, secret_location
    from ._schema import eval_file_schema
    from ._values import parse_duration

_LAZY = {
    "CACHE_FORMAT": "_cache",
    "cache_material": "_cache",
    "trials_material": "_cache",
    "CompareSpec": "_compare",
    "EVAL_SUFFIXES": "_discover",
    "discover_eval_files": "_discover",
    "InstructionFile": "_inputs",
    "SkillFolder": "_inputs",
    "input_names": "_inputs",
    "without_inputs": "_inputs",
    "load_evals": "_load",
    "DEFAULT_TIMEOUT_S": "_model",
    "EvalSpec": "_model",
    "ShimSpec": "_model",
    "secret_marker": "_placeholders",
    "EvalDefinition": "_python",
    "define_eval": "_python",
    "RenderedPrompt": "_render",
    "check_secrets": "_render",
    "render_options": "_render",
    "render_prompt": "_render",
    "secret_location": "_render",
    "eval_file_schema": "_schema",
    "parse_duration": "_values",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)


__all__ = [
    "CACHE_FORMAT",
    "DEFAULT_TIMEOUT_S",
    "EVAL_SUFFIXES",
    "CompareSpec",
    "EvalDefinition",
    "EvalSpec",
    "InstructionFile",
    "RenderedPrompt",
    "ShimSpec",
    "SkillFolder",
    "cache_material",
    "check_secrets",
    "define_eval",
    "discover_eval_files",
    "eval_file_schema",
    "input_names",
    "load_evals",
    "parse_duration",
    "render_options",
    "render_prompt",
    "secret_location",
    "secret_marker",
    "trials_material",
    "without_inputs",
]
