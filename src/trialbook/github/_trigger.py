"""What a CI run should do, decided from the event alone (pure).

Evals cost money and minutes, so each trigger gets the narrowest sensible plan: a pull request runs only
the prompts it changed and only when a person asked for it with the label; a nightly run re-runs only
what moved since the last recorded result (a new agent version moves every key of that agent); a manual
run can force everything. The workflow gates on the label too, but the gate is repeated here so a
workflow copied without it still does not spend anything on unlabelled PRs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import RefusedRunError, UsageError
from ._env import ActionsEnv

__all__ = ["DEFAULT_LABEL", "TriggerPlan", "decide_trigger", "truthy_input"]

DEFAULT_LABEL = "run-evals"

_PULL_REQUEST_EVENTS = frozenset({"pull_request"})
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", ""})


@dataclass(frozen=True, kw_only=True)
class TriggerPlan:
    """What ``trialbook ci`` does for this event.

    Attributes:
        run: whether to run evals at all.
        reason: one sentence for the log and the job summary saying why.
        changed: select only evals whose rendered prompt changed against ``base``.
        base: the git revision to compare with (``origin/<branch>`` or a commit), when ``changed``.
        force: re-run evals even when their cache key did not move.
        push_history: record this run's results on the history branch. On for pull requests from the
            same repository (their lines carry the PR's ref, so a later "base result" skips them), off
            for forks, whose token cannot push.
        comment: post or update the sticky PR comment (pull requests only).
    """

    run: bool
    reason: str
    changed: bool = False
    base: str | None = None
    force: bool = False
    push_history: bool = False
    comment: bool = False


def truthy_input(value: object, *, name: str) -> bool:
    """Read a boolean action or dispatch input, which arrives as a real boolean or as a string.

    Raises:
        UsageError: for a value that is neither, so a typo such as ``ture`` is not silently false.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if value is not None else ""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise UsageError(f"input {name}: expected true or false, got {value!r}.")


def _pull_request_plan(env: ActionsEnv, label: str, base: str | None, changed: bool | None) -> TriggerPlan:
    number = env.pr_number
    pr = f"PR #{number}" if number is not None else "this pull request"
    if label not in env.pr_labels:
        return TriggerPlan(
            run=False, reason=f"{pr} has no `{label}` label, so no evals run; add the label to run them."
        )
    if env.action == "labeled" and env.added_label != label:
        return TriggerPlan(
            run=False,
            reason=f"the label `{env.added_label}` was added to {pr}, not `{label}`; nothing new to run.",
        )
    use_changed = True if changed is None else changed
    target = base or (f"origin/{env.base_ref}" if env.base_ref else env.pr_base_sha)
    if use_changed and target is None:
        raise UsageError(
            "pull_request event without GITHUB_BASE_REF or pull_request.base.sha in the payload; "
            "set the action's `base` input to the revision to compare with."
        )
    scope = f"evals whose prompt changed against {target}" if use_changed else "all selected evals"
    reason = f"{pr} has the `{label}` label: running {scope}."
    if env.from_fork:
        reason += " It comes from a fork, whose token is read-only: history is not pushed."
    return TriggerPlan(
        run=True,
        reason=reason,
        changed=use_changed,
        base=target,
        # Lines of PR runs are marked with their ref, so they never pass for the base's result.
        push_history=not env.from_fork,
        comment=True,
    )


def decide_trigger(
    env: ActionsEnv,
    *,
    label: str = DEFAULT_LABEL,
    force: bool | None = None,
    changed: bool | None = None,
    base: str | None = None,
    push_history: bool | None = None,
    comment: bool | None = None,
) -> TriggerPlan:
    """Decide what to run for the event in ``env``.

    The keyword arguments are the action's explicit inputs; ``None`` means "not given, use the event's
    default". An explicit ``force`` applies to every event; an explicit ``changed`` or ``base`` overrides
    the pull request defaults and turns on changed-only selection elsewhere.

    Args:
        env: the step's Actions environment.
        label: the label that opts a pull request in.
        force: re-run evals whose cache key did not move.
        changed: run only evals whose prompt changed against the base.
        base: revision to compare with instead of the PR's base branch.
        push_history: record results on the history branch (default: every event but fork PRs).
        comment: post the sticky PR comment (default: on for pull requests; never outside them).

    Raises:
        RefusedRunError: ``pull_request_target``, which would run PR code with write access and secrets.
        UsageError: a pull request event the base cannot be found for, or ``changed`` without a base.
    """
    if env.event_name == "pull_request_target":
        raise RefusedRunError(
            "pull_request_target runs with the base repository's secrets and a write token; running a "
            "PR's prompts there would hand both to untrusted code. Trigger evals on pull_request instead."
        )
    plan = _pull_request_plan(env, label, base, changed) if env.event_name in _PULL_REQUEST_EVENTS else None
    if plan is None:
        plan = _other_plan(env, force, changed, base)
    elif plan.run and force:
        plan = replace(plan, reason=plan.reason + " Forced.", force=True)
    if not plan.run:
        return plan
    if push_history is not None:
        plan = replace(plan, push_history=push_history)
    if comment is not None and env.pr_number is not None:
        plan = replace(plan, comment=comment)
    return plan


def _other_plan(env: ActionsEnv, force: bool | None, changed: bool | None, base: str | None) -> TriggerPlan:
    use_force = bool(force)
    if env.event_name == "workflow_dispatch" and force is None:
        use_force = truthy_input(env.inputs.get("force", False), name="force")
    if env.event_name == "schedule":
        what = "scheduled run"
    elif env.event_name == "workflow_dispatch":
        what = "manual run"
    else:
        what = f"{env.event_name} run"
    use_changed = bool(changed) or (changed is None and base is not None)
    if use_changed and base is None:
        raise UsageError(f"`changed` was set on a {env.event_name} event; also set `base` to compare with.")
    if use_force:
        scope = "forced re-run of every selected eval"
    else:
        scope = "every eval whose cache key moved since its last recorded result"
    if use_changed:
        scope += f", limited to prompts changed against {base}"
    return TriggerPlan(
        run=True,
        reason=f"{what}: {scope}.",
        changed=use_changed,
        base=base,
        force=use_force,
        push_history=True,
    )
