#!/usr/bin/env bash
# The composite action's first step: checks the runner and the inputs before anything is installed.
# Every problem is an ::error naming the input and the fix, and a line in the job summary; then exit
# code 2 (bad input), like trialbook's own. Inputs arrive as TB_* variables, never spliced into this text.
# With good inputs, where trials will run in bubblewrap and the runner lacks it, it installs it or says how.
set -uo pipefail
set -f  # the install input is split into words below, never expanded as globs

problems=()
problem() { problems+=("$1"); }

case "${TB_RUNNER_OS:-}" in
  Linux | macOS) ;;
  *)
    problem "runner: trialbook needs a Linux or macOS runner, and this job runs on ${TB_RUNNER_OS:-an unknown OS}. Use \`runs-on: ubuntu-latest\` (agents run in sandboxes built from POSIX process tools)."
    ;;
esac

# One npm registry package a word: [@scope/]name, optionally @version, tag or range. No paths, URLs or
# git specs (they would run code from outside the registry), nothing that starts like an option.
spec_pattern='^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9.+_~^<>=*-]+)?$'
for spec in ${TB_INSTALL:-}; do
  if ! [[ $spec =~ $spec_pattern ]]; then
    problem "install: \`$spec\` is not an npm package spec. Give registry packages as name@version, separated by spaces, for example \`@anthropic-ai/claude-code@2.1.197 @github/copilot@1.0.102\`."
  fi
done
if [ -n "${TB_INSTALL//[[:space:]]/}" ] && ! command -v npm >/dev/null 2>&1; then
  problem "install: npm is not on this runner. Add \`actions/setup-node\` before trialbook, or install the agent CLIs yourself."
fi

label="${TB_LABEL:-}"
if [ -z "${label//[[:space:]]/}" ] || [ "${#label}" -gt 50 ] || [[ $label == *$'\n'* ]]; then
  problem "label: expected the name of one pull request label (1 to 50 characters on one line), got \`${label//$'\n'/ }\`."
fi

retention="${TB_RETENTION_DAYS:-}"
if [ -n "$retention" ] && ! { [[ $retention =~ ^[0-9]{1,2}$ ]] && [ "$((10#$retention))" -ge 1 ] && [ "$((10#$retention))" -le 90 ]; }; then
  problem "retention-days: expected a whole number of days from 1 to 90 (empty keeps the repository's setting), got \`$retention\`."
fi

# The same rule as `trialbook ci --budget-usd` (a number, 0 or more), checked here so the error names the input.
budget="${TB_BUDGET_USD:-}"
if [ -n "$budget" ] && ! [[ $budget =~ ^([0-9]+(\.[0-9]*)?|\.[0-9]+)$ ]]; then
  problem "budget-usd: expected a number of US dollars, 0 or more (for example \`5\` or \`2.50\`; empty means no cap), got \`${budget//$'\n'/ }\`."
fi

# The same rule as `trialbook publish --comment-header`: the name goes into an HTML comment marker.
header="${TB_COMMENT_HEADER:-}"
header_pattern='^[A-Za-z0-9]([A-Za-z0-9 ._-]{0,62}[A-Za-z0-9._-])?$'
if [ -n "$header" ] && ! [[ $header =~ $header_pattern ]]; then
  problem "comment-header: use 1 to 64 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit (for example \`nightly-evals\`), got \`${header//$'\n'/ }\`."
fi

case "${TB_ISOLATION:-auto}" in
  auto|none|bwrap) ;;
  *) problem "isolation: expected auto, none or bwrap, got \`${TB_ISOLATION//$'\n'/ }\`." ;;
esac

case "${TB_CACHE:-true}" in
  true|false) ;;
  *) problem "cache: expected true or false, got \`${TB_CACHE//$'\n'/ }\`." ;;
esac

results="${TB_RESULTS:-}"
results_given=""
[ -n "${results//[[:space:]]/}" ] && results_given=yes
case "${TB_MODE:-run}" in
  run | unsafe-run-and-publish)
    if [ -n "$results_given" ]; then
      problem "results: only \`mode: publish\` publishes downloaded results folders; this job has \`mode: ${TB_MODE:-run}\`. Add \`mode: publish\` to the publishing job, or remove \`results\`."
    fi
    ;;
  publish)
    if [ -z "$results_given" ]; then
      problem "results: \`mode: publish\` needs the results folders to publish, for example \`\${{ runner.temp }}/results/*/results\` after \`actions/download-artifact\` of the run jobs' artifacts."
    fi
    ;;
  *) problem "mode: expected run, publish or unsafe-run-and-publish, got \`${TB_MODE}\`." ;;
esac

# Trials run in bubblewrap (isolation auto or bwrap): install it where the job may (GitHub's Ubuntu
# runners: apt-get, and root or sudo without a password), else say how before any trial runs.
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
apt_install() { as_root apt-get install -y -qq bubblewrap >/dev/null 2>&1; }
ensure_bubblewrap() {
  local isolation="${TB_ISOLATION:-auto}"
  [ "$isolation" != none ] && [ "${TB_MODE:-run}" != publish ] && [ "${TB_RUNNER_OS:-}" = Linux ] || return 0
  command -v bwrap >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && as_root true >/dev/null 2>&1; then
    # A runner's package lists may be stale: refreshed only when the first try fails.
    if apt_install || { as_root apt-get update -qq >/dev/null 2>&1 && apt_install; }; then
      echo "isolation: installed bubblewrap (apt-get)"
      return 0
    fi
  fi
  local outcome="trials run without isolation"
  [ "$isolation" = bwrap ] && outcome="isolation: bwrap stops the run"
  echo "::warning title=trialbook isolation::bubblewrap is not on this runner and could not be installed (that takes apt-get, and root or sudo without a password). Add a step before trialbook's: \`sudo apt-get install -y bubblewrap\`, and where user namespaces are restricted (Ubuntu 24.04) \`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\`. Until then $outcome."
}

if [ "${#problems[@]}" -eq 0 ]; then
  ensure_bubblewrap
  # The part of the results artifact's name that tells shards apart. GitHub numbers a matrix's jobs in
  # `strategy.job-index` for the workflow, but inside a composite action it reads 0 for every job, so
  # the shard input itself names the artifact. A malformed shard is the run step's error to report.
  shard="${TB_SHARD:-}"
  if [ -z "$shard" ]; then
    part="all"
  elif [[ $shard =~ ^([0-9]+)/([0-9]+)$ ]]; then
    part="shard-${BASH_REMATCH[1]}-of-${BASH_REMATCH[2]}"
  else
    part="shard-unknown"
  fi
  echo "artifact-part=$part" >> "${GITHUB_OUTPUT:-/dev/null}"
  exit 0
fi
{
  echo "## trialbook evals"
  echo
  echo "The action did not start: fix its inputs."
  echo
  for text in "${problems[@]}"; do echo "- $text"; done
} >> "${GITHUB_STEP_SUMMARY:-/dev/null}"
for text in "${problems[@]}"; do
  text="${text//'%'/'%25'}"
  echo "::error title=trialbook input::${text//$'\n'/'%0A'}"
done
exit 2
