#!/usr/bin/env bash
# Installs the agent CLIs of the action's `install` input (checked by check-inputs.sh) into one tool
# folder under the runner's temp folder, puts its bin folder on PATH for the later steps, and points
# COPILOT_CLI_PATH at the Copilot CLI when it is among them (the Copilot SDK reads it, and would
# otherwise download a CLI of its own choosing).
set -euo pipefail
set -f  # the specs are words, never globs

tools="$RUNNER_TEMP/trialbook-tools"
mkdir -p "$tools"
read -r -a specs <<<"${TB_INSTALL//$'\n'/ }"
if [ "${#specs[@]}" -eq 0 ]; then
  exit 0 # only spaces: nothing to install
fi
echo "Installing ${specs[*]} into $tools"
npm install --prefix "$tools" --no-audit --no-fund --no-save --loglevel=error "${specs[@]}"
bin="$tools/node_modules/.bin"
echo "$bin" >> "$GITHUB_PATH"
if [ -x "$bin/copilot" ]; then
  echo "COPILOT_CLI_PATH=$bin/copilot" >> "$GITHUB_ENV"
fi
npm ls --prefix "$tools" --depth=0 || true
