"""Test your evals and plugin tests offline: scripted model servers on 127.0.0.1.

Two servers, for the APIs the supported agents speak:

- :class:`ChatServer` speaks OpenAI chat completions, which Copilot's bring-your-own-key ``openai``
  provider uses by default. Script it with :func:`call` (a tool call) and :func:`text` (a final answer).
- :class:`ModelServer` speaks Anthropic Messages and OpenAI Responses, streamed as server-sent events:
  Claude Code (``ANTHROPIC_BASE_URL``), Codex (``base_url``) and Copilot's ``anthropic`` or Responses
  providers. Script it with :func:`shell` (the agent's own shell tool), :func:`use_tool` (any tool),
  :func:`say` (a final answer) and :func:`hang` (a reply that never comes).

Both pick the ``n``-th reply for a conversation that already holds ``n`` replies, so concurrent sessions
stay deterministic, and both keep every request in ``requests``. The ``loopback_model`` and
``loopback_api`` pytest fixtures start one per call and stop it when the test ends::

    async def test_it(copilot_eval, loopback_model, tmp_path):
        model = loopback_model([call("bash", command="echo hi > hi.txt"), text("done")])
        agent = CopilotEval(model="loopback", provider=model.provider(), cli_path=...)
        result = await copilot_eval(agent, "say hi", workdir=tmp_path)

Nothing here talks to anything but the loopback interface. See docs/testing.md.
"""

from ._chat import ChatServer, Reply, call, position, text
from ._model import ModelServer, RecordedRequest
from ._replies import ModelScript, load_replies
from ._wire import Turn, hang, say, shell, use_tool

__all__ = [
    "ChatServer",
    "ModelScript",
    "ModelServer",
    "RecordedRequest",
    "Reply",
    "Turn",
    "call",
    "hang",
    "load_replies",
    "position",
    "say",
    "shell",
    "text",
    "use_tool",
]
