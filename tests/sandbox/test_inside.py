"""The trial's first process, in parts: its settings, and which packets on the loopback are refusals."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from trialbook.sandbox import _inside


def _tcp(source: str, target: str, sport: int, dport: int, flags: int) -> bytes:
    header = bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0])
    addresses = bytes(map(int, source.split("."))) + bytes(map(int, target.split(".")))
    return header + addresses + struct.pack("!HHIIBBHHH", sport, dport, 0, 0, 0x50, flags, 0, 0, 0)


def _unreachable(source: str, target: str, port: int) -> bytes:
    inner = _tcp(target, source, 5353, port, 0)[:20] + struct.pack("!HHHH", 5353, port, 8, 0)
    inner = inner[:9] + bytes([17]) + inner[10:]  # a UDP datagram
    outer = bytes([0x45, 0, 0, 56, 0, 0, 0, 0, 64, 1, 0, 0])
    outer += bytes(map(int, source.split("."))) + bytes(map(int, target.split(".")))
    return outer + bytes([3, 3, 0, 0, 0, 0, 0, 0]) + inner


class Sniffer:
    def __init__(self, packets: list[bytes]) -> None:
        self.packets = packets

    def recvfrom(self, size: int) -> tuple[bytes, tuple[str, int, int]]:
        return self.packets.pop(0), ("lo", 0x800, _inside.PACKET_OUTGOING)


def test_a_reset_answering_a_syn_is_a_refusal_and_one_ending_an_accepted_connection_is_not(
    tmp_path: Path,
) -> None:
    log = tmp_path / "network.jsonl"
    watcher = _inside.Watcher(None, [], str(log), os.pidfd_open(os.getpid()))
    syn, ack, rst = _inside.TCP_SYN, _inside.TCP_ACK, _inside.TCP_RST | _inside.TCP_ACK
    packets = [
        _tcp("127.0.0.1", "127.0.0.1", 40000, 4567, syn),
        _tcp("127.0.0.1", "127.0.0.1", 4567, 40000, rst),  # refused
        _tcp("127.0.0.1", "127.0.0.1", 40001, 5555, syn),
        _tcp("127.0.0.1", "127.0.0.1", 5555, 40001, syn | ack),  # accepted
        _tcp("127.0.0.1", "127.0.0.1", 5555, 40001, rst),  # a later reset ends it: no refusal
        _tcp("10.0.0.9", "10.0.0.9", 443, 40002, rst),  # no SYN seen: not ours to call refused
        _unreachable("10.0.0.2", "10.0.0.2", 53),
        _tcp("127.0.0.1", "127.0.0.1", 40003, 4567, syn),
        _tcp("127.0.0.1", "127.0.0.1", 4567, 40003, rst),  # the same place again: noted once
    ]
    sniffer = Sniffer(packets)
    while sniffer.packets:
        watcher.packet(sniffer)  # type: ignore[arg-type]
    lines = log.read_text().splitlines()
    assert lines == ['{"host": "127.0.0.1", "port": 4567}', '{"host": "10.0.0.2", "port": 53}']


def test_settings_are_read_by_kind_until_the_command() -> None:
    args = ["layer", "/etc", "/u", "/w", "bind", "/a", "/b", "log", "/l", "--", "bash", "-c", "x"]
    settings, command = _inside.parse(args)
    assert settings["layer"] == [["/etc", "/u", "/w"]] and settings["bind"] == [["/a", "/b"]]
    assert settings["log"] == [["/l"]] and command == ["bash", "-c", "x"]


@pytest.mark.parametrize("args", [["layer", "/etc", "--", "x"], ["what", "--", "x"], ["log", "/l", "--"]])
def test_unreadable_settings_stop_before_anything_starts(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def stop(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr("os._exit", stop)
    with pytest.raises(SystemExit) as stopped:
        _inside.parse(args)
    assert stopped.value.code == 126
    assert capsys.readouterr().err.startswith("trialbook isolation: ")
