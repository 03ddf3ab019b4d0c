"""Request audit: one record per model request Copilot actually sent, read from the outgoing body.

The audit sits in the SDK's request handler, so it sees the final request after every layer of the CLI
has added its own instructions and tools. It records what was sent (model, advertised tools, effort,
images, a hash of the system text) and never the text itself. A body it cannot read is refused before it
leaves the machine, because an audit that silently skips requests would be worse than none. The body
reader is shared with the other agents (:mod:`.._request_audit`); :mod:`._forward` is the handler that
sits on the wire.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...evidence import JsonValue, LoadTracker, RequestAudit, request_context
from .._request_audit import UnsupportedRequestError, audit_body

__all__ = ["AuditSink", "UnsupportedRequestError", "audit_body"]


@dataclass
class AuditSink:
    """Where one trial's audit records go, per agent; ``refuse`` stops that trial."""

    session_id: str
    on_refused: Callable[[str], None]
    records: dict[str | None, list[RequestAudit]] = field(default_factory=dict)
    error: str | None = None
    tracker: LoadTracker | None = None
    """Set when the eval declared instruction files or skills: each request's context is checked for them."""

    def see(self, body: JsonValue) -> None:
        """Check one audited request body for the declared inputs (its text is not kept)."""
        if self.tracker is not None:
            self.tracker.see(request_context(body))

    def add(self, agent_id: str | None, record: RequestAudit) -> None:
        key = None if agent_id in (None, self.session_id) else agent_id
        self.records.setdefault(key, []).append(record)

    def refuse(self, reason: str) -> None:
        self.error = self.error or reason
        self.on_refused(reason)
