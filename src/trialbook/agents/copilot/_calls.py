"""Correlate tool-call starts with their completions and say which calls were never finished.

A call is known by its ``toolCallId``. A completion nobody started, two different versions of the same
start or completion, and a call still open when the stream ends are capture errors; the first version of
anything seen is the one kept. A call without an id is kept too, but nothing can be correlated with it, so
whether it completed stays unknown.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection
from dataclasses import dataclass

from ...evidence import JsonObject, JsonValue, ToolCall, ToolImage
from ._fields import as_list, as_obj, canonical, get_str

__all__ = [
    "PendingCall",
    "complete_call",
    "start_call",
    "to_tool_call",
    "unfinished_calls",
    "unreadable_images",
]


@dataclass
class PendingCall:
    """A started call and, once it arrives, the data of its completion event."""

    call_id: str | None
    name: str
    arguments: JsonValue
    completion: JsonObject | None = None


def _find(calls: list[PendingCall], call_id: str) -> PendingCall | None:
    return next((call for call in calls if call.call_id == call_id), None)


def start_call(calls: list[PendingCall], data: JsonObject) -> str | None:
    """Record a ``tool.execution_start``; answer the capture error it reveals, if any."""
    call_id = get_str(data, "toolCallId")
    name = get_str(data, "toolName") or "<unnamed>"
    arguments = data.get("arguments")
    if call_id is None:
        calls.append(PendingCall(None, name, arguments))
        return f"tool {name!r} started without a call id; it cannot be correlated"
    known = _find(calls, call_id)
    if known is None:
        calls.append(PendingCall(call_id, name, arguments))
    elif (known.name, canonical(known.arguments)) != (name, canonical(arguments)):
        return f"conflicting start events for tool call {call_id}; kept the first"
    return None


def complete_call(calls: list[PendingCall], data: JsonObject) -> str | None:
    """Attach a ``tool.execution_complete`` to its call; answer the capture error it reveals, if any."""
    call_id = get_str(data, "toolCallId")
    known = _find(calls, call_id) if call_id is not None else None
    if known is None:
        return f"completion for tool call {call_id} matches no started call"
    if known.completion is None:
        known.completion = data
    elif canonical(known.completion) != canonical(data):
        return f"conflicting completions for tool call {call_id}; kept the first"
    return None


def unfinished_calls(calls: list[PendingCall], interrupted: Collection[str], aborted: bool) -> list[str]:
    """Name every correlatable call still open: interrupted ones as cancelled, the rest as incomplete."""
    errors = []
    for call in calls:
        if call.completion is not None or call.call_id is None:
            continue
        if call.call_id in interrupted or aborted:
            errors.append(f"tool call {call.call_id} ({call.name}) was cancelled")
        else:
            errors.append(f"tool call {call.call_id} ({call.name}) has no completion event")
    return errors


def to_tool_call(call: PendingCall) -> ToolCall:
    """The evidence for one call; gaps were already named as capture errors."""
    done = call.completion
    if done is None:
        # Without a call id nothing could have been correlated, so completion is unknown, not missing.
        pending = None if call.call_id is None else False
        return ToolCall(call.call_id, call.name, call.arguments, pending, None, None, None)
    success = done.get("success")
    result = as_obj(done.get("result"))
    error = as_obj(done.get("error"))
    images = _images(result)
    return ToolCall(
        call_id=call.call_id,
        name=call.name,
        arguments=call.arguments,
        completion_received=True,
        success=success if isinstance(success, bool) else None,
        result=get_str(result, "content"),
        error=get_str(error, "message") or get_str(done, "error"),
        image_content=images[0].content if images else None,
        image_media_type=images[0].media_type if images else None,
        additional_images=tuple(images[1:]),
    )


_IMAGE_LISTS = ("binaryResultsForLlm", "contents")
"""Where a completion holds images: the CLI (1.0.102) uses the first, older builds and MCP the other."""


def _image_record(result: JsonObject) -> tuple[str | None, list[ToolImage], list[int]]:
    """The list the images are recorded from, its images in order, and the positions that would not decode.

    The CLI may list an image in both places, so one list is the record, never both: the first whose images
    all decode, else the first that holds any (its unreadable images are gaps of the evidence).
    """
    candidates: list[tuple[str | None, list[ToolImage], list[int]]] = []
    for key in _IMAGE_LISTS:
        images: list[ToolImage] = []
        unreadable: list[int] = []
        for index, block in enumerate(as_list(result.get(key))):
            if not isinstance(block, dict) or block.get("type", "image") != "image":
                continue
            raw = _decode(get_str(block, "data"))
            if raw is None:
                unreadable.append(index)
            else:
                images.append(ToolImage(raw, get_str(block, "mimeType") or get_str(block, "mime_type")))
        if images and not unreadable:
            return key, images, []
        if images or unreadable:
            candidates.append((key, images, unreadable))
    return candidates[0] if candidates else (None, [], [])


def _images(result: JsonObject) -> list[ToolImage]:
    """Every image of a completion, in order, media type kept (see :func:`_image_record`)."""
    return _image_record(result)[1]


def unreadable_images(calls: list[PendingCall]) -> list[str]:
    """A capture error for each image a completion holds whose ``data`` is missing or not base64.

    Such an image cannot be in the record; the result's ``evidence_complete`` turns false and the error
    names the call and where the image was (``result.binaryResultsForLlm[1]``).
    """
    errors: list[str] = []
    for call in calls:
        if call.completion is None:
            continue
        key, _, unreadable = _image_record(as_obj(call.completion.get("result")))
        errors.extend(
            f"tool call {call.call_id} ({call.name}): image result.{key}[{index}] has no valid base64 data; "
            "it is not in the record"
            for index in unreadable
        )
    return errors


def _decode(data: str | None) -> bytes | None:
    if data is None:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
