"""The plan: which eval × agent pairs run, and why each one does or does not."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from .._util.hashing import canonical_json, tagged_sha256
from ..agents import Agent, AgentSpec, create_agent
from ..agents.noop import NoopAgent
from ..errors import UsageError
from ..evalfiles import (
    EvalSpec,
    RenderedPrompt,
    cache_material,
    render_options,
    render_prompt,
    secret_marker,
    trials_material,
    without_inputs,
)
from ..evidence import JsonValue
from ..sandbox import TemplateFilter
from ..select import CACHEABLE_VERDICTS, cache_decision
from ._selection import Selection

if TYPE_CHECKING:
    from ..scoring.comparison import Arm

__all__ = [
    "ADAPTIVE_MIN_TRIALS",
    "CONTROL_AGENT",
    "CONTROL_LABEL",
    "WITHOUT_SUFFIX",
    "Action",
    "AgentPool",
    "PlanEntry",
    "RescoreSource",
    "agent_label",
    "build_plan",
    "control_entry",
]

CONTROL_LABEL = "noop-control"
"""The agent label of an eval's negative control (a label no listed agent can get: ``name-N`` has digits)."""

CONTROL_AGENT = AgentSpec("noop", {}, "the negative control")
"""The negative control's agent: the built-in noop, which does nothing."""

WITHOUT_SUFFIX = "~without"
"""Appended to an agent's label for the ``without`` arm of a ``compare:`` eval (``codex~without``).

The arm gets its own label so that everything keyed by eval × agent — result folders, history lines and
their cache lookups, flakiness windows, forecasts — keeps the two arms apart without knowing of arms.
``~`` is in no agent label (names are words, duplicates get ``-N``) and is safe in paths and artifacts.
"""

ADAPTIVE_MIN_TRIALS = 3
"""The first wave of ``--adaptive`` for evals that name no minimum: fewer says too little to stop on."""

Action = Literal["run", "cached", "unchanged", "filtered"]


@dataclass(frozen=True)
class RescoreSource:
    """A kept run's recorded trials of one eval × agent, to be re-checked instead of run again.

    ``folder`` is the pair's folder in that run (``evals/<id>/<agent>``), holding ``trial-N`` folders.
    """

    run_id: str
    folder: Path
    cache_key: str | None = None
    """The pair's cache key in that run: the same as now means nothing changed, not only the checks."""


@dataclass(frozen=True)
class PlanEntry:
    """One eval × agent and what the run will do with it."""

    spec: EvalSpec
    agent: AgentSpec
    label: str
    action: Action
    reason: str
    cache_key: str | None = None
    prompt_sha256: str | None = None
    agent_version: str | None = None
    model: str | None = None
    last: object | None = field(default=None, compare=False)
    rendered: RenderedPrompt | None = field(default=None, compare=False, repr=False)
    control: bool = False
    """The eval's negative control: its assertions on a sandbox no agent touched."""
    arm: Arm | None = None
    """``with`` or ``without`` for an eval with ``compare:``; ``None`` for every other eval."""
    dropped: tuple[str, ...] = ()
    """The compared instruction files and skills: what the ``without`` arm leaves out (set on both arms)."""
    isolation: str = "none"
    """How the trials' processes run: ``none``, or a backend once the run decided it can (``_isolation``)."""
    network: str = "host"
    """Under isolation: ``host``, ``model`` or ``none``, from the eval or the agent (``_isolation``)."""
    trials_key: str | None = None
    """The cache key without what only the checks use (see ``trials_material``): equal keys, same trials."""
    rescore: RescoreSource | None = field(default=None, compare=False)
    """Where the recorded trials this entry is re-checked from are, instead of running the agent."""

    @property
    def key(self) -> str:
        """``<eval id>::<agent label>``, stable across machines (used for shards and display)."""
        return f"{self.spec.id}::{self.label}"


