"""The ``copilot`` agent: the runner's view (``Agent.run(AgentTask)``) and a direct Python entry point.

One adapter owns a pool of CLI servers for its whole run and opens a fresh session per trial. Servers are
shared by trials with identical environments (see ``_server``), so a pytest suite or an eval whose trials
share one environment starts the CLI once, while sandboxed trials each keep their own PATH and HOME.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..._util.owner import temp_prefix
from ...evidence import CopilotResult
from ...masking import enforce_lengths
from .._protocol import AgentSpec, AgentTask, Availability
from ._config import CopilotEval, eval_from_spec
from ._isolated import isolated_cli, model_endpoints
from ._masked import credential_items, known_credentials
from ._server import RUNNER_TOKEN, TOKEN_VARIABLES, ServerPool, availability, cli_environment, cli_version
from ._session import Trial, run_trial

__all__ = ["SKILLS_FOLDER", "CopilotAgent", "create"]

SKILLS_FOLDER = ".github/skills"
"""Where a trial's declared skills are placed; the session gets it as one of its skill directories."""


class CopilotAgent:
    """Runs :class:`CopilotEval` sessions through ``github-copilot-sdk`` and the Copilot CLI.

    Instruction files in the working directory (``AGENTS.md``, ``CLAUDE.md``,
    ``.github/copilot-instructions.md``, ``.github/instructions/*.instructions.md``) are Copilot's own
    discovery; declared skills are placed in ``SKILLS_FOLDER`` and handed to the session.

    Args:
        config: the agent's settings.
        environ: the runner's environment; only the documented variables are read from it (defaults to
            ``os.environ``).
        max_idle_servers: how many idle CLI servers to keep for reuse.
        pool: a server pool shared with other adapters (its owner closes it); by default each adapter
            has its own.
        declared_env: the eval file's ``env:`` for this agent (values may still be templates); the runner
            renders it into every task's env, so a token declared there makes the agent available.
    """

    SKILLS_FOLDER = SKILLS_FOLDER
    SUPPORTS_ISOLATION = True
    """The SDK starts the CLI through a script that starts it isolated (``_isolated``)."""
    DEFAULT_NETWORK = "host"
    """Under isolation, unless the eval says otherwise: Copilot's own service is more than one endpoint."""

    def __init__(
        self,
        config: CopilotEval,
        *,
        environ: Mapping[str, str] | None = None,
        max_idle_servers: int = 1,
        pool: ServerPool | None = None,
        declared_env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self._declared_env = dict(declared_env or {})
        self._environ = dict(os.environ if environ is None else environ)
        self._owns_pool = pool is None
        self.pool = pool if pool is not None else ServerPool(max_idle=max_idle_servers)
        self._home: Path | None = None

    @property
    def name(self) -> str:
        """The agent's name as eval files write it."""
        return self.config.name

    @property
    def model(self) -> str | None:
        """The requested model, or ``None`` for Copilot's default."""
        return self.config.model

    @property
    def cli_path(self) -> str | None:
        """The CLI binary: the ``cli_path`` option, else ``COPILOT_CLI_PATH``; never a download."""
        return self.config.cli_path or self._environ.get("COPILOT_CLI_PATH") or None

    def available(self) -> Availability:
        """Whether the CLI is there and executable, and a token or a provider is configured."""
        return availability(
            self.cli_path, self.config.provider is not None, self._environ, self._declared_env
        )

    def version(self) -> str | None:
        """The CLI's version from ``copilot --no-auto-update --version``, memoised per binary."""
        path = self.cli_path
        return cli_version(path) if path else None

    def _secrets(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """The GitHub token variables and every other credential in the settings or the CLI's env."""
        values = [env.get(name, "") for name in TOKEN_VARIABLES]
        values += known_credentials(self.config, env)
        return tuple(dict.fromkeys(v for v in values if v))

    async def run(self, task: AgentTask) -> CopilotResult:
        """Run one trial in ``task.workdir`` with ``task.env`` as the base of the CLI's environment."""
        path = self.cli_path
        check = self.available()
        if path is None or not check.ok:
            return CopilotResult(
                agent_name=self.name,
                agent_version=None,
                success=False,
                error=check.reason or "the Copilot CLI is not available",
                stop_reason="execution_error",
                working_directory=str(task.workdir),
            )
        env = cli_environment(task.env, task.home, path, self._environ)
        limits = [t for t in (self.config.timeout_s, task.timeout_s) if t is not None]
        config = self.config
        if any(item.kind == "skill" for item in task.inputs):
            # Copilot lists project skills only from the directories the session is given.
            skills = str(task.workdir / SKILLS_FOLDER)
            config = replace(config, skill_directories=(*config.skill_directories, skills))
        trial = Trial(
            config=config,
            prompt=task.prompt,
            workdir=task.workdir,
            env=env,
            cli_path=path,
            agent_version=self.version(),
            timeout_s=min(limits) if limits else None,
            output_dir=task.output_dir,
            secrets=(*task.masker.values, *self._secrets(env)),
            inputs=task.inputs,
        )
        if task.isolation is None:
            return await run_trial(self.pool, trial)
        endpoints = model_endpoints(self.config.provider)
        async with isolated_cli(path, task.isolation, task.workdir, env, endpoints) as script:
            try:
                return await run_trial(self.pool, replace(trial, cli_path=script))
            finally:
                await self.pool.stop_for(script)  # its namespaces end with the trial: never reused

    async def run_prompt(
        self,
        prompt: str,
        *,
        workdir: Path | None = None,
        env: Mapping[str, str] | None = None,
        output_dir: Path | None = None,
    ) -> CopilotResult:
        """Run ``prompt`` outside the runner (pytest, scripts): the workdir defaults to the config's.

        Without ``env`` the CLI gets the runner's PATH and a HOME private to this adapter.

        Raises:
            ConfigError: a credential in the settings or ``env`` is 1 to 3 characters long, too short to
                mask (one of 4 to 7 characters runs, with a :class:`~trialbook.masking.ShortSecretWarning`).
        """
        root = workdir or (Path(self.config.working_directory) if self.config.working_directory else None)
        if root is None:
            raise ValueError("give a workdir or set CopilotEval.working_directory")
        if self._home is None:  # one private HOME per adapter, so trials can share a server
            self._home = Path(tempfile.mkdtemp(prefix=temp_prefix("copilot-home-")))
        home = self._home
        base = dict(env) if env is not None else {"PATH": self._environ.get("PATH", os.defpath)}
        base.setdefault("HOME", str(home))
        self._check_credentials(base)
        task = AgentTask(
            prompt=prompt, workdir=root, home=Path(base["HOME"]), env=base, output_dir=output_dir or home
        )
        return await self.run(task)

    def _check_credentials(self, env: Mapping[str, str]) -> None:
        """Refuse credentials too short to mask and warn about weak ones, naming the setting."""
        given = {RUNNER_TOKEN: self._environ.get(RUNNER_TOKEN, ""), **env}
        named = ((f"CopilotEval {where}", value) for where, value in credential_items(self.config, given))
        enforce_lengths(named, stacklevel=3)

    async def aclose(self) -> None:
        """Stop every CLI server this adapter started (a shared pool is left to its owner)."""
        if self._owns_pool:
            await self.pool.aclose()


def create(spec: AgentSpec) -> CopilotAgent:
    """Build the adapter for an eval file's ``copilot`` entry (raises ``ConfigError`` for bad options)."""
    env = spec.options.get("env")
    declared = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    return CopilotAgent(eval_from_spec(spec), declared_env=declared)
