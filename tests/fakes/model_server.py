"""The Anthropic Messages and OpenAI Responses fake the tests use is the one trialbook ships.

See :mod:`trialbook.testing`; ``Reply`` is its :class:`~trialbook.testing.Turn` under the name these
tests have always used.
"""

from trialbook.testing import ModelServer, RecordedRequest, hang, say, shell, use_tool
from trialbook.testing import Turn as Reply

__all__ = ["ModelServer", "RecordedRequest", "Reply", "hang", "say", "shell", "use_tool"]
