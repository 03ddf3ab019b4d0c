"""The OpenAI chat-completions fake the tests use is the one trialbook ships: :mod:`trialbook.testing`."""

from trialbook.testing._chat import ChatServer, Reply, call, position, text

__all__ = ["ChatServer", "Reply", "call", "position", "text"]
