#!/usr/bin/env python3
"""The training run of a profile-guided build (`make pgo`): what an instrumented
toolhost is made to do so that its profile says which code serves calls.

It serves the example tools (the embedded defaults, as `make run` does) and drives
them as clients do, with the standard library only:

- over stdio, a session in each handshake revision (2024-11-05 to 2025-11-25):
  initialize, tools/list, then every example tool called ROUNDS times with
  arguments made from its input schema (some calls fail on purpose: an unknown
  tool, arguments off the schema, the errors plugin);
- over Streamable HTTP, the same calls in 2026-07-28 (stateless, each request on
  its own) and in a 2025-11-25 session;

then stops each server the way an operator does (end of input; SIGTERM), so the
instrumented binary writes its profile. Usage:

    pgo-train.py TOOLHOST [ROUNDS]

The profile goes where the binary was built to write it (`-Cprofile-generate`).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

HANDSHAKE_REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def arguments_for(schema):
    """Arguments a tool accepts, made from its input schema."""
    out = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type")
        if "enum" in prop:
            out[name] = prop["enum"][0]
        elif kind == "string":
            out[name] = "." if name == "path" else "the quick brown fox jumps over the lazy dog"
        elif kind == "integer":
            low, high = prop.get("minimum", 0), prop.get("maximum", 50)
            out[name] = max(low, min(high, 5))
        elif kind == "number":
            out[name] = 3.5
        elif kind == "boolean":
            out[name] = False
    # calc's range wants start below end.
    if {"start", "end"} <= out.keys():
        out["start"], out["end"] = 0, 40
    return out


def calls_of(tools):
    """(name, arguments) of every call of one round, failures included."""
    # The web tools get text where they want a URL, so they fail before any
    # request leaves: this run has no use for the network.
    calls = [(tool["name"], arguments_for(tool.get("inputSchema") or {})) for tool in tools]
    calls.append(("no_such_tool", {}))
    calls.append(("calc_add", {"a": "not a number"}))
    return calls


class Stdio:
    def __init__(self, toolhost, revision):
        self.proc = subprocess.Popen(
            [toolhost, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TOOLHOST_LOG": "warn"},
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "pgo-train", "version": "1"},
        })
        self.notify("notifications/initialized")

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def notify(self, method):
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed stdout during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def close(self):
        self.proc.stdin.close()
        if self.proc.wait(timeout=30) != 0:
            raise SystemExit(f"the stdio server exited with {self.proc.returncode}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, headers):
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream", **headers},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.headers, response.read().decode()


def result_of(text):
    """The JSON-RPC message of a JSON or SSE body."""
    if text.lstrip().startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    return {}


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    toolhost = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    started = time.monotonic()

    calls = 0
    for revision in HANDSHAKE_REVISIONS:
        server = Stdio(toolhost, revision)
        tools = server.request("tools/list", {})["result"]["tools"]
        for _ in range(rounds):
            for name, arguments in calls_of(tools):
                server.request("tools/call", {"name": name, "arguments": arguments})
                calls += 1
            server.request("tools/list", {})
        server.close()

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    http = subprocess.Popen(
        [toolhost, "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "TOOLHOST_LOG": "warn"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the HTTP server did not listen within 60 s")
                time.sleep(0.1)
        modern = {"Mcp-Protocol-Version": "2026-07-28"}
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                             "params": {"_meta": meta}}, {**modern, "Mcp-Method": "tools/list"})
        tools = result_of(body)["result"]["tools"]
        for _ in range(rounds):
            for name, arguments in calls_of(tools):
                post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments, "_meta": meta}},
                     {**modern, "Mcp-Method": "tools/call", "Mcp-Name": name})
                calls += 1

        headers, _ = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "pgo-train", "version": "1"}}}, {})
        session = {"Mcp-Session-Id": headers["Mcp-Session-Id"],
                   "Mcp-Protocol-Version": "2025-11-25"}
        post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        for _ in range(rounds):
            for name, arguments in calls_of(tools):
                post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}}, session)
                calls += 1
    finally:
        http.send_signal(signal.SIGTERM)
        code = http.wait(timeout=30)
    if code != 0:
        raise SystemExit(f"the HTTP server exited with {code}")
    print(f"pgo-train: {calls} calls in {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
