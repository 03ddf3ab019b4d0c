"""The first process of an isolated trial: set up what bubblewrap 0.8 cannot, drop every right, run the agent.

This module runs *inside* the trial's namespaces, under the system's Python (``python3 -I -S -c`` with
this file's text: trialbook's own virtualenv is hidden there), so it imports the standard library only
and nothing of trialbook. bubblewrap hands it ``CAP_SYS_ADMIN`` and a few network rights in the trial's
own user namespace, and it:

1. mounts the writable overlay layers over the system's top folders (``_outside``), then binds files
   over others (the shims over the real binaries, which a layer would hide; an ``/etc/hosts`` naming
   the model endpoints);
2. with its own network (``network: none`` or ``model``): makes every address local (so a connection
   anywhere is refused at once instead of timing out, and can be seen), listens where the agent
   expects its model endpoints, and opens a packet socket on the loopback interface;
3. drops every capability, for good, and checks that none is left: any failure so far ends here,
   the agent never starting (exit code 126, ``trialbook isolation: ...`` on stderr);
4. leaves a watcher behind (a double fork, so the agent never waits for it) that relays each connection
   to a model endpoint to the trial folder's Unix socket, where trialbook's relay on the host carries it
   on, and notes every refused connection in ``outside/network.jsonl``;
5. executes the agent's command.

It runs before every process a trial starts, so it keeps to the cheapest modules (``_socket`` and
``select``, not ``socket``, ``selectors``, ``subprocess`` or ``json``: those cost the agent's start
more than everything else here), and takes its settings as plain arguments, ``--`` before the command:
``layer FOLDER UPPER WORK``, ``bind SOURCE TARGET``, ``ip PATH``, ``log PATH``, ``listen ADDRESS PORT
SOCKET``, ``user UID GID`` (for a runner that is not root: see :func:`become`). The watcher ends with the
trial's PID namespace.
"""

from __future__ import annotations

import _socket
import ctypes
import os
import select
import sys

MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CAPABILITY_VERSION_3 = 0x20080522
ETH_P_ALL, PACKET_OUTGOING = 3, 4
TCP_SYN, TCP_RST, TCP_ACK = 0x02, 0x04, 0x10
LOGGED_AT_MOST = 1000
ARITY = {"layer": 3, "bind": 2, "ip": 1, "log": 1, "listen": 3, "user": 2}
CLONE_NEWUSER = 0x10000000

_libc = ctypes.CDLL(None, use_errno=True)
Settings = dict[str, list[list[str]]]
Listeners = list[tuple[_socket.socket, str]]


def fail(what: str) -> None:
    """Stop before the agent starts: nothing half set up may run."""
    sys.stderr.write(f"trialbook isolation: {what}; the trial's command did not start\n")
    sys.stderr.flush()
    os._exit(126)


def parse(args: list[str]) -> tuple[Settings, list[str]]:
    """The settings before ``--`` by kind, and the command after it."""
    settings: Settings = {kind: [] for kind in ARITY}
    index = 0
    while index < len(args) and args[index] != "--":
        kind = args[index]
        if kind not in ARITY or index + ARITY[kind] >= len(args):
            fail(f"unreadable setting {kind!r}")
        settings[kind].append(args[index + 1 : index + 1 + ARITY[kind]])
        index += 1 + ARITY[kind]
    command = args[index + 1 :]
    if not command:
        fail("no command given")
    return settings, command


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    """``mount(2)``, failing the start on any error."""
    fs = fstype.encode() if fstype else None
    options = data.encode() if data else None
    if _libc.mount(source.encode(), target.encode(), fs, flags, options) != 0:
        fail(f"mounting {target} failed: {os.strerror(ctypes.get_errno())}")