class AgentPool:
    """One adapter per distinct agent entry, shared by every trial of the run that uses it.

    Sharing matters for adapters with expensive set-up (one Copilot CLI server for all trials).
    """

    def __init__(self, secret_values: Mapping[str, str], secret_names: Sequence[str] = ()) -> None:
        # Unset secrets render as their marker: such adapters can be planned and listed, never run (a run
        # with an unset secret is refused before any trial).
        self._secret_values = {name: secret_marker(name) for name in secret_names} | dict(secret_values)
        self._agents: dict[bytes, Agent] = {}

    def get(self, spec: AgentSpec) -> Agent:
        """The adapter for this entry, created on first use with its options rendered."""
        options = render_options(spec.options, self._secret_values)
        if spec is CONTROL_AGENT:
            # Built in, so a negative control never depends on how the package was installed.
            key = b"negative-control"
            if key not in self._agents:
                self._agents[key] = NoopAgent()
            return self._agents[key]
        key = canonical_json({"name": spec.name, "options": options})
        if key not in self._agents:
            self._agents[key] = create_agent(replace(spec, options=options))
        return self._agents[key]

    def stand_in(self, spec: AgentSpec, make: Callable[[Agent], Agent]) -> None:
        """Replace this entry's adapter by ``make(adapter)`` (an agent that cannot run here, say)."""
        options = render_options(spec.options, self._secret_values)
        key = canonical_json({"name": spec.name, "options": options})
        self._agents[key] = make(self.get(spec))

    @property
    def agents(self) -> list[Agent]:
        """Every adapter created so far."""
        return list(self._agents.values())

    async def aclose(self) -> None:
        """Close every adapter; one failing to close does not stop the others."""
        for agent in self._agents.values():
            with contextlib.suppress(Exception):
                await agent.aclose()


def _base_label(agent: AgentSpec) -> str:
    """``name``, or ``name-<version>`` for an agent pinned with ``version:`` (``claude-code-latest``).

    The version written, not the one it resolves to: ``latest`` keeps one history while the release
    behind it moves, and each history line carries the exact agent version.
    """
    version = agent.options.get("version")
    return f"{agent.name}-{version}" if isinstance(version, str) and version else agent.name


def agent_label(spec: EvalSpec, index: int) -> str:
    """The folder and history name of the ``index``-th agent of an eval.

    The bare name (with its ``version:`` when one is given), unless the eval lists the same agent twice
    that way (two models, say); then ``name-2`` etc.
    """
    base = _base_label(spec.agents[index])
    same = [i for i, agent in enumerate(spec.agents) if _base_label(agent) == base]
    return base if same[0] == index else f"{base}-{same.index(index) + 1}"


def _select_agents(
    spec: EvalSpec, wanted: Sequence[str], registered: Collection[str]
) -> list[tuple[AgentSpec, str]]:
    pairs = [(agent, agent_label(spec, i)) for i, agent in enumerate(spec.agents)]
    if not wanted:
        return pairs
    chosen: list[tuple[AgentSpec, str]] = []
    for name in wanted:
        listed = [(agent, label) for agent, label in pairs if name in (agent.name, label)]
        if not listed and name in registered:
            # A registered agent the eval does not list can still be tried on it, with default options.
            listed = [(AgentSpec(name, {}, "--agent"), name)]
        chosen.extend(pair for pair in listed if pair not in chosen)
    return chosen


class LastLookup(Protocol):
    """How planning reads history: :meth:`trialbook.history.HistoryStore.latest`."""

    def __call__(
        self, eval_id: str, agent: str, *, cache_key: str | None = ..., verdicts: Collection[str] | None = ...
    ) -> object | None:
        """The newest line of the eval × agent (with that key and verdict, when given)."""
        ...


def rendered_for_plan(spec: EvalSpec, environ: Mapping[str, str]) -> RenderedPrompt:
    """The prompt as planning sees it; an unset secret shows as its marker (only ``for_hash`` is used)."""
    values = {name: environ.get(name) or secret_marker(name) for name in spec.secrets}
    return render_prompt(spec, values)


def _effective_trials(spec: EvalSpec, trials: int | None, adaptive: bool) -> EvalSpec:
    most = spec.trials if trials is None else trials
    least = spec.min_trials
    if least is None and adaptive:
        least = ADAPTIVE_MIN_TRIALS
    if least is not None:
        least = min(least, most)
    if (most, least) == (spec.trials, spec.min_trials):
        return spec
    return replace(spec, trials=most, min_trials=least)


