"""The cache lookup is content-addressed: the newest settled line with the key, whichever ref wrote it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.history import DirectoryStore, GitBranchStore, HistoryLine, parse_started_at
from trialbook.select import CACHEABLE_VERDICTS

from .helpers import line

KEYS = ["sha256:" + c * 64 for c in "abc"]
REFS = ["refs/heads/main", "refs/pull/7/merge", "refs/pull/8/merge"]

lines = st.lists(
    st.builds(
        lambda minutes, key, verdict, agent, ref: line(
            "demo", agent, minutes=minutes, cache_key=key, verdict=verdict, extra={"ref": ref}
        ),
        st.integers(0, 30),
        st.sampled_from(KEYS),
        st.sampled_from(["pass", "fail", "error", "incomplete"]),
        st.sampled_from(["literal", "codex"]),
        st.sampled_from(REFS),
    ),
    max_size=12,
)


def _expected(written: list[HistoryLine], agent: str, key: str) -> HistoryLine | None:
    """Brute force: the newest matching line, the later one in file order on equal times."""
    best: tuple[object, int, HistoryLine] | None = None
    for index, candidate in enumerate(written):
        if (
            candidate.agent != agent
            or candidate.cache_key != key
            or candidate.verdict not in CACHEABLE_VERDICTS
        ):
            continue
        rank = (parse_started_at(candidate.started_at), index)
        if best is None or rank >= best[:2]:
            best = (*rank, candidate)
    return None if best is None else best[2]


@settings(max_examples=60, deadline=None)
@given(lines, st.booleans())
def test_the_newest_settled_line_with_the_key_serves_from_any_ref(
    written: list[HistoryLine], spaced: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = DirectoryStore(Path(folder))
        if spaced:
            # Hand-written lines (not canonical JSON) take the slow path: same answer.
            text = "".join(json.dumps(item.to_json(), indent=None) + "\n" for item in written)
            (Path(folder) / "demo.jsonl").write_text(text)
        else:
            store.append(written)
        for agent in ("literal", "codex"):
            for key in KEYS:
                found = store.latest("demo", agent, cache_key=key, verdicts=CACHEABLE_VERDICTS)
                assert found == _expected(written, agent, key)


def test_a_pull_request_line_and_a_main_line_with_other_keys_both_stay_cached(user_repo: Path) -> None:
    pr = line(minutes=1, cache_key=KEYS[0], verdict="fail", extra={"ref": "refs/pull/7/merge"})
    main = line(minutes=2, cache_key=KEYS[1], verdict="pass", extra={"ref": "refs/heads/main"})
    newer_error = line(minutes=3, cache_key=KEYS[0], verdict="error", extra={"ref": "refs/heads/main"})
    with GitBranchStore(user_repo, remote=None) as store:
        store.append([pr, main, newer_error])
        assert store.latest("demo", "literal") == newer_error
        assert store.latest("demo", "literal", cache_key=KEYS[0], verdicts=CACHEABLE_VERDICTS) == pr
        assert store.latest("demo", "literal", cache_key=KEYS[1], verdicts=CACHEABLE_VERDICTS) == main
        assert store.latest("demo", "literal", cache_key=KEYS[2], verdicts=CACHEABLE_VERDICTS) is None
