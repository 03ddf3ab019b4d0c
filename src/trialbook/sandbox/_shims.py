"""PATH shims: small bash scripts that record every call of a binary in the trial's call log.

A shim runs once per call, so it must start fast: bash with only builtins on the hot path costs about a
tenth of a Python interpreter start. Everything it depends on (the log, the original ``PATH``, bash and
flock) is fixed into the script when the sandbox is made, so an agent that scrubs its environment or
shims ``date`` still gets its calls logged, each in its own trial's log.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["ShimConfig", "ShimMode", "bash_path", "shim_name_problem", "write_shim"]

ShimMode = Literal["stub", "passthrough"]

_NAME_MAX_BYTES = 255  # the longest file name Linux and macOS file systems take


def shim_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a shim (a file in the shim folder named like a command), or ``None``.

    The eval loader and :class:`ShimConfig` share this check, so a name ``validate`` accepts is one
    the sandbox can create.
    """
    if not name:
        return "the name is empty"
    if name in {".", ".."}:
        return f"{name!r} names a folder, not a command"
    if "/" in name:
        return f"{name!r} holds a '/'; shims replace commands looked up on PATH, so give a bare name"
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F for char in name):
        return f"{name!r} holds whitespace or a control character"
    if len(name.encode("utf-8", "surrogatepass")) > _NAME_MAX_BYTES:
        return f"the name is longer than {_NAME_MAX_BYTES} bytes"
    return None


@dataclass(frozen=True)
class ShimConfig:
    """One shimmed binary and what its shim does after recording a call.

    ``stub`` runs ``script`` instead of the binary (nothing when ``None``); ``passthrough`` runs the real
    binary found on the original ``PATH``.
    """

    name: str
    mode: ShimMode
    script: str | None = None

    def __post_init__(self) -> None:
        if (problem := shim_name_problem(self.name)) is not None:
            raise ValueError(f"shim name: {problem}; give a bare command name such as 'npm'")
        if self.mode not in ("stub", "passthrough"):
            raise ValueError(f"shim {self.name!r}: mode must be 'stub' or 'passthrough', not {self.mode!r}")
        if self.mode == "passthrough" and self.script is not None:
            raise ValueError(f"shim {self.name!r}: passthrough runs the real binary; it takes no script")


