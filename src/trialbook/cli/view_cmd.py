"""``trialbook view``: build the HTML viewer for a run and serve it on 127.0.0.1 until Ctrl-C."""

from __future__ import annotations

import signal
import webbrowser
from pathlib import Path
from types import FrameType

import click

from ..errors import UsageError
from ..report.html import render_html
from ..report.viewer_load import load_run, locate_run
from ._viewer import history_options, history_summaries, make_server, serve_until_interrupted

__all__ = ["view_command"]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@click.command("view")
@click.argument("run", required=False, type=click.Path(exists=True, path_type=Path), metavar="[RUN]")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port; 0 picks a free one."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@history_options
def view_command(
    run: Path | None,
    port: int,
    open_browser: bool,
    history_dir: str | None,
    history_branch: str | None,
    last_n: int,
) -> None:
    """Serve the viewer for RUN (default: the latest run) on 127.0.0.1 only; Ctrl-C stops it.

    The page is the one `trialbook report --html` writes; raw trial files are served beside it.
    """
    suite_path = locate_run(run, Path.cwd())
    data = load_run(suite_path)
    history = history_summaries(history_dir, history_branch, last_n)
    page = render_html(
        data, link_base=data.folder, link_prefix="files/", history=history, history_window=last_n
    )
    try:
        server = make_server(page.encode("utf-8"), data.folder, port)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; pick another --port"
        ) from None
    address = f"http://127.0.0.1:{server.server_address[1]}/"

    def ready() -> None:
        click.echo(f"serving {data.folder} at {address} (Ctrl-C stops)", err=False)
        if open_browser:
            webbrowser.open(address)

    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        serve_until_interrupted(server, ready)
    finally:
        signal.signal(signal.SIGTERM, previous)
    click.echo("stopped")
