"""2025-11-25's tasks (`tasks/*` of the handshake era) with real clients: the
last major versions of the official SDKs that speak them, the TypeScript SDK
1.32 (npm `@modelcontextprotocol/sdk`, pinned in package.json) and the Python
SDK 1.30 (PyPI `mcp`, in its own venv from requirements-v1.txt). The 2.x SDKs
of the other tests speak only the 2026-07-28 extension.

Each client runs as a script (typescript_tasks.mjs, python_v1_tasks.py) over
stdio or Streamable HTTP against the conformance guest and prints what it saw:
the `tasks` capability and each tool's `execution`, then tools run as tasks,
polled with `tasks/get` and fetched with `tasks/result`: `slow_compute` to its
result, `confirm_delete` whose question reaches the client's elicitation
handler while `tasks/result` waits, and `failing_job`, a task that fails. The
SDKs parse every answer with their 2025-11-25 schemas; this test checks what
they saw.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import TOOLHOST

HERE = Path(__file__).resolve().parent
RELATED = "io.modelcontextprotocol/related-task"
TYPESCRIPT = (["node", str(HERE / "typescript_tasks.mjs")], HERE / "node_modules" / "@modelcontextprotocol" / "sdk")
PYTHON_V1 = ([str(HERE / ".venv-v1" / "bin" / "python"), str(HERE / "python_v1_tasks.py")], HERE / ".venv-v1")
TASK_CAPABILITY = {"cancel": {}, "requests": {"tools": {"call": {}}}}


def run_client(client: tuple[list[str], Path], *args: str) -> dict:
    command, installed = client
    if not installed.exists():
        pytest.fail(f"{installed} is missing: tests/clients/run.sh installs it")
    done = subprocess.run([*command, *args], cwd=HERE, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"the client failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def connection(transport: str, config: Path, request) -> list[str]:
    if transport == "stdio":
        return ["stdio", str(TOOLHOST), str(config)]
    return ["http", request.getfixturevalue("conformance_url")]


def check_listing(report: dict, transport: str) -> None:
    # `tasks/list` is offered to a caller the server tells from others: the one
    # stdio client, not the open caller of this loopback server without tokens.
    listing = {"list": {}} if transport == "stdio" else {}
    assert report["taskCapability"] == {**TASK_CAPABILITY, **listing}
    assert report["execution"]["slow_compute"] == "optional"
    assert report["execution"]["failing_job"] == "required"
    assert report["execution"]["greet"] is None


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_sdk_runs_tools_as_2025_11_25_tasks(transport, conformance_config, request):
    report = run_client(TYPESCRIPT, *connection(transport, conformance_config, request))
    check_listing(report, transport)

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


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_python_sdk_1_runs_tools_as_2025_11_25_tasks(transport, conformance_config, request):
    report = run_client(PYTHON_V1, *connection(transport, conformance_config, request))
    assert report["protocolVersion"] == "2025-11-25"
    check_listing(report, transport)

    slow = report["slow"]
    assert slow["created"] == "working" and slow["statuses"][-1] == "completed", slow
    assert "Computed py in 1 s." in slow["result"]["content"][-1]["text"], slow
    assert slow["result"]["_meta"][RELATED]["taskId"] == slow["taskId"], slow

    # Polled to `input_required`; `tasks/result` then carried the question.
    confirm = report["confirm"]
    assert confirm["statuses"][-1] == "input_required", confirm
    assert confirm["final"] == "completed", confirm
    assert "Deleted c.txt." in confirm["result"]["content"][-1]["text"], confirm
    (question,) = report["questions"]
    assert question["message"] == "Delete c.txt?"
    assert question["meta"][RELATED]["taskId"] == confirm["taskId"], question

    # `failed`, with a message, and `tasks/result` still returns the result.
    failing = report["failing"]
    assert failing["final"] == "failed" and failing["statusMessage"], failing
    assert failing["result"]["isError"] is True, failing

    assert report["cancelled"] == "cancelled"
    if transport == "stdio":
        # Every task of the caller, its pages followed (other tests' tasks of
        # the same open caller share the store).
        ran = {report[name]["taskId"] for name in ("slow", "confirm", "failing")}
        assert ran <= set(report["listed"]), report["listed"]
        assert len(report["listed"]) == len(set(report["listed"])), "no task twice"
    else:
        assert "listed" not in report