# The JSON escaper runs in the C locale so that [[:cntrl:]] and ${#s} mean bytes; UTF-8 passes through
# untouched. bash's ${s//x/y} costs time quadratic in the number of matches, so long strings are escaped in
# 512-byte chunks (each chunk's cost is bounded, the whole is linear) and joined once with printf. Which
# other control bytes (rare) occur is found once per string; only those are replaced in each chunk.
_TEMPLATE = r"""#!{bash} -p
# trialbook shim for `{name_raw}` ({mode}): appends one JSON line per call to this trial's call log.
# Generated when the sandbox was made; every path below is fixed so a scrubbed environment still logs.
_tb_name={name}
_tb_mode={mode}
_tb_log={log}
_tb_self={self_path}
_tb_self_dir={shim_dir}
_tb_path={path}
_tb_flock={flock}
_tb_bash={bash_q}
_tb_script={script}
_tb_covered=({covered})

_tb_start=$EPOCHREALTIME
_tb_via=$0
_tb_cwd=$PWD
_tb_args=("$@")
_tb_done=
_tb_ctl=()
_tb_hex=()
_tb_found=()

_tb_esc() {{
  local s=$1 i
  s=${{s//\\/\\\\}}
  s=${{s//\"/\\\"}}
  s=${{s//$'\n'/\\n}}
  s=${{s//$'\t'/\\t}}
  s=${{s//$'\r'/\\r}}
  for i in "${{_tb_found[@]}}"; do s=${{s//"${{_tb_ctl[i]}}"/"${{_tb_hex[i]}}"}}; done
  _tb_chunk=$s
}}

_tb_str() {{
  local LC_ALL=C
  local s=$1 i n c h
  _tb_found=()
  if [[ $s == *[[:cntrl:]]* ]]; then
    if [[ -z ${{_tb_ctl[1]-}} ]]; then
      for ((i = 1; i < 32; i++)); do
        printf -v h %02x "$i"; printf -v c "\\x$h"; _tb_ctl[i]=$c; _tb_hex[i]="\\u00$h"
      done
      _tb_ctl[127]=$'\x7f'; _tb_hex[127]='\u007f'
      unset '_tb_ctl[9]' '_tb_ctl[10]' '_tb_ctl[13]'
    fi
    for i in "${{!_tb_ctl[@]}}"; do [[ $s == *"${{_tb_ctl[i]}}"* ]] && _tb_found+=("$i"); done
  fi
  n=${{#s}}
  if ((n <= 512)); then
    _tb_esc "$s"
    _tb_json=\"$_tb_chunk\"
    return
  fi
  local parts=()
  for ((i = 0; i < n; i += 512)); do
    _tb_esc "${{s:i:512}}"
    parts+=("$_tb_chunk")
  done
  printf -v _tb_json '%s' "${{parts[@]}}"
  _tb_json=\"$_tb_json\"
}}

_tb_record() {{
  [[ -n $_tb_done ]] && return
  _tb_done=1
  local end=$EPOCHREALTIME a args cwd via err=null line parts=()
  local d=$(( ${{end//[.,]/}} - ${{_tb_start//[.,]/}} ))
  _tb_str "$_tb_name"; parts=("$_tb_json")
  for a in "${{_tb_args[@]}}"; do _tb_str "$a"; parts+=("$_tb_json"); done
  printf -v args ',%s' "${{parts[@]}}"
  args=${{args#,}}
  _tb_str "$_tb_cwd"; cwd=$_tb_json
  _tb_str "$_tb_via"; via=$_tb_json
  if [[ -n $2 ]]; then _tb_str "$2"; err=$_tb_json; fi
  printf -v line '{{"argv":[%s],"cwd":%s,"exit_code":%s,"started_at":%s,' \
    "$args" "$cwd" "$1" "${{_tb_start/,/.}}"
  printf -v line '%s"duration_ms":%d.%03d,"error":%s,"mode":"%s","path":%s}}' \
    "$line" $((d / 1000)) $((d % 1000)) "$err" "$_tb_mode" "$via"
  {{
    if [[ -n $_tb_flock ]]; then "$_tb_flock" -x 9; fi
    printf '%s\n' "$line" >&9
  }} 9>>"$_tb_log"
}}

_tb_on_signal() {{
  _tb_record null "the call was stopped by SIG$1 before it finished"
  trap - "$1"
  kill -s "$1" $$
}}
trap '_tb_on_signal TERM' TERM
trap '_tb_on_signal INT' INT
trap '_tb_on_signal HUP' HUP

if [[ $_tb_mode == stub ]]; then
  _tb_rc=0
  if [[ -n $_tb_script ]]; then
    "$_tb_bash" -c "$_tb_script" "$_tb_name" "$@"
    _tb_rc=$?
  fi
else
  _tb_real=
  set -f
  IFS=:
  for _tb_d in $_tb_path; do
    [[ -z $_tb_d || $_tb_d == "$_tb_self_dir" ]] && continue
    if [[ -f $_tb_d/$_tb_name && -x $_tb_d/$_tb_name && ! $_tb_d/$_tb_name -ef $_tb_self ]]; then
      _tb_real=$_tb_d/$_tb_name
      break
    fi
  done
  unset IFS
  set +f
  # Under isolation every copy on PATH is this shim; the real binary is in the trial's own view of it.
  if [[ -z $_tb_real ]]; then
    for _tb_d in "${{_tb_covered[@]}}"; do
      if [[ -f $_tb_d && -x $_tb_d ]]; then _tb_real=$_tb_d; break; fi
    done
  fi
  if [[ -z $_tb_real ]]; then
    printf 'trialbook shim: %s: not found on PATH; the passthrough shim looked in %s\n' \
      "$_tb_name" "$_tb_path" >&2
    _tb_record 127 "passthrough: '$_tb_name' not found on PATH (outside the shim folder)"
    exit 127
  fi
  "$_tb_real" "$@"
  _tb_rc=$?
fi
_tb_record "$_tb_rc" ""
exit "$_tb_rc"
"""


def bash_path() -> str:
    """The absolute path of bash, found once per call without the sandbox PATH."""
    # The shebang cannot search PATH, and a shimmed `bash` must not be picked up by the shim itself.
    for candidate in ("/bin/bash", "/usr/bin/bash"):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("bash")
    if found is None:
        raise RuntimeError("trialbook's PATH shims need bash; install it")
    return found


def write_shim(
    config: ShimConfig,
    *,
    shim_dir: Path,
    call_log: Path,
    original_path: str,
    covered_real: Sequence[Path] = (),
) -> Path:
    """Write the executable shim for ``config`` into ``shim_dir`` and return its path.

    ``original_path`` is the ``PATH`` a passthrough shim searches for the real binary; the shim folder
    itself is skipped there even when it appears. ``covered_real`` is where a passthrough shim looks for the
    real binary when isolation covered every copy on ``PATH`` with the shim (see ``_covers``).
    """
    bash = bash_path()
    flock = shutil.which("flock") or ""
    target = shim_dir / config.name
    text = _TEMPLATE.format(
        bash=bash,
        bash_q=shlex.quote(bash),
        name_raw=config.name.replace("\n", " "),
        name=shlex.quote(config.name),
        mode=config.mode,
        log=shlex.quote(str(call_log)),
        self_path=shlex.quote(str(target)),
        shim_dir=shlex.quote(str(shim_dir)),
        path=shlex.quote(original_path),
        flock=shlex.quote(flock),
        script=shlex.quote(config.script or ""),
        covered=" ".join(shlex.quote(str(path)) for path in covered_real),
    )
    target.write_text(text, encoding="utf-8")
    target.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return target
