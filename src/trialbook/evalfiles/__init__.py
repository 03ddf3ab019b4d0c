"""Eval files: finding, loading and checking them, rendering their prompts, and their cache material.

This package is pure: it reads eval and prompt files and imports the user's check modules, and
nothing else. Problems are collected per file and raised together as one ``ConfigError``.
"""

from __future__ import annotations

from ._bounds import YamlTooLarge, check_yaml_bounds
from ._cache import CACHE_FORMAT, cache_material, trials_material
from ._compare import CompareSpec
from ._discover import EVAL_SUFFIXES, discover_eval_files
from ._inputs import InstructionFile, SkillFolder, input_names, without_inputs
from ._judge_family import shared_family_warnings
from ._limits import CHECKS_BASE_S
from ._load import load_evals
from ._model import DEFAULT_TIMEOUT_S, EvalSpec, ShimSpec
from ._placeholders import fill_secrets, secret_marker
from ._problems import display_path
from ._python import EvalDefinition, define_eval
from ._render import RenderedPrompt, check_secrets, render_options, render_prompt, secret_location
from ._schema import eval_file_schema
from ._values import parse_duration

__all__ = [
    "CACHE_FORMAT",
    "CHECKS_BASE_S",
    "DEFAULT_TIMEOUT_S",
    "EVAL_SUFFIXES",
    "CompareSpec",
    "EvalDefinition",
    "EvalSpec",
    "InstructionFile",
    "RenderedPrompt",
    "ShimSpec",
    "SkillFolder",
    "YamlTooLarge",
    "cache_material",
    "check_secrets",
    "check_yaml_bounds",
    "define_eval",
    "discover_eval_files",
    "display_path",
    "eval_file_schema",
    "fill_secrets",
    "input_names",
    "load_evals",
    "parse_duration",
    "render_options",
    "render_prompt",
    "secret_location",
    "secret_marker",
    "shared_family_warnings",
    "trials_material",
    "without_inputs",
]
