"""Which eval × agent pairs run: cache decisions, changed-only selection against a base ref, shards.

The names load on first use: reading the base ref needs pygit2, which a run without ``--changed``
never loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy_exports

if TYPE_CHECKING:
    from ._changed import changed_evals
    from ._decide import CACHEABLE_VERDICTS, LastRun, cache_decision, parse_shard
    from ._git import BaseTree, open_repository
    from ._head import head_commit
    from ._shards import balanced_shard_of, shard_of
    from ._tree import tree_hash

_LAZY = {
    "changed_evals": "_changed",
    "CACHEABLE_VERDICTS": "_decide",
    "LastRun": "_decide",
    "cache_decision": "_decide",
    "parse_shard": "_decide",
    "BaseTree": "_git",
    "open_repository": "_git",
    "head_commit": "_head",
    "balanced_shard_of": "_shards",
    "shard_of": "_shards",
    "tree_hash": "_tree",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)


__all__ = [
    "CACHEABLE_VERDICTS",
    "BaseTree",
    "LastRun",
    "balanced_shard_of",
    "cache_decision",
    "changed_evals",
    "head_commit",
    "open_repository",
    "parse_shard",
    "shard_of",
    "tree_hash",
]
