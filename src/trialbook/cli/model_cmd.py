"""``trialbook model serve``: a scripted model on 127.0.0.1, so agent evals can be tried offline.

The same loopback server trialbook's own tests use (:class:`trialbook.testing.ModelServer`), started
from the command line with a replies file: a user points Claude Code, Codex or Copilot at it and runs
``trialbook eval`` without an API key, a bill or Python.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from types import FrameType

import click

from .._util.fsutil import atomic_write_text
from ..errors import UsageError
from ..testing import ModelServer, load_replies

__all__ = ["model_command"]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _settings(server: ModelServer) -> list[str]:
    return [
        f"  claude-code  ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY={server.api_key}",
        f"  codex        agent option base_url: {server.openai_url}",
        f"  copilot      agent option provider: {{type: anthropic, base_url: {server.url}, "
        f"api_key: {server.api_key}}}",
    ]


@click.group("model")
def model_command() -> None:
    """A scripted model on 127.0.0.1 for trying agent evals offline (see docs/tutorial.md)."""


@model_command.command("serve")
@click.option(
    "--replies",
    "replies_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML file of the model's replies, by position in the conversation (see docs/local-model.md).",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port; 0 picks a free one."
)
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY to FILE once listening (for `set -a; . FILE`).",
)
def serve_command(replies_file: Path, port: int, env_file: Path | None) -> None:
    """Serve a scripted model on 127.0.0.1 until Ctrl-C: Anthropic Messages and OpenAI Responses.

    Each conversation gets the replies in order (a reply per model request), so several trials at
    once each see the whole script. It prints the settings that point each agent at it.
    """
    script = load_replies(replies_file)
    server = ModelServer(script.replies, when=script.when, port=port)
    try:
        server.start()
    except OSError as exc:
        raise UsageError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; pick another --port"
        ) from None
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        click.echo(f"loopback model at {server.url} ({len(script.replies)} replies); point the agents at it:")
        for line in _settings(server):
            click.echo(line)
        if env_file is not None:
            atomic_write_text(
                env_file, f"ANTHROPIC_BASE_URL={server.url}\nANTHROPIC_API_KEY={server.api_key}\n"
            )
        click.echo("Ctrl-C stops it.")
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
    click.echo(f"stopped after {len(server.model_requests())} model request(s)")