def control_entry(entry: PlanEntry, pool: AgentPool) -> PlanEntry:
    """The negative control of ``entry``'s eval: one noop trial, with its own cache key.

    The key covers what decides the control's outcome (prompt, template, shims, assertions, timeout)
    and not the eval's agents, so one control serves every agent of the eval.
    """
    once = replace(entry.spec, trials=1, min_trials=None, pass_rate=1.0)
    agent = pool.get(CONTROL_AGENT)
    assert entry.rendered is not None
    material: JsonValue = cache_material(
        once,
        CONTROL_AGENT,
        entry.rendered,
        agent_version=agent.version(),
        template_tree_hash=_template_hash(once.template, once.template_exclude),
    )
    reason = "negative control: the assertions on a sandbox no agent touched"
    return PlanEntry(
        once, CONTROL_AGENT, CONTROL_LABEL, "run", reason, cache_key=tagged_sha256(canonical_json(material)),
        prompt_sha256=entry.prompt_sha256, agent_version=agent.version(), rendered=entry.rendered,
        control=True,
    )  # fmt: skip


def _arms(entry: PlanEntry) -> list[PlanEntry]:
    """The entry itself, or for an eval with ``compare:`` its ``with`` and ``without`` arms.

    Both arms run every trial: stopping early on the trials seen so far would bias the exact test of
    their difference, so adaptive trials are off for compared evals. The ``without`` arm is the same
    eval with the compared inputs removed; its different inputs give it its own cache key.
    """
    compare = entry.spec.compare
    if compare is None:
        return [entry]
    spec = replace(entry.spec, min_trials=None)
    dropped = compare.dropped(spec.instructions, spec.skills)
    without = without_inputs(spec, dropped)
    return [
        replace(entry, spec=spec, arm="with", dropped=dropped),
        replace(entry, spec=without, label=entry.label + WITHOUT_SUFFIX, arm="without", dropped=dropped),
    ]


def with_key(entry: PlanEntry) -> str:
    """The key of the ``with`` arm of ``entry`` (its own key for any other entry)."""
    return entry.key.removesuffix(WITHOUT_SUFFIX) if entry.arm == "without" else entry.key


def _shard_group(entry: PlanEntry) -> str:
    """What must run in one shard with ``entry``: both arms of a comparison, all queries of a trigger eval."""
    trigger = entry.spec.trigger
    return f"{trigger.group}::{entry.label}" if trigger is not None else with_key(entry)


def _selected(
    entry: PlanEntry,
    chosen: Selection,
    changed: Mapping[str, str] | None,
    unchanged: Mapping[str, str] | None,
) -> PlanEntry:
    """The entry as the selection decides it: filtered, unchanged, or to be run (and why)."""
    spec = entry.spec
    if not chosen.matches_id(spec.id):
        return replace(entry, action="filtered", reason=chosen.filter_reason)
    # A without arm goes where its with arm goes: one without the other compares nothing.
    if chosen.only_keys is not None and with_key(entry) not in chosen.only_keys:
        return replace(entry, action="filtered", reason=chosen.only_reason)
    if unchanged is not None and spec.id in unchanged:
        return replace(entry, action="unchanged", reason=unchanged[spec.id])
    if changed is not None and spec.id in changed:
        return replace(entry, reason=changed[spec.id])
    return entry


def _template_hash(template: Path | None, exclude: tuple[str, ...]) -> str | None:
    if template is None:
        return None
    from ..select import tree_hash  # hashing a template's files: only evals that have one

    return tree_hash(template, TemplateFilter.of(exclude))


def build_plan(
    specs: Sequence[EvalSpec],
    *,
    pool: AgentPool,
    environ: Mapping[str, str],
    selection: Selection | None = None,
    registered: Collection[str] = (),
    shard: tuple[int, int] | None = None,
    durations: Callable[[PlanEntry], float | None] | None = None,
    trials: int | None = None,
    adaptive: bool = False,
    last_run: LastLookup | None = None,
    force: bool = False,
    changed: Mapping[str, str] | None = None,
    unchanged: Mapping[str, str] | None = None,
) -> list[PlanEntry]:
    """Decide, for every eval × agent, whether it runs and why.

    ``unchanged`` maps eval ids to the reason they are left out of a changed-only run. Filtered and
    unchanged pairs are still listed (with their reason) so ``--dry-run`` and summaries can show them.
    ``trials`` overrides every eval's maximum; ``adaptive`` gives evals without ``trials: {min: ...}`` a
    minimum of :data:`ADAPTIVE_MIN_TRIALS`. ``durations`` gives the seconds history expects a pair to
    take, so shards are balanced by time (see :func:`trialbook.select.balanced_shard_of`).
    """
    chosen = selection or Selection()
    entries: list[PlanEntry] = []
    for spec in specs:
        effective = _effective_trials(spec, trials, adaptive)
        rendered = rendered_for_plan(effective, environ)
        prompt_hash = tagged_sha256(rendered.for_hash.encode("utf-8"))
        for agent_spec, label in _select_agents(effective, chosen.agents, registered):
            first = PlanEntry(
                effective, agent_spec, label, "run", "selected", prompt_sha256=prompt_hash, rendered=rendered
            )
            entries += [_selected(entry, chosen, changed, unchanged) for entry in _arms(first)]
    _check_matches(entries, chosen)
    if shard is not None:
        entries = _sharded(entries, shard, durations)
    keys = _CacheKeys(pool)
    return [
        entry if entry.action != "run" else _cached(keys.keyed(entry), last_run, force=force)
        for entry in entries
    ]


