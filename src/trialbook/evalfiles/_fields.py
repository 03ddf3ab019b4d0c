"""The eval-file keys: their JSON Schema, a one-line meaning and an example, in one table.

The JSON Schema and the reference docs come from this table. The loader keeps its own list of readers,
and a test compares the two, so a key the loader accepts cannot be missing from what editors are told.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import JsonObject
from ..sandbox import ISOLATIONS

__all__ = ["ASSERTION_KINDS", "DURATION_PATTERN", "FIELDS", "ID_PATTERN", "SIZE_PATTERN", "FieldDoc"]

DURATION_PATTERN = r"^(?=\d)(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m)?(?:\d+(?:\.\d+)?s)?$"
"""``90s``, ``10m``, ``1h``, ``1h30m``: hours, minutes and seconds in that order, each optional."""

SIZE_PATTERN = r"^\d+(\.\d+)?\s*(B|KB|MB|GB|KiB|MiB|GiB)$"
"""A byte count with a unit: ``KB``/``MB``/``GB`` are powers of 1000, ``KiB``/``MiB``/``GiB`` of 1024."""

ID_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*"
"""Ids name result folders, so they are relative POSIX paths without ``..`` or odd characters."""

_DURATION: JsonObject = {
    "anyOf": [
        {"type": "number", "exclusiveMinimum": 0},
        {"type": "string", "pattern": DURATION_PATTERN, "minLength": 2},
    ]
}
_PATTERN: JsonObject = {"type": "string", "minLength": 1}
_PATH: JsonObject = {"type": "string", "minLength": 1}
_SCALAR: JsonObject = {"type": ["string", "number", "integer"]}


@dataclass(frozen=True)
class FieldDoc:
    """One key: its schema, what it means, and an example line that error messages suggest."""

    name: str
    schema: JsonObject
    summary: str
    example: str


FIELDS: tuple[FieldDoc, ...] = (
    FieldDoc(
        "id",
        {"type": "string", "pattern": f"^{ID_PATTERN}$"},
        "The eval's id; default: the file's path relative to the evals folder, without .eval.*.",
        "id: create-project",
    ),
    FieldDoc("prompt", _PATH, "The prompt file, relative to this eval file.", "prompt: ../docs/setup.md"),
    FieldDoc(
        "prompt_text", {"type": "string"}, "The prompt itself, instead of a prompt file.", "prompt_text: |"
    ),
    FieldDoc(
        "params",
        {
            "type": "object",
            "additionalProperties": _SCALAR,
            "propertyNames": {"pattern": r"^[A-Za-z_][\w-]*$"},
        },
        "Values for {{ name }} placeholders in the prompt.",
        "params: {project: demo}",
    ),
    FieldDoc(
        "secrets",
        {
            "type": "array",
            "items": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
            "uniqueItems": True,
        },
        "Environment variables the prompt and agent options use as {{ secrets.NAME }}; masked everywhere.",
        "secrets: [NEON_API_KEY]",
    ),
    FieldDoc(
        "agents",
        {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/agent"}},
        "The agents that run the prompt: names, or mappings with name and options.",
        "agents: [literal, {name: copilot, model: gpt-5.2}]",
    ),
    FieldDoc(
        "trials",
        {
            "anyOf": [
                {"type": "integer", "minimum": 1},
                {
                    "type": "object",
                    "required": ["max"],
                    "additionalProperties": False,
                    "properties": {
                        "max": {"type": "integer", "minimum": 1},
                        "min": {"type": "integer", "minimum": 1, "default": 1},
                    },
                },
            ],
            "default": 1,
        },
        "How many times each agent runs the prompt; {max, min} stops early once the verdict is decided.",
        "trials: 3",
    ),
    FieldDoc(
        "pass_rate",
        {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 1.0},
        "The share of trials that must pass for the eval to pass.",
        "pass_rate: 0.67",
    ),
    FieldDoc(
        "negative_control",
        {"type": "boolean", "default": True},
        "Also check the assertions on an untouched sandbox (the noop agent); false for evals that check "
        "that nothing changes.",
        "negative_control: false",
    ),
    FieldDoc(
        "sandbox",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "template": {**_PATH, "description": "Folder copied fresh into every trial's sandbox."},
                "isolation": {
                    "enum": list(ISOLATIONS),
                    "default": "none",
                    "description": (
                        "bwrap runs each trial's processes with the system read-only and the host's home, "
                        "temp folders and trialbook's own files hidden; auto uses it where it works."
                    ),
                },
                "network": {
                    "enum": ["host", "model", "none"],
                    "description": (
                        "Under isolation: host keeps the runner's network, model reaches only the agent's "
                        "model endpoints, none nothing; refused connections are recorded. Default: none "
                        "for literal and script agents, host for agent CLIs."
                    ),
                },
                "exclude": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "description": (
                        "Globs of template files left out of each copy and of the cache key; "
                        ".git and .trialbook are always left out."
                    ),
                },
            },
        },
        "What each trial's sandbox starts from; exclude leaves template files out of the copy.",
        "sandbox: {template: template/, exclude: [node_modules]}",
    ),
    FieldDoc(
        "shims",
        {
            "type": "object",
            "propertyNames": {"pattern": r"^(?!\.\.?$)[^/\s\x00-\x1f\x7f]{1,255}$"},
            "additionalProperties": {"$ref": "#/$defs/shim"},
        },
        "Binaries whose calls are recorded: passthrough runs the real one, stub or {script} replaces it.",
        "shims: {npm: passthrough, neon: {script: 'echo ok'}}",
    ),
    FieldDoc(
        "instructions",
        {
            "type": "array",
            "items": {
                "anyOf": [
                    _PATH,
                    {
                        "type": "object",
                        "required": ["path"],
                        "additionalProperties": False,
                        "properties": {
                            "path": {**_PATH, "description": "The file, relative to this eval file."},
                            "to": {**_PATH, "description": "Where it goes in the sandbox, e.g. AGENTS.md."},
                        },
                    },
                ]
            },
        },
        "Instruction files (AGENTS.md, CLAUDE.md, copilot-instructions.md, *.instructions.md) placed in "
        "every sandbox where agents look for them; paths relative to this eval file.",
        "instructions: [../AGENTS.md, ../.github/copilot-instructions.md]",
    ),
    FieldDoc(
        "skills",
        {"type": "array", "items": _PATH},
        "Skill folders (each holding SKILL.md) placed where each agent finds project skills.",
        "skills: [../.claude/skills/deploy]",
    ),
    FieldDoc(
        "compare",
        {
            "anyOf": [
                {"const": "without"},
                {
                    "type": "object",
                    "required": ["without"],
                    "additionalProperties": False,
                    "properties": {
                        "without": {
                            "anyOf": [
                                {"const": "all"},
                                {
                                    "type": "array",
                                    "minItems": 1,
                                    "uniqueItems": True,
                                    "items": {"type": "string", "minLength": 1},
                                },
                            ],
                            "description": "The declared instruction files (by sandbox path) and skills "
                            "(by name) to leave out, or all.",
                        },
                        "alpha": {
                            "type": "number",
                            "exclusiveMinimum": 0,
                            "exclusiveMaximum": 1,
                            "default": 0.05,
                            "description": "Significance level of the with/without difference.",
                        },
                    },
                },
            ]
        },
        "Also run every agent without the declared instruction files and skills (or those listed), and "
        "test the difference; pass_rate judges the with arm only.",
        "compare: without",
    ),
    FieldDoc(
        "triggers",
        {
            "type": "object",
            "required": ["skill", "queries"],
            "additionalProperties": False,
            "properties": {
                "skill": {"type": "string", "minLength": 1, "description": "A skill declared under skills."},
                "queries": {
                    "anyOf": [
                        {
                            **_PATH,
                            "description": "A YAML or JSONL file of queries, relative to this eval file.",
                        },
                        {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/query"}},
                    ]
                },
                "min_recall": {"type": "number", "minimum": 0, "maximum": 1},
                "min_precision": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
        "A trigger eval: labelled queries (should / should_not use the skill), each run as its own eval; "
        "precision and recall over them decide it.",
        "triggers: {skill: deploy, queries: [{query: 'Ship it', expect: should}]}",
    ),
    FieldDoc(
        "assert",
        {"type": "array", "items": {"$ref": "#/$defs/assertion"}},
        "Checks that must all hold after the agent finished, in order.",
        "assert: [{ran: neon deploy}]",
    ),
    FieldDoc(
        "max_cost_usd",
        {"type": ["number", "null"], "exclusiveMinimum": 0},
        "Per-trial cost cap handed to agents that support one.",
        "max_cost_usd: 2",
    ),
    FieldDoc(
        "timeout",
        {**_DURATION, "default": "10m"},
        "Per-trial time limit: seconds, or a duration such as 90s, 10m, 1h.",
        "timeout: 10m",
    ),
    FieldDoc(
        "limits",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "output": {
                    "anyOf": [
                        {"type": "integer", "minimum": 1024, "maximum": 1 << 30},
                        {"type": "string", "pattern": SIZE_PATTERN},
                    ],
                    "default": "10MiB",
                    "description": (
                        "Bytes kept of each captured stream (agent output, a step's output, stderr, a "
                        "check's output): bytes or a size such as 512KiB, 20MB; from 1KiB to 1GiB."
                    ),
                },
                "checks": {
                    **_DURATION,
                    "description": (
                        "Time a trial's checks may take together once its agent finished; past it the trial "
                        "is an error naming the check. Default: 60s plus every succeeds command's timeout."
                    ),
                },
            },
        },
        "Bounds on a trial: output is the bytes kept of each stream (default 10MiB), checks the time its "
        "checks may take (default 60s plus the succeeds timeouts).",
        "limits: {output: 20MiB}",
    ),
)

ASSERTION_KINDS: tuple[FieldDoc, ...] = (
    FieldDoc("ran", _PATTERN, "A shimmed call matches the pattern.", 'ran: "neon deploy"'),
    FieldDoc("not_ran", _PATTERN, "No shimmed call matches the pattern.", 'not_ran: "neon delete"'),
    FieldDoc(
        "ran_in_order",
        {"type": "array", "minItems": 1, "items": _PATTERN},
        "Calls matching each pattern happened in this order, others allowed between.",
        'ran_in_order: ["/neon init .*/", "neon deploy"]',
    ),
    FieldDoc("file_exists", _PATH, "The path exists in the sandbox.", "file_exists: neon.ts"),
    FieldDoc(
        "file_contains",
        {
            "type": "object",
            "required": ["path", "pattern"],
            "additionalProperties": False,
            "properties": {"path": _PATH, "pattern": _PATTERN},
        },
        "The text file contains the pattern (a substring, or a /regex/).",
        'file_contains: {path: .env.local, pattern: "DATABASE_URL="}',
    ),
    FieldDoc(
        "loaded",
        {"type": "string", "minLength": 1},
        "The declared instruction file (its path in the sandbox) or skill (its name) reached the model, as "
        "the request audit saw it; fails when no audit ran.",
        "loaded: AGENTS.md",
    ),
    FieldDoc(
        "skill_used",
        {"type": "string", "minLength": 1},
        "The agent used the skill: through its skill tool, or by reading the skill's SKILL.md.",
        "skill_used: deploy",
    ),
    FieldDoc(
        "no_outside_writes",
        {
            "anyOf": [
                {"const": True},
                {
                    "type": "object",
                    "required": ["allow"],
                    "additionalProperties": False,
                    "properties": {"allow": {"type": "array", "items": {"type": "string", "minLength": 1}}},
                },
            ]
        },
        "Under isolation, the agent wrote nothing outside its project folder (its HOME, /tmp, system "
        "folders), but paths matching allow's globs; fails when nothing watched (no isolation).",
        "no_outside_writes: true",
    ),
    FieldDoc(
        "succeeds",
        {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "required": ["command"],
                    "additionalProperties": False,
                    "properties": {
                        "command": {"type": "string", "minLength": 1},
                        "exit_code": {"type": "integer", "default": 0},
                        "timeout": {**_DURATION, "default": "120s"},
                    },
                },
            ]
        },
        "The shell command, run in the sandbox afterwards, exits with exit_code (default 0).",
        'succeeds: {command: "npm run build", exit_code: 0}',
    ),
    FieldDoc(
        "assert_that",
        {
            "type": "object",
            "required": ["name", "check"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "check": {"type": "string", "pattern": r"^[\w.]+:[\w.]+$"},
            },
        },
        "Your own Python check, as module:function importable from the evals folder's parent.",
        'assert_that: {name: has-readme, check: "evals.checks:has_readme"}',
    ),
    FieldDoc(
        "judge",
        {
            "type": "object",
            "required": ["judges"],
            "additionalProperties": False,
            "properties": {
                "rubric": {"type": "string", "minLength": 1},
                "rubric_file": _PATH,
                "show": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "anyOf": [
                            {"enum": ["final_message", "command_log", "diff"]},
                            {
                                "type": "object",
                                "required": ["file"],
                                "additionalProperties": False,
                                "properties": {"file": _PATH},
                            },
                        ]
                    },
                    "default": ["final_message"],
                },
                "judges": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["provider", "model"],
                        "additionalProperties": False,
                        "properties": {
                            "provider": {
                                "anyOf": [
                                    {"enum": ["anthropic", "openai"]},
                                    {
                                        "type": "object",
                                        "required": ["type"],
                                        "additionalProperties": False,
                                        "properties": {
                                            "type": {"enum": ["anthropic", "openai"]},
                                            "base_url": {"type": "string", "minLength": 1},
                                            "api_key": {"type": "string", "minLength": 1},
                                        },
                                    },
                                ]
                            },
                            "model": {"type": "string", "minLength": 1},
                        },
                    },
                },
                "rule": {"enum": ["majority", "unanimous"], "default": "majority"},
                "pairwise": {"type": "boolean", "default": False},
                "judge_examples": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["text", "verdict"],
                        "additionalProperties": False,
                        "properties": {
                            "text": {"type": "string", "minLength": 1},
                            "verdict": {"enum": ["pass", "fail"]},
                        },
                    },
                },
            },
            "oneOf": [{"required": ["rubric"]}, {"required": ["rubric_file"]}],
        },
        "A panel of model judges grades the trial against a rubric, from what show names (see judges.md).",
        "judge: {rubric: 'The reply explains why the build failed', judges: [{provider: anthropic, "
        "model: claude-sonnet-4-5}]}",
    ),
)
