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

The watcher ends with the trial's PID namespace.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
from typing import Any

MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
CAPABILITY_VERSION_3 = 0x20080522
ETH_P_ALL, PACKET_OUTGOING = 3, 4
TCP_SYN, TCP_RST, TCP_ACK = 0x02, 0x04, 0x10
LOGGED_AT_MOST = 1000

_libc = ctypes.CDLL(None, use_errno=True)
Listeners = list[tuple[socket.socket, str]]


def fail(what: str) -> None:
    """Stop before the agent starts: nothing half set up may run."""
    sys.stderr.write(f"trialbook isolation: {what}; the trial's command did not start\n")
    sys.stderr.flush()
    os._exit(126)


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    """``mount(2)``, failing the start on any error."""
    fs = fstype.encode() if fstype else None
    options = data.encode() if data else None
    if _libc.mount(source.encode(), target.encode(), fs, flags, options) != 0:
        fail(f"mounting {target} failed: {os.strerror(ctypes.get_errno())}")


def set_up_files(spec: dict[str, Any]) -> None:
    """The overlay layers, then the files bound over others (read-only)."""
    for folder, upper, work in spec["layers"]:
        os.makedirs(upper, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        mount("overlay", folder, "overlay", 0, f"lowerdir={folder},upperdir={upper},workdir={work},userxattr")
    for source, target in spec["binds"]:
        mount(source, target, None, MS_BIND, None)
        mount("none", target, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)


def set_up_network(net: dict[str, Any]) -> tuple[socket.socket | None, Listeners]:
    """Every address local (when ``ip`` is there), the packet socket, and the endpoints' listeners."""
    if net["ip"]:
        for version, everything in (("-4", "0.0.0.0/0"), ("-6", "::/0")):
            command = [net["ip"], version, "route", "add", "local", everything, "dev", "lo"]
            subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    sniffer: socket.socket | None = None
    try:
        sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
        sniffer.bind(("lo", 0))
    except OSError:
        sniffer = None  # the refusals go unrecorded; the network stays closed all the same
    listeners: Listeners = []
    for address, port, path in net["listen"]:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((address, port))
        except OSError as exc:
            fail(f"listening for the model endpoint {address}:{port} failed: {exc.strerror}")
        listener.listen(64)
        listeners.append((listener, path))
    return sniffer, listeners


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


class Watcher:
    """The relay of the model endpoints' connections and the log of refused ones, on one selector."""

    def __init__(self, sniffer: socket.socket | None, listeners: Listeners, log: str) -> None:
        self.selector = selectors.DefaultSelector()
        self.log = log
        self.pending: set[tuple[str, int, int]] = set()
        self.logged: set[tuple[str, int]] = set()
        self.pairs: dict[socket.socket, socket.socket] = {}
        if sniffer is not None:
            self.selector.register(sniffer, selectors.EVENT_READ, self.packet)
        for listener, path in listeners:
            self.selector.register(listener, selectors.EVENT_READ, (self.accept, path))

    def run(self) -> None:
        """Serve until the trial's namespace ends."""
        while True:
            for key, _ in self.selector.select():
                handler = key.data
                if isinstance(handler, tuple):
                    handler[0](key.fileobj, handler[1])
                else:
                    handler(key.fileobj)

    def accept(self, listener: socket.socket, path: str) -> None:
        """A connection to a model endpoint: carried to the host's relay through the Unix socket."""
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            return
        self.pairs[client], self.pairs[upstream] = upstream, client
        self.selector.register(client, selectors.EVENT_READ, self.relay)
        self.selector.register(upstream, selectors.EVENT_READ, self.relay)

    def relay(self, sock: socket.socket) -> None:
        """Copy what arrived to the other side; close both when either ends."""
        other = self.pairs.get(sock)
        try:
            data = sock.recv(65536)
            if other is not None and data:
                other.sendall(data)
                return
        except OSError:
            pass
        for end in (sock, other):
            if end is not None and end in self.pairs:
                self.selector.unregister(end)
                del self.pairs[end]
                end.close()

    def packet(self, sniffer: socket.socket) -> None:
        """Note a refused connection: a TCP reset answering a SYN, or an ICMP port unreachable."""
        data, address = sniffer.recvfrom(65536)
        if address[2] != PACKET_OUTGOING:  # the loopback shows each packet twice; take it once
            return
        version = data[0] >> 4 if data else 0
        if version == 4 and len(data) >= 20:
            header, protocol = (data[0] & 0x0F) * 4, data[9]
            source, target = (
                socket.inet_ntop(socket.AF_INET, data[12:16]),
                socket.inet_ntop(socket.AF_INET, data[16:20]),
            )
            self.transport(protocol, data[header:], source, target, icmp=1, unreachable=(3, 3))
        elif version == 6 and len(data) >= 40:
            protocol = data[6]
            source, target = (
                socket.inet_ntop(socket.AF_INET6, data[8:24]),
                socket.inet_ntop(socket.AF_INET6, data[24:40]),
            )
            self.transport(protocol, data[40:], source, target, icmp=58, unreachable=(1, 4))

    def transport(
        self, protocol: int, body: bytes, source: str, target: str, *, icmp: int, unreachable: tuple[int, int]
    ) -> None:
        """The TCP or ICMP part of one packet: remember SYNs, log the refusals that answer them."""
        if protocol == 6 and len(body) >= 14:
            sport, dport = struct.unpack("!HH", body[:4])
            flags = body[13]
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
                start = (inner[0] & 0x0F) * 4
                target = socket.inet_ntop(socket.AF_INET, inner[16:20])
            elif icmp == 58 and len(inner) >= 40:
                start, target = 40, socket.inet_ntop(socket.AF_INET6, inner[24:40])
            else:
                return
            if len(inner) >= start + 4:
                self.note(target, struct.unpack("!H", inner[start + 2 : start + 4])[0])

    def note(self, host: str, port: int) -> None:
        """One line per refused place, the first time it is refused."""
        if (host, port) in self.logged or len(self.logged) >= LOGGED_AT_MOST:
            return
        self.logged.add((host, port))
        with open(self.log, "a") as out:
            out.write(json.dumps({"host": host, "port": port}) + "\n")


def leave_watcher(
    sniffer: socket.socket | None, listeners: list[tuple[socket.socket, str]], log: str
) -> None:
    """Start the watcher in a grandchild, so the agent has no child of its own to wait for."""
    if sniffer is None and not listeners:
        return
    if os.fork() == 0:
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                Watcher(sniffer, listeners, log).run()
            finally:
                os._exit(0)
        os._exit(0)
    os.wait()
    if sniffer is not None:
        sniffer.close()
    for listener, _ in listeners:
        listener.close()


def main() -> None:
    """Set up, drop every right, start the watcher, run the agent (see the module docstring)."""
    spec, argv = json.loads(sys.argv[1]), sys.argv[2:]
    set_up_files(spec)
    net = spec.get("net")
    sniffer, listeners = set_up_network(net) if net else (None, [])
    drop_rights()
    if net:
        leave_watcher(sniffer, listeners, net["log"])
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


if __name__ == "__main__":
    main()