def _check_matches(entries: Sequence[PlanEntry], chosen: Selection) -> None:
    """Refuse a ``--filter``/``--agent`` selection that matches no eval × agent pair."""
    survivors = [e for e in entries if not (e.action == "filtered" and e.reason == chosen.filter_reason)]
    if survivors or not (chosen.filters or chosen.agents):
        return
    parts = (
        f"--filter {', '.join(chosen.filters)}" if chosen.filters else "",
        f"--agent {', '.join(chosen.agents)}" if chosen.agents else "",
    )
    raise UsageError("no eval × agent pair matches both " + " and ".join(part for part in parts if part))


def _sharded(
    entries: list[PlanEntry],
    shard: tuple[int, int],
    durations: Callable[[PlanEntry], float | None] | None,
) -> list[PlanEntry]:
    """Keep shard ``I/N``'s runnable pairs, balanced by the seconds history expects each to take.

    Both arms of a compared pair, and every query of a trigger eval × agent, go to one shard, so that
    shard reports the comparison or the trigger scores.
    """
    from ..select import balanced_shard_of

    runnable = [e for e in entries if e.action == "run"]
    groups = list(dict.fromkeys(_shard_group(e) for e in runnable))
    expected: dict[str, float | None] = dict.fromkeys(groups)
    for e in runnable:
        seconds = durations(e) if durations is not None else None
        if seconds is not None:
            expected[_shard_group(e)] = (expected[_shard_group(e)] or 0.0) + seconds
    mine = set(balanced_shard_of(groups, groups, [expected[key] for key in groups], *shard))
    return [
        e
        if e.action != "run" or _shard_group(e) in mine
        else replace(e, action="filtered", reason="another shard")
        for e in entries
    ]


class _CacheKeys:
    """A runnable pair's cache keys, hashing each template folder once per plan."""

    def __init__(self, pool: AgentPool) -> None:
        self.pool = pool
        self.template_hashes: dict[str, str | None] = {}

    def keyed(self, entry: PlanEntry) -> PlanEntry:
        """``entry`` with its cache key, trials key, agent version and model."""
        agent = self.pool.get(entry.agent)
        version = agent.version()
        template, exclude = entry.spec.template, entry.spec.template_exclude
        tkey = str((template, exclude))
        if tkey not in self.template_hashes:
            self.template_hashes[tkey] = _template_hash(template, exclude)
        assert entry.rendered is not None
        material = cache_material(
            entry.spec,
            entry.agent,
            entry.rendered,
            agent_version=version,
            template_tree_hash=self.template_hashes[tkey],
        )
        key = tagged_sha256(canonical_json(material))
        trials_key = tagged_sha256(canonical_json(trials_material(material)))
        return replace(entry, cache_key=key, trials_key=trials_key, agent_version=version, model=agent.model)


def _cached(entry: PlanEntry, last_run: LastLookup | None, *, force: bool) -> PlanEntry:
    """``entry`` marked ``cached`` when history holds a settled verdict for its exact cache key."""
    if last_run is None:
        return entry
    # Content-addressed: any line with this key and a settled verdict serves, from any ref.
    hit = last_run(entry.spec.id, entry.label, cache_key=entry.cache_key, verdicts=CACHEABLE_VERDICTS)
    newest = last_run(entry.spec.id, entry.label)
    cached, reason = cache_decision(entry.cache_key, hit, newest, force=force)  # type: ignore[arg-type]
    if cached or entry.reason == "selected":
        entry = replace(entry, reason=reason)
    return replace(entry, last=hit if cached else newest, action="cached" if cached else "run")
