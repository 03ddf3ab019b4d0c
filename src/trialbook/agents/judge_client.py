"""Asking one judge model: a masked, bounded request, cached by the exact input's hash, and what it cost.

A judge is a provider mapping like a bring-your-own-key agent's (``{type: anthropic|openai, base_url,
api_key}``) and a model. The request is built from text that has already passed the run's masker, then
cut to :data:`MAX_JUDGE_INPUT_CHARS`: a secret is replaced before anything is cut, so no cut can leave
half a secret the masker no longer recognises.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .._util.hashing import canonical_json, tagged_sha256
from ..assertions import ANSWER_SHAPE, ASK_TIMEOUT_S, PREFERENCE_SHAPE, Answer, parse_answer, parse_preference
from ..evidence import UsageEntry, estimate_cost
from ..masking import Masker

__all__ = [
    "JUDGE_TIMEOUT_S",
    "MAX_JUDGE_INPUT_CHARS",
    "JudgeCall",
    "JudgeClient",
    "JudgeModel",
    "bounded",
]

MAX_JUDGE_INPUT_CHARS = 100_000
"""At most this many characters of shown material go to a judge; the rest is cut and the cut is said."""

JUDGE_TIMEOUT_S = ASK_TIMEOUT_S


def bounded(masker: Masker, shown: str, limit: int = MAX_JUDGE_INPUT_CHARS) -> str:
    """``shown`` masked, then cut to ``limit`` characters with the cut said.

    Masking comes first, so no cut can leave half a secret the masker no longer recognises; masking
    an already bounded text again changes nothing, so material kept bounded can be asked about later.
    """
    masked = masker.text(shown)
    if len(masked) > limit:
        masked = masked[:limit] + f"\n[{len(masked) - limit} more characters not shown]"
    return masked


@dataclass(frozen=True)
class JudgeModel:
    """One judge: where its provider listens, its key, and the model it asks."""

    type: str
    base_url: str
    model: str
    api_key: str | None = None


@dataclass(frozen=True)
class JudgeCall:
    """What the trial's evidence keeps of one judge request (all text already masked)."""

    judge: str
    model: str
    input_sha256: str
    answer: str | None
    parsed: Answer
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cached: bool


def _prompt(rubric: str, shown: str) -> str:
    return (
        "You grade a coding agent's work against a rubric.\n\nRubric:\n"
        f"{rubric}\n\nWhat the agent produced:\n{shown}\n\n"
        f"Answer with exactly one JSON object and nothing else: {ANSWER_SHAPE}"
    )


def _pair_prompt(rubric: str, first: str, second: str) -> str:
    return (
        "You compare two responses of coding agents to the same task against a rubric.\n\nRubric:\n"
        f"{rubric}\n\nFirst response:\n{first}\n\nSecond response:\n{second}\n\n"
        "Which response better meets the rubric? "
        f"Answer with exactly one JSON object and nothing else: {PREFERENCE_SHAPE}"
    )


def _request(judge: JudgeModel, prompt: str) -> tuple[str, dict[str, str], bytes]:
    headers = {"content-type": "application/json"}
    message = [{"role": "user", "content": prompt}]
    if judge.type == "anthropic":
        url = judge.base_url.rstrip("/") + "/v1/messages"
        if judge.api_key:
            headers["x-api-key"] = judge.api_key
        headers["anthropic-version"] = "2023-06-01"
        body = {"model": judge.model, "max_tokens": 1024, "messages": message}
    else:
        url = judge.base_url.rstrip("/") + "/chat/completions"
        if judge.api_key:
            headers["authorization"] = f"Bearer {judge.api_key}"
        body = {"model": judge.model, "messages": message}
    return url, headers, json.dumps(body).encode()


def _read(judge: JudgeModel, payload: Mapping[str, object]) -> tuple[str | None, int | None, int | None]:
    usage = payload.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    if judge.type == "anthropic":
        blocks = payload.get("content")
        texts = [b.get("text") for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        text = "".join(t for t in texts if isinstance(t, str)) if texts else None
        return text, usage.get("input_tokens"), usage.get("output_tokens")
    choices = payload.get("choices")
    text = None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        content = (choices[0].get("message") or {}).get("content")
        text = content if isinstance(content, str) else None
    return text, usage.get("prompt_tokens"), usage.get("completion_tokens")


@dataclass
class JudgeClient:
    """Asks judges over HTTP; one per run, so its cache spans every trial of the run.

    Trials check in worker threads at once: the same input asked by two of them (a calibration example,
    typically) is sent once, the other waits for that answer instead of paying for it again.
    """

    masker: Masker
    cache: dict[str, JudgeCall] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _asking: dict[str, threading.Lock] = field(default_factory=dict, repr=False, compare=False)

    def remember(self, call: JudgeCall) -> None:
        """Serve ``call``'s answer for its input hash from now on (a kept run's answers, re-scored)."""
        if call.answer is not None:
            with self._lock:
                self.cache.setdefault(call.input_sha256, call)

    def ask(self, judge: JudgeModel, rubric: str, shown: str) -> JudgeCall:
        """One judge's answer on ``shown``: masked first, then cut, then sent (or read from the cache)."""
        return self._asked(
            judge, _prompt(self.masker.text(rubric), bounded(self.masker, shown)), parse_answer
        )

    def ask_pair(self, judge: JudgeModel, rubric: str, first: str, second: str) -> JudgeCall:
        """Which of two responses ``judge`` prefers, read strictly (``pass``: the first one).

        Each response is masked and cut to half of :data:`MAX_JUDGE_INPUT_CHARS`, so the pair is
        bounded like one response is.
        """
        half = MAX_JUDGE_INPUT_CHARS // 2
        prompt = _pair_prompt(
            self.masker.text(rubric), bounded(self.masker, first, half), bounded(self.masker, second, half)
        )
        return self._asked(judge, prompt, parse_preference)

    def _asked(self, judge: JudgeModel, prompt: str, parse: Callable[[str | None], Answer]) -> JudgeCall:
        """``prompt``'s answer: from the cache when this exact input was asked, else sent once."""
        key = tagged_sha256(
            canonical_json(
                {"type": judge.type, "base_url": judge.base_url, "model": judge.model, "prompt": prompt}
            )
        )
        with self._lock:
            asking = self._asking.setdefault(key, threading.Lock())
        with asking:
            found = self.cache.get(key)
            if found is not None:
                return JudgeCall(**{**found.__dict__, "cached": True})
            call = self._send(judge, prompt, key, parse)
            with self._lock:
                self.cache[key] = call
            return call

    def _send(
        self, judge: JudgeModel, prompt: str, key: str, parse: Callable[[str | None], Answer]
    ) -> JudgeCall:
        url, headers, body = _request(judge, prompt)
        name = f"{judge.type}:{judge.model}"
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, body, headers, method="POST"), timeout=JUDGE_TIMEOUT_S
            ) as response:
                payload = json.loads(response.read())
        except (OSError, ValueError) as exc:
            error = Answer(None, "", f"the judge request failed: {self.masker.text(str(exc))}")
            return JudgeCall(name, judge.model, key, None, error, None, None, None, False)
        text, tokens_in, tokens_out = _read(judge, payload if isinstance(payload, dict) else {})
        text = None if text is None else self.masker.text(text)
        entry = UsageEntry(judge.model, tokens_in, tokens_out, None, None, None, None, None)
        cost = estimate_cost([entry]).usd
        return JudgeCall(name, judge.model, key, text, parse(text), tokens_in, tokens_out, cost, False)
