#!/usr/bin/env bash
# Runs the official MCP conformance suite against `toolhost serve --http` with the
# conformance guest: 0.1.16 at 2025-11-25 and 0.2.0-alpha.12 (--suite all) at
# 2026-07-28, each with its expected-failures file, and 0.2.0-alpha.12's
# scenarios of the tasks extension, which --suite all leaves out, by name. The per-check JSON is kept in
# target/conformance/. Needs Node 22, which npx brings from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/conformance
rm -rf "$out" && mkdir -p "$out"
# The watched plugin directory: written only by the watcher below, never by a guest.
plugins=target/conformance-plugins
rm -rf "$plugins" && mkdir -p "$plugins"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
./target/release/toolhost serve --http "127.0.0.1:$port" --config tests/conformance/toolhost.toml 2>"$out/server.log" &
server=$!
# test_trigger_tool_change: the guest logs a fixed line (TRIGGER_MARKER in
# guest-examples/conformance/src/lib.rs); this watcher, outside the sandbox, sees it
# in the server's log and writes into the watched plugin directory, as an operator
# would. It ends with the server.
# test_trigger_prompt_change logs another line; the watcher then adds the notes
# example plugin (prompts, resources) to the directory, or takes it away again.
python3 - "$out/server.log" "$plugins/trigger.toml" "$server" \
    guest-examples/target/wasm32-wasip2/release/notes.wasm "$plugins/notes.wasm" <<'WATCH' &
import os, shutil, sys, time
log, trigger, server = sys.argv[1], sys.argv[2], int(sys.argv[3])
notes, notes_copy = sys.argv[4], sys.argv[5]
marker = b"toolhost-conformance: please touch the plugin directory"
prompt_marker = b"toolhost-conformance: please add or remove the plugin with prompts"
offset, pending = 0, b""
while True:
    try:
        os.kill(server, 0)
    except OSError:
        break
    with open(log, "rb") as f:
        f.seek(offset)
        chunk = f.read()
        offset = f.tell()
    lines = (pending + chunk).split(b"\n")
    pending = lines.pop()
    if any(marker in line and b"test_trigger_tool_change" in line for line in lines):
        with open(trigger, "w") as f:
            f.write(f"# touched at {time.time_ns()}\n")
    if any(prompt_marker in line and b"test_trigger_prompt_change" in line for line in lines):
        if os.path.exists(notes_copy):
            os.remove(notes_copy)
        else:
            # Written under another name, then renamed: the host loads whole files.
            shutil.copy(notes, notes_copy + ".part")
            os.rename(notes_copy + ".part", notes_copy)
    time.sleep(0.05)
WATCH
watcher=$!
trap 'kill $server $watcher 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break
  sleep 0.1
done
url="http://127.0.0.1:$port/mcp"
suite() { npx --yes -p node@22 -p "@modelcontextprotocol/conformance@$1" -- conformance server --url "$url" "${@:2}"; }
status=0
echo "== conformance 0.1.16, 2025-11-25"
suite 0.1.16 -o "$out/2025-11-25" --expected-failures tests/conformance/expected-failures-2025-11-25.yml || status=1
echo "== conformance 0.2.0-alpha.12, 2026-07-28, --suite all"
suite 0.2.0-alpha.12 --suite all --spec-version 2026-07-28 -o "$out/2026-07-28" --expected-failures tests/conformance/expected-failures-2026-07-28.yml || status=1
# Extension scenarios are not on the spec timeline: run without --spec-version.
echo "== conformance 0.2.0-alpha.12, the io.modelcontextprotocol/tasks extension"
for scenario in tasks-lifecycle tasks-capability-negotiation tasks-wire-fields \
    tasks-request-state-removal tasks-mrtr-input tasks-request-headers \
    tasks-dispatch-and-envelope tasks-status-notifications tasks-required-task-error \
    tasks-mrtr-composition; do
  suite 0.2.0-alpha.12 --scenario "$scenario" -o "$out/tasks" || status=1
done
exit $status
