"""Isolation of a trial's processes with bubblewrap: the system read-only, the host's private places hidden.

Without it (``none``) an agent runs as the user running trialbook and can read and write whatever that
user can. Under ``bwrap`` every process a trial starts runs in its own mount, PID and IPC namespaces:

- the root filesystem is bound read-only, so the system, the project checkout and every package are
  there to read and run, and nothing of them can be changed;
- the trial's own folder (its ``work/`` sandbox, ``HOME``, ``TMPDIR``, shims and call log) is the one
  writable place;
- the host's ``HOME``, ``/tmp`` (and so other trials' sandboxes), ``RUNNER_TEMP``, the virtualenv trialbook
  runs from and the run's results folder are covered by empty folders of the trial's own: not visible at
  all, and what the agent writes there is listed after the trial, as are its writes to the system's
  folders, which get a writable layer where the kernel allows (``_outside``);
- ``/proc`` is the trial's own PID namespace's: an agent sees its own processes, not trialbook's or
  other trials', and when the namespace's first process ends the kernel ends every process in it;
- each shim is also bound over every real binary of its name, so a call by absolute path is recorded
  (``_covers``);
- with ``network: none`` or ``model`` the trial also gets its own network namespace, where refused
  connections are recorded and, with ``model``, only the agent's model endpoints answer (``_network``);
- where the system's Python and a user namespace of its own are there, the trial's first process is
  ``_inside``, which sets up what bubblewrap 0.8 cannot and drops every right before the agent runs.

:class:`Isolation` is the ``bwrap`` backend of ``_backend``'s protocol. Where bubblewrap cannot run (not
installed, or user namespaces restricted as on Ubuntu 24.04's default AppArmor policy)
:func:`bwrap_problem` says why and how to fix it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..evidence import OutsideWrite, RefusedConnection
from ._covers import ShimCover, cover_pairs, view_args
from ._network import endpoint_of, network_spec, refused_connections, relay_for
from ._outside import (
    cover_folder,
    layer_spec,
    outside_writes,
    prepare_outside,
    system_layers,
    system_python,
)

__all__ = ["Isolation", "bwrap_problem", "hidden_paths", "install_root"]

INSIDE_RIGHTS = (
    "CAP_SYS_ADMIN",
    "CAP_DAC_OVERRIDE",
    "CAP_SETPCAP",
    "CAP_SETFCAP",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_NET_BIND_SERVICE",
)
"""What ``_inside`` holds, in the trial's user namespace only, before it drops everything: mounting
(an overlay's work folder takes ``CAP_DAC_OVERRIDE``), becoming the runner's user again (mapping uid 0 of
the parent namespace takes ``CAP_SETFCAP``), routing, watching and listening."""

TMP = Path("/tmp")

APPARMOR_FIX = "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
"""The one-line fix where Ubuntu's AppArmor policy refuses unprivileged user namespaces (24.04 on)."""


@dataclass(frozen=True)
class Isolation:
    """One trial's bubblewrap settings: its writable folder, what to hide, its shims and its network."""

    root: Path = Path("/")
    """The trial's folder, set by :meth:`in_trial`."""
    hide: tuple[Path, ...] = ()
    network: str = "host"
    expose: tuple[Path, ...] = ()
    """Folders shown read-only although a hidden place holds them: the agent's own installation (a CLI
    installed under the runner's home, as npm, nvm or trialbook's agent cache put it)."""
    shims: tuple[ShimCover, ...] = ()
    """The trial's shims, each bound over the real binaries of its name (see ``_covers``)."""

    endpoints: tuple[str, ...] = ()
    """With ``network: model``: the URLs of the model endpoints the agent may reach (``_network``)."""

    def _places(self) -> tuple[Path, ...]:
        return (TMP, *(path for path in self.hide if path.is_dir()))

    def problem(self) -> str | None:
        """Why bubblewrap cannot isolate with this network here (:func:`bwrap_problem`); ``None``: it can."""
        problem = bwrap_problem()
        if problem is None and self.network == "model" and inside_python() is None:
            return (
                "network: model needs the system's Python (/usr/bin/python3) and a user namespace of the "
                "trial's own to reach the model endpoint from inside the sandbox"
            )
        return problem

    def in_trial(self, root: Path, shims: tuple[ShimCover, ...]) -> Isolation:
        """These settings for the trial whose folder is ``root``."""
        return dataclasses.replace(self, root=root, shims=shims)

    @contextlib.asynccontextmanager
    async def for_agent(self, expose: Sequence[Path], endpoints: Sequence[str]) -> AsyncIterator[Isolation]:
        """These settings with ``expose`` shown, and with ``network: model`` the relay to ``endpoints``."""
        isolation = dataclasses.replace(self, expose=(*self.expose, *expose), endpoints=tuple(endpoints))
        if self.network != "model":
            yield isolation
            return
        async with relay_for(self.root, isolation.endpoints):
            yield isolation

    def wrap(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> list[str]:
        """``argv`` as bubblewrap starts it inside the trial's namespaces (see the module docstring).

        ``env`` passes through bubblewrap as it is.

        Makes the trial folder's cover folders first (``_outside``): bubblewrap binds them in. With the
        system's Python there, the trial's first process is ``_inside``, which sets up what bubblewrap
        cannot (writable layers, the network's watch and the model endpoints) and then runs ``argv``.
        """
        places = self._places()
        prepare_outside(self.root, places)
        python = inside_python()
        args = [
            find_bwrap() or "bwrap",
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
        ]
        if python is not None:
            # The rights _inside needs, in the trial's own user namespace; it drops them before argv runs.
            args += ["--unshare-user", *_as_root()]
            for right in INSIDE_RIGHTS:
                args += ["--cap-add", right]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for place in places:
            args += ["--bind", str(cover_folder(self.root, place)), str(place)]
        for path in self.expose:
            if path.is_dir():
                args += ["--ro-bind", str(path), str(path)]
        # After the covers, so a trial folder inside a hidden place (under /tmp, say) is bound back over them.
        args += ["--bind", str(self.root), str(self.root)]
        args += view_args(self.shims, self.root, places)
        binds = cover_pairs(self.shims, self.root, places)
        if self.network != "host":
            args.append("--unshare-net")
        if python is None:
            for shim, target in binds:
                args += ["--ro-bind", str(shim), str(target)]
            return [*args, "--chdir", str(cwd), "--", *argv]
        settings = layer_spec(self.root, system_layers(self.root, places))
        if self.network != "host":
            endpoints = [endpoint_of(url) for url in self.endpoints] if self.network == "model" else []
            network, hosts = network_spec(self.root, endpoints)
            settings += network
            binds += hosts
        for source, target in binds:
            settings += ["bind", str(source), str(target)]
        if os.getuid() != 0:
            settings += ["user", str(os.getuid()), str(os.getgid())]
        helper = [python, "-I", "-S", "-c", inside_source(), *settings, "--"]
        return [*args, "--chdir", str(cwd), "--", *helper, *argv]

    def outside_writes(self) -> tuple[OutsideWrite, ...]:
        """What the trial wrote outside its project folder (``_outside``); read once its processes ended."""
        return outside_writes(self.root, self._places())

    def network_refused(self) -> tuple[RefusedConnection, ...] | None:
        """The connections its own network refused (``_network``); ``None`` when nothing watched."""
        return None if self.network == "host" else refused_connections(self.root)


def _as_root() -> list[str]:
    # Mounting takes root of the namespace that owns the mounts; _inside becomes the runner's uid after.
    return [] if os.getuid() == 0 else ["--uid", "0", "--gid", "0"]


@functools.cache
def inside_python() -> str | None:
    """The Python that runs ``_inside`` first in each trial, when this machine lets it; else ``None``.

    ``_inside`` needs a user namespace of the trial's own with rights in it. Root can run bubblewrap
    without one, so a machine where user namespaces are off still isolates, only without the writable
    layers and the network's watch: this probe, made once, tells the two apart.
    """
    python, binary = system_python(), find_bwrap()
    if python is None or binary is None:
        return None
    probe = [
        binary,
        "--unshare-user",
        "--unshare-pid",
        *(f for right in INSIDE_RIGHTS for f in ("--cap-add", right)),
    ]
    probe += [
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        python,
        "-I",
        "-S",
        "-c",
        "import ctypes",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return python if done.returncode == 0 else None


@functools.cache
def inside_source() -> str:
    """The text of ``_inside``, which the system's Python runs inside the trial (trialbook's is hidden)."""
    return Path(__file__).with_name("_inside.py").read_text(encoding="utf-8")


def install_root(binary: Path) -> Path:
    """The folder a CLI is installed in: the one holding its ``node_modules``, else the binary's own."""
    for path in (binary, binary.resolve()):
        for parent in path.parents:
            if parent.name == "node_modules":
                return parent.parent
    return binary.resolve().parent


def hidden_paths(results: Path | None, environ: dict[str, str] | None = None) -> tuple[Path, ...]:
    """The host's places a trial must not see: HOME, RUNNER_TEMP, trialbook's virtualenv, the results."""
    env = os.environ if environ is None else environ
    found = [Path.home()]
    if env.get("RUNNER_TEMP"):
        found.append(Path(env["RUNNER_TEMP"]))
    if sys.prefix != sys.base_prefix:  # trialbook runs from a virtualenv: its code must stay out of reach
        found.append(Path(sys.prefix))
    if results is not None:
        found.append(results)
    return tuple(path.resolve() for path in found if str(path) not in ("/", ""))


def find_bwrap() -> str | None:
    """The ``bwrap`` on ``PATH``, if any (one place, so tests can take it away)."""
    return shutil.which("bwrap")


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate trials on this machine, with the fix; ``None`` when it can."""
    binary = find_bwrap()
    if binary is None:
        return "bubblewrap is not installed: install it (Debian and Ubuntu: sudo apt-get install bubblewrap)"
    probe = [binary, "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    if done.returncode == 0:
        return None
    said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    # "Permission denied" (AppArmor), "No permissions to create new namespace" (Debian's sysctl) and
    # "Creating new namespace failed ... (ENOSPC)" (user.max_user_namespaces=0) all mean the same fix.
    if "ermission" in said or "Operation not permitted" in said or "namespace" in said:
        return (
            f"bubblewrap cannot make user namespaces here ({said}); where AppArmor restricts them "
            f"(Ubuntu 24.04), allow them with `{APPARMOR_FIX}`, or run as root"
        )
    return f"bubblewrap does not work here: {said}"
