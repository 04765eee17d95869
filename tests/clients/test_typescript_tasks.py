"""2025-11-25's tasks (`tasks/*` of the handshake era) with a real client: the
official TypeScript SDK 1.32 (npm `@modelcontextprotocol/sdk`, pinned in
package.json), the last major version that speaks them (the Python SDK 2.x and
the TypeScript SDK 2.x speak only the 2026-07-28 extension).

typescript_tasks.mjs connects over stdio or Streamable HTTP with strict
capabilities, lists the conformance guest's tools, and runs three tools as
tasks with `client.experimental.tasks.callToolStream`, which creates the task,
polls `tasks/get` and fetches the result with `tasks/result`. The SDK parses
every answer with its 2025-11-25 schemas; this test checks what it saw.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import TOOLHOST

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "typescript_tasks.mjs"
SDK = HERE / "node_modules" / "@modelcontextprotocol" / "sdk"
RELATED = "io.modelcontextprotocol/related-task"


def run_client(*args: str) -> dict:
    if not SDK.exists():
        pytest.fail(f"{SDK} is missing: run `npm ci` in {HERE} (tests/clients/run.sh does)")
    done = subprocess.run(
        ["node", str(SCRIPT), *args], cwd=HERE, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, f"the TypeScript client failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_sdk_runs_tools_as_2025_11_25_tasks(transport, conformance_config, request):
    if transport == "stdio":
        report = run_client("stdio", str(TOOLHOST), str(conformance_config))
    else:
        report = run_client("http", request.getfixturevalue("conformance_url"))

    assert report["taskCapability"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert report["execution"]["slow_compute"] == "optional"
    assert report["execution"]["failing_job"] == "required"
    assert report["execution"]["greet"] is None

    # Created, polled while working, then its result.
    slow = report["slow"]
    assert slow[0]["type"] == "taskCreated" and slow[0]["status"] == "working", slow
    statuses = [m["status"] for m in slow if m["type"] == "taskStatus"]
    assert statuses[-1] == "completed", slow
    result = slow[-1]["result"]
    assert "Computed ts in 1 s." in result["content"][0]["text"], result
    assert result["_meta"][RELATED]["taskId"] == slow[0]["taskId"], result

    # Its question reached the client's elicitation handler, tied to the task.
    confirm = report["confirm"]
    assert confirm[-1]["type"] == "result", confirm
    assert "Deleted b.txt." in confirm[-1]["result"]["content"][0]["text"], confirm
    (question,) = report["questions"]
    assert question["message"] == "Delete b.txt?"
    assert question["meta"][RELATED]["taskId"] == confirm[0]["taskId"], question

    # A tool's error fails its task, which the SDK reports as an error.
    failing = report["failing"]
    assert [m["status"] for m in failing if m["type"] == "taskStatus"][-1] == "failed", failing
    assert failing[-1]["type"] == "error" and "failed" in failing[-1]["error"], failing
