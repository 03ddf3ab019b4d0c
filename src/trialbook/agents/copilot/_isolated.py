"""The Copilot CLI under isolation: the SDK starts it, so it starts a script that starts bubblewrap.

The SDK spawns the CLI itself (a stdio server), outside trialbook's process functions. It is given the path
of a small script in the trial folder instead, which runs the trial's bubblewrap command line around the
real CLI with the SDK's own arguments, so the CLI and every command its tools run are inside the trial's
namespaces. The CLI's installation and its shared package cache (where it unpacked its runtime, under the
runner's home) stay visible read-only. With ``network: model`` the only endpoint is the provider's
``base_url`` (bring your own key): Copilot's own service is not reachable that way.
"""

from __future__ import annotations

import contextlib
import shlex
import stat
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from ...evidence import JsonValue
from ...sandbox import IsolationBackend, install_root
from ._native import native_cli

__all__ = ["isolated_cli", "model_endpoints"]

WRAPPER = "copilot-isolated"


def model_endpoints(provider: Mapping[str, JsonValue] | None) -> tuple[str, ...]:
    """The provider's ``base_url``, the one model endpoint ``network: model`` lets through."""
    url = provider.get("base_url") if provider is not None else None
    return (url,) if isinstance(url, str) and url else ()


@contextlib.asynccontextmanager
async def isolated_cli(
    cli_path: str,
    isolation: IsolationBackend,
    workdir: Path,
    env: Mapping[str, str],
    endpoints: tuple[str, ...],
) -> AsyncIterator[str]:
    """The path of the script that starts the CLI isolated, usable while the context is open."""
    native = native_cli(cli_path)
    shown = [install_root(Path(native))]
    cache = env.get("COPILOT_PKG_CACHE_HOME")
    if cache and Path(cache).is_dir():
        shown.append(Path(cache))
    async with isolation.for_agent(shown, endpoints) as isolated:
        script = isolated.root / WRAPPER
        command = shlex.join(isolated.wrap([native], workdir, env))
        script.write_text(f'#!/bin/sh\n# the Copilot CLI in the trial\'s namespaces\nexec {command} "$@"\n')
        script.chmod(stat.S_IRWXU)
        yield str(script)
