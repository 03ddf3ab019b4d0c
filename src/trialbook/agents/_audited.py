"""``audit_requests`` for the agent CLIs: a trial's auditing proxy, and what it found folded into the result.

The proxy lives exactly as long as the trial's CLI run: it starts before the process and stops when the
run returns, times out or is cancelled (``async with``), so no port outlives its trial. Whatever went
wrong in it is a capture error of the trial, and a refused request stops the trial with
``request_audit_error``, as Copilot's request audit does.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence

from ..evidence import AgentResult, DeclaredInput, safe_configuration
from ..masking import Masker
from ._audit_proxy import AuditProxy

__all__ = ["audit_proxy", "with_audit"]


@contextlib.asynccontextmanager
async def audit_proxy(
    enabled: bool, upstream: str, masker: Masker, inputs: Sequence[DeclaredInput] = ()
) -> AsyncIterator[AuditProxy | None]:
    """A running proxy to ``upstream`` for one trial, or ``None`` when auditing is off.

    ``inputs`` are the trial's declared instruction files and skills: the proxy checks each request's
    context for them, for the result's ``instructions_loaded``.

    Raises:
        OSError: the proxy could not listen on 127.0.0.1.
        ValueError: ``upstream`` is not an http(s) URL.
    """
    if not enabled:
        yield None
        return
    async with AuditProxy(upstream, masker, inputs) as proxy:
        yield proxy


def with_audit(result: AgentResult, proxy: AuditProxy | None) -> AgentResult:
    """``result`` with the proxy's records, its errors as capture errors, and a refusal as the stop reason.

    A run that succeeded without a single model request through the proxy is an audit that saw nothing
    (the base URL was overridden elsewhere, e.g. in ``args``): a capture error, never an empty pass.
    """
    if proxy is None:
        return result
    found = proxy.findings
    errors = [*result.capture_errors, *found.errors]
    if result.success and not found.records and found.refused is None:
        errors.append(
            "audit_requests is on but no model request went through the audit proxy: the CLI's base URL "
            "was set elsewhere (agent args or config), so nothing it sent was audited"
        )
    where = {"audit_proxy": proxy.address, "audit_upstream": proxy.masked_upstream}
    config = safe_configuration({**(result.configuration or {}), **where})
    changes: dict[str, object] = {
        "request_audit": tuple(found.records),
        "capture_errors": tuple(errors),
        "configuration": config,
    }
    if found.loads is not None:
        # An audit that refused a request did not see everything: it decides nothing (null rows).
        changes["instructions_loaded"] = found.loads.result(audited=found.refused is None)
    if found.refused is not None:
        changes.update(success=False, stop_reason="request_audit_error", error=found.refused)
    return dataclasses.replace(result, **changes)  # type: ignore[arg-type]