def set_up_files(settings: Settings) -> None:
    """The overlay layers, then the files bound over others (read-only).

    A layer the kernel refuses is left out: that folder stays read-only, as without layers.
    """
    for folder, upper, work in settings["layer"]:
        os.makedirs(upper, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        options = f"lowerdir={folder},upperdir={upper},workdir={work},userxattr"
        _libc.mount(b"overlay", folder.encode(), b"overlay", 0, options.encode())
    for source, target in settings["bind"]:
        mount(source, target, None, MS_BIND, None)
        mount("none", target, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)


def run_quietly(argv: list[str]) -> None:
    """Run ``argv`` and wait, its output dropped and its failure ignored (the watch only sees less)."""
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.waitpid(pid, 0)


def set_up_network(settings: Settings) -> tuple[_socket.socket | None, Listeners]:
    """Every address local (when ``ip`` is there), the packet socket, and the endpoints' listeners."""
    for (ip,) in settings["ip"]:
        run_quietly([ip, "-4", "route", "add", "local", "0.0.0.0/0", "dev", "lo"])
        run_quietly([ip, "-6", "route", "add", "local", "::/0", "dev", "lo"])
    sniffer: _socket.socket | None = None
    try:
        sniffer = _socket.socket(_socket.AF_PACKET, _socket.SOCK_DGRAM, _socket.htons(ETH_P_ALL))
        sniffer.bind(("lo", 0))
    except OSError:
        sniffer = None  # the refusals go unrecorded; the network stays closed all the same
    listeners = []
    for address, port, path in settings["listen"]:
        family = _socket.AF_INET6 if ":" in address else _socket.AF_INET
        listener = _socket.socket(family, _socket.SOCK_STREAM)
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        try:
            listener.bind((address, int(port)))
        except OSError as exc:
            fail(f"listening for the model endpoint {address}:{port} failed: {exc.strerror}")
        listener.listen(64)
        listeners.append((listener, path))
    return sniffer, listeners


def become(uid: str, gid: str) -> None:
    """Be the runner's own user again, in a user namespace nested in the one that owns the mounts.

    bubblewrap started this process as root of the trial's user namespace (mapped to the runner's user),
    which is what mounting takes. The agent runs as the runner's uid, and from a namespace of its own it
    could not undo a mount even if it held rights there.
    """
    if _libc.unshare(CLONE_NEWUSER) != 0:
        fail(f"making the agent's user namespace failed: {os.strerror(ctypes.get_errno())}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} 0 1"), ("gid_map", f"{gid} 0 1")):
        with open(f"/proc/self/{name}", "w") as out:
            out.write(text)


def drop_rights() -> None:
    """Drop every capability from every set, and check: the agent must not undo a mount."""
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    if _libc.capset(header, (ctypes.c_uint32 * 6)()) != 0:
        fail(f"dropping capabilities failed: {os.strerror(ctypes.get_errno())}")
    with open("/proc/self/status") as status:
        held = [line.split() for line in status if line.startswith("Cap")]
    if any(int(fields[1], 16) for fields in held):
        fail("capabilities still held after dropping them: " + " ".join(":".join(f) for f in held))


def _port(data: bytes, at: int) -> int:
    return data[at] << 8 | data[at + 1]


