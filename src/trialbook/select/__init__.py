"""Which eval × agent pairs run: cache decisions, changed-only selection against a base ref, shards."""

from ._changed import changed_evals
from ._decide import CACHEABLE_VERDICTS, LastRun, cache_decision, parse_shard, shard_of
from ._git import BaseTree, head_commit, open_repository
from ._tree import tree_hash

__all__ = [
    "CACHEABLE_VERDICTS",
    "BaseTree",
    "LastRun",
    "cache_decision",
    "changed_evals",
    "head_commit",
    "open_repository",
    "parse_shard",
    "shard_of",
    "tree_hash",
]
