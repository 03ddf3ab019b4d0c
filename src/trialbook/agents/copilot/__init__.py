"""The ``copilot`` agent: GitHub Copilot driven through ``github-copilot-sdk`` and the Copilot CLI.

``create(spec)`` is the entry point the runner uses; :class:`CopilotEval` and :class:`CopilotAgent` are
the Python API (the pytest plugin's ``copilot_eval`` fixture is built on them).
"""

from ._adapter import CopilotAgent, create
from ._audit import audit_body
from ._config import CopilotEval, eval_from_spec, load_agent_file
from ._events import EventMapper
from ._server import ServerPool

__all__ = [
    "CopilotAgent",
    "CopilotEval",
    "EventMapper",
    "ServerPool",
    "audit_body",
    "create",
    "eval_from_spec",
    "load_agent_file",
]
