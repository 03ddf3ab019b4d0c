"""Test your evals and plugin tests offline: a scripted model server on 127.0.0.1.

:class:`ChatServer` speaks the OpenAI chat-completions API, which Copilot's bring-your-own-key provider
uses. Script it with :func:`call` (a tool call) and :func:`text` (a final answer); the ``n``-th reply goes
to a conversation that already holds ``n`` assistant messages, so concurrent sessions stay deterministic.
Every request body is kept in ``requests``. The ``loopback_model`` pytest fixture starts one per test::

    async def test_it(copilot_eval, loopback_model, tmp_path):
        model = loopback_model([call("bash", command="echo hi > hi.txt"), text("done")])
        agent = CopilotEval(model="loopback", provider=model.provider(), cli_path=...)
        result = await copilot_eval(agent, "say hi", workdir=tmp_path)

Nothing here talks to anything but the loopback interface. See docs/testing.md.
"""

from ._chat import ChatServer, Reply, call, position, text

__all__ = ["ChatServer", "Reply", "call", "position", "text"]
