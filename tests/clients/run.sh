#!/usr/bin/env bash
# Real MCP clients against toolhost: the official Python SDK (PyPI `mcp` 2.x, over
# stdio and Streamable HTTP, legacy and 2026-07-28 modes), the MCP Inspector CLI
# (npm `@modelcontextprotocol/inspector`, stdio, both eras) and, for 2025-11-25's
# tasks, the TypeScript and Python SDK 1.x clients (npm `@modelcontextprotocol/sdk`,
# PyPI `mcp` 1.30 in tests/clients/.venv-v1).
#
# Needs the release host and the example tools built first:
#   cargo build --release && make guests
# Installs what it needs on first use (and again when requirements.txt or
# package-lock.json change, or an install is incomplete): a venv in
# tests/clients/.venv, and node_modules by `npm ci`.
# Runs from the repository root; pytest's summary is the last line printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=tests/clients
venv=$dir/.venv

digest() { sha256sum "$1" | cut -d' ' -f1; }

want=$(digest "$dir/requirements.txt")
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ] ||
  ! "$venv/bin/python" -c 'import mcp, pytest' 2>/dev/null; then
  echo "setting up $venv" >&2
  ${PYTHON:-python3} -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements.txt"
  echo "$want" >"$venv/.requirements.sha256"
fi

# The Python SDK 1.x, for 2025-11-25's tasks (test_handshake_tasks.py).
want=$(digest "$dir/requirements-v1.txt")
if [ ! -x "$venv-v1/bin/python" ] || [ "$(cat "$venv-v1/.requirements.sha256" 2>/dev/null)" != "$want" ] ||
  ! "$venv-v1/bin/python" -c 'import mcp' 2>/dev/null; then
  echo "setting up $venv-v1" >&2
  ${PYTHON:-python3} -m venv --clear "$venv-v1"
  "$venv-v1/bin/pip" install --quiet --disable-pip-version-check -r "$dir/requirements-v1.txt"
  echo "$want" >"$venv-v1/.requirements.sha256"
fi

want=$(digest "$dir/package-lock.json")
if [ ! -x "$dir/node_modules/.bin/mcp-inspector" ] || [ "$(cat "$dir/node_modules/.lock.sha256" 2>/dev/null)" != "$want" ]; then
  echo "npm ci in $dir" >&2
  # The Inspector declares Node >= 22 but its CLI runs on the machine's Node 20;
  # --loglevel=error keeps npm's engine warnings out of the log.
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$dir/node_modules/.lock.sha256"
fi

exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$dir/test_python_client.py" "$dir/test_python_offers.py" "$dir/test_python_tasks.py" "$dir/test_handshake_tasks.py" "$dir/test_oauth.py" "$dir/test_inspector_cli.py" "$@"