class Watcher:
    """The relay of the model endpoints' connections and the log of refused ones, on one poll."""

    def __init__(self, sniffer: _socket.socket | None, listeners: Listeners, log: str, agent: int):
        self.poll = select.poll()
        self.agent = agent
        self.poll.register(agent, select.POLLIN)
        self.log = log
        self.pending: set[tuple[str, int, int]] = set()
        self.logged: set[tuple[str, int]] = set()
        self.sockets: dict[int, _socket.socket] = {}
        self.other: dict[int, _socket.socket] = {}
        self.paths: dict[int, str] = {}
        self.sniffer = sniffer
        for sock in [sniffer] if sniffer is not None else []:
            self.watch(sock)
        for listener, path in listeners:
            self.paths[listener.fileno()] = path
            self.watch(listener)

    def watch(self, sock: _socket.socket) -> None:
        """Wake for what ``sock`` receives."""
        self.sockets[sock.fileno()] = sock
        self.poll.register(sock.fileno(), select.POLLIN)

    def run(self) -> None:
        """Serve until the trial's namespace ends."""
        while True:
            for fd, _ in self.poll.poll():
                if fd == self.agent:  # the agent's process ended: so does the watch (and the sandbox)
                    self.drain()
                    os._exit(0)
                sock = self.sockets.get(fd)
                if sock is None:
                    continue
                if sock is self.sniffer:
                    self.packet(sock)
                elif fd in self.paths:
                    self.accept(sock, self.paths[fd])
                else:
                    self.relay(sock)

    def drain(self) -> None:
        """Read the packets already queued, before the watch ends with the agent.

        The kernel queues a refusal before ``connect`` returns, so on a busy machine the agent's last
        ones may still wait here when its end wakes the watch.
        """
        if self.sniffer is None:
            return
        self.sniffer.setblocking(False)
        while True:
            try:
                self.packet(self.sniffer)
            except BlockingIOError:
                return

    def accept(self, listener: _socket.socket, path: str) -> None:
        """A connection to a model endpoint: carried to the host's relay through the Unix socket."""
        fd, _ = listener._accept()  # type: ignore[attr-defined]  # _socket's own accept: a descriptor
        client = _socket.socket(listener.family, _socket.SOCK_STREAM, 0, fd)
        upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            return
        self.other[client.fileno()], self.other[upstream.fileno()] = upstream, client
        self.watch(client)
        self.watch(upstream)

    def relay(self, sock: _socket.socket) -> None:
        """Copy what arrived to the other side; close both when either ends."""
        other = self.other.get(sock.fileno())
        try:
            data = sock.recv(65536)
            if other is not None and data:
                other.sendall(data)
                return
        except OSError:
            pass
        for end in (sock, other):
            if end is not None and end.fileno() in self.sockets:
                fd = end.fileno()
                self.poll.unregister(fd)
                del self.sockets[fd]
                self.other.pop(fd, None)
                end.close()

    def packet(self, sniffer: _socket.socket) -> None:
        """Note a refused connection: a TCP reset answering a SYN, or an ICMP port unreachable."""
        data, address = sniffer.recvfrom(65536)
        if address[2] != PACKET_OUTGOING:  # the loopback shows each packet twice; take it once
            return
        version = data[0] >> 4 if data else 0
        if version == 4 and len(data) >= 20:
            header, protocol = (data[0] & 0x0F) * 4, data[9]
            source = _socket.inet_ntop(_socket.AF_INET, data[12:16])
            target = _socket.inet_ntop(_socket.AF_INET, data[16:20])
            self.transport(protocol, data[header:], source, target, icmp=1, unreachable=(3, 3))
        elif version == 6 and len(data) >= 40:
            source = _socket.inet_ntop(_socket.AF_INET6, data[8:24])
            target = _socket.inet_ntop(_socket.AF_INET6, data[24:40])
            self.transport(data[6], data[40:], source, target, icmp=58, unreachable=(1, 4))

    def transport(
        self, protocol: int, body: bytes, source: str, target: str, *, icmp: int, unreachable: tuple[int, int]
    ) -> None:
        """The TCP or ICMP part of one packet: remember SYNs, log the refusals that answer them."""
        if protocol == 6 and len(body) >= 14:
            sport, dport, flags = _port(body, 0), _port(body, 2), body[13]
            if flags & TCP_SYN and not flags & TCP_ACK:
                self.pending.add((target, dport, sport))
            elif flags & TCP_SYN:  # accepted: a reset later ends a connection, it refuses none
                self.pending.discard((source, sport, dport))
            elif flags & TCP_RST and (source, sport, dport) in self.pending:
                self.pending.discard((source, sport, dport))
                self.note(source, sport)
        elif protocol == icmp and len(body) >= 8 and (body[0], body[1]) == unreachable:
            inner = body[8:]
            if icmp == 1 and len(inner) >= 20:
                start, family, at = (inner[0] & 0x0F) * 4, _socket.AF_INET, slice(16, 20)
            elif icmp == 58 and len(inner) >= 40:
                start, family, at = 40, _socket.AF_INET6, slice(24, 40)
            else:
                return
            if len(inner) >= start + 4:
                self.note(_socket.inet_ntop(family, inner[at]), _port(inner, start + 2))

    def note(self, host: str, port: int) -> None:
        """One line per refused place, the first time it is refused (``host`` is an address: no quoting)."""
        if (host, port) in self.logged or len(self.logged) >= LOGGED_AT_MOST:
            return
        self.logged.add((host, port))
        with open(self.log, "a") as out:
            out.write(f'{{"host": "{host}", "port": {port}}}\n')


def leave_watcher(sniffer: _socket.socket | None, listeners: Listeners, log: str) -> None:
    """Start the watcher in a grandchild, so the agent has no child of its own to wait for.

    bubblewrap's first process waits for every process of the trial, so the watcher must end with the
    agent: it watches a pidfd of this process, which becomes the agent's when it executes.
    """
    agent = os.pidfd_open(os.getpid())  # closed on exec: the agent never holds it
    if os.fork() == 0:
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                Watcher(sniffer, listeners, log, agent).run()
            finally:
                os._exit(0)
        os._exit(0)
    os.wait()
    os.close(agent)
    if sniffer is not None:
        sniffer.close()
    for listener, _ in listeners:
        listener.close()


def main() -> None:
    """Set up, drop every right, start the watcher, run the agent (see the module docstring)."""
    settings, command = parse(sys.argv[1:])
    set_up_files(settings)
    watched = settings["log"]
    sniffer, listeners = set_up_network(settings) if watched else (None, [])
    for uid, gid in settings["user"]:
        become(uid, gid)
    drop_rights()
    if watched:
        leave_watcher(sniffer, listeners, watched[0][0])
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


if __name__ == "__main__":
    main()
