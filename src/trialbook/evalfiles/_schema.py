"""The JSON Schema of eval files, built from the field table, for editors and ``trialbook schema``."""

from __future__ import annotations

from ..evidence import JsonObject
from ._fields import ASSERTION_KINDS, FIELDS

__all__ = ["eval_file_schema"]


_QUERY: JsonObject = {
    "type": "object",
    "required": ["query", "expect"],
    "additionalProperties": False,
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What a user asks the agent."},
        "expect": {"enum": ["should", "should_not"], "description": "Whether the skill should be used."},
        "id": {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9._-]*$"},
        "split": {"enum": ["train", "holdout"]},
    },
}
"""One query of a trigger eval (``triggers.queries``)."""


def eval_file_schema() -> JsonObject:
    """A draft 2020-12 JSON Schema that completes and checks ``*.eval.yaml`` files in editors.

    It checks shape only; what needs the file system or the agent registry (prompt files, templates,
    agent names, ``module:function`` checks) is left to ``trialbook validate``.
    """
    agent: JsonObject = {
        "anyOf": [
            {"type": "string", "minLength": 1, "examples": ["literal", "copilot", "claude-code", "codex"]},
            {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "The agent's name."},
                    "model": {"type": "string", "description": "The model the agent is asked to use."},
                    "env": {
                        "type": "object",
                        "additionalProperties": {"type": ["string", "number"]},
                        "description": "Variables added to the agent's environment; values may use secrets.",
                    },
                    "script": {
                        "type": "string",
                        "description": "Makes this a script agent running this shell.",
                    },
                },
                "additionalProperties": True,
            },
        ]
    }
    shim: JsonObject = {
        "anyOf": [
            {"enum": ["passthrough", "stub"]},
            {
                "type": "object",
                "required": ["script"],
                "additionalProperties": False,
                "properties": {
                    "script": {"type": "string", "description": "Shell run instead of the binary."}
                },
            },
        ]
    }
    assertion: JsonObject = {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
        "properties": {doc.name: {**doc.schema, "description": doc.summary} for doc in ASSERTION_KINDS},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "trialbook eval file",
        "description": "One eval: a prompt, the agents that run it, and what must hold afterwards.",
        "type": "object",
        "additionalProperties": False,
        "required": ["agents"],
        "oneOf": [{"required": ["prompt"]}, {"required": ["prompt_text"]}, {"required": ["triggers"]}],
        "properties": {doc.name: {**doc.schema, "description": doc.summary} for doc in FIELDS},
        "$defs": {"agent": agent, "shim": shim, "assertion": assertion, "query": _QUERY},
    }
