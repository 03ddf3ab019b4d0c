"""The native Copilot CLI found behind npm's loader, in the real npm install and in hostile trees."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from trialbook.agents.copilot._native import _platform_packages, native_cli


def _package(folder: Path, name: str, **fields: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"name": name, **fields}))
    return folder


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def _loader(modules: Path) -> Path:
    """``node_modules/@github/copilot`` with its loader, and ``.bin/copilot`` linked to it as npm does."""
    copilot = _package(modules / "@github" / "copilot", "@github/copilot", bin={"copilot": "npm-loader.js"})
    _executable(copilot / "npm-loader.js")
    (modules / ".bin").mkdir(exist_ok=True)
    (modules / ".bin" / "copilot").symlink_to("../@github/copilot/npm-loader.js")
    return modules / ".bin" / "copilot"


def _platform(folder: Path, exports: object = "./copilot") -> Path:
    package = _platform_packages()[-1]  # the glibc (or only) build for this machine
    _package(folder / package, package, exports=exports)
    return folder / package


def test_the_pinned_npm_install_starts_its_native_binary(copilot_cli: str) -> None:
    native = Path(native_cli(copilot_cli))
    assert native != Path(copilot_cli).resolve()
    assert native.read_bytes()[:4] == b"\x7fELF"
    # npm links the platform package's own bin (copilot-linux-x64 and the like) beside .bin/copilot.
    own_bin = Path(copilot_cli).parent / _platform_packages()[-1].removeprefix("@github/")
    assert native.resolve() == own_bin.resolve()


def test_a_hoisted_platform_package_is_found(tmp_path: Path) -> None:
    modules = tmp_path / "node_modules"
    bin_link = _loader(modules)
    binary = _executable(_platform(modules) / "copilot")
    assert native_cli(str(bin_link)) == str(binary)
    assert native_cli(str(modules / "@github" / "copilot" / "npm-loader.js")) == str(binary)


def test_a_nested_platform_package_comes_before_a_hoisted_one(tmp_path: Path) -> None:
    modules = tmp_path / "node_modules"
    bin_link = _loader(modules)
    _executable(_platform(modules) / "copilot")
    nested = _executable(_platform(modules / "@github" / "copilot" / "node_modules") / "copilot")
    assert native_cli(str(bin_link)) == str(nested)


@pytest.mark.parametrize(
    "broken",
    ["missing", "not-executable", "no-exports", "exports-a-list", "escapes-the-package"],
)
def test_a_loader_without_a_usable_native_binary_is_started_as_given(tmp_path: Path, broken: str) -> None:
    modules = tmp_path / "node_modules"
    bin_link = _loader(modules)
    outside = _executable(tmp_path / "elsewhere")
    if broken == "not-executable":
        (_platform(modules) / "copilot").write_text("")
    elif broken == "no-exports":
        _executable(_platform(modules, exports=None) / "copilot")
    elif broken == "exports-a-list":
        _executable(_platform(modules, exports=["./copilot"]) / "copilot")
    elif broken == "escapes-the-package":
        _platform(modules, exports=os.path.relpath(outside, modules / _platform_packages()[-1]))
    assert native_cli(str(bin_link)) == str(bin_link)


def test_any_other_program_is_started_as_given(tmp_path: Path) -> None:
    plain = _executable(tmp_path / "copilot")
    assert native_cli(str(plain)) == str(plain)
    # A file named like the loader in another package is not Copilot's.
    other = _package(tmp_path / "node_modules" / "other", "other")
    _executable(other / "npm-loader.js")
    _executable(_platform(tmp_path / "node_modules") / "copilot")
    assert native_cli(str(other / "npm-loader.js")) == str(other / "npm-loader.js")
