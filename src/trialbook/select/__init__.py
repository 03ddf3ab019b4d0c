"""Which eval × agent pairs run: cache decisions, changed-only selection against a base ref, shards."""

from ._changed import changed_evals
from ._decide import CACHEABLE_VERDICTS, LastRun, cache_decision, parse_shard
from ._git import BaseTree, head_commit, open_repository
from ._shards import balanced_shard_of, shard_of
from ._tree import tree_hash

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
