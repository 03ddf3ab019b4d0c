"""A file whose apparent size is huge is listed by size from its metadata, never read to be hashed."""

from __future__ import annotations

import json
from pathlib import Path

from trialbook.sandbox._changes import MAX_HASH_BYTES

from ..runner.conftest import Invoke, invoke

__all__ = ["invoke"]


def test_a_200g_sparse_file_is_listed_by_size_and_the_trial_ends_at_once(
    invoke: Invoke, tmp_path: Path
) -> None:
    # `truncate` makes it in no time; hashing it would read 200 GB of zeros, minutes past the timeout.
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/e.eval.yaml").write_text(
        "prompt_text: hi\n"
        "agents: [{name: s, script: 'truncate -s 200G sparse.bin && echo small > note.txt'}]\n"
        "timeout: 20s\nnegative_control: false\nassert: [{file_exists: note.txt}]\n"
    )
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    changes = json.loads(
        next((tmp_path / ".trialbook/runs/latest").glob("evals/e/s/trial-1/changes.json")).read_text()
    )
    by_path = {entry["path"]: entry for entry in changes["files"]}
    after = by_path["sparse.bin"]["after"]
    assert after == {"size": 200 * 1024**3, "sha256": None, "hashed": False}
    assert by_path["note.txt"]["after"]["sha256"] is not None  # small files are hashed as before
    assert changes["limits"]["max_hash_bytes"] == MAX_HASH_BYTES
