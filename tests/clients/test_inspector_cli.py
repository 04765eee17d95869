"""The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, pinned in
package.json) as a real client of toolhost over stdio, in both protocol eras.

- legacy (2025-11-25, the initialize handshake): the ad-hoc form,
  `mcp-inspector --cli --method M -- ./target/release/toolhost serve --config F`
  (ad-hoc runs negotiate the legacy era unless told otherwise; the `--` keeps
  toolhost's own `--config` away from the Inspector's).
- modern (2026-07-28, stateless): a read-only session file (`--config`) whose
  server entry has `"protocolEra": "modern"`, selected with `--server`.

`--format json` prints one JSON object, `{"result": ...}`, on stdout. The CLI
validates structuredContent against the tool's outputSchema (Ajv) and fails a
call whose result does not conform. Exit codes: 0 ok, 5 the tool returned isError.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFIG, REPO, TOOLHOST, config_of

HERE = Path(__file__).resolve().parent
INSPECTOR = HERE / "node_modules" / ".bin" / "mcp-inspector"
ERAS = ["legacy", "modern"]
EXIT_TOOL_ERROR = 5


@pytest.fixture(scope="module")
def inspector_env(tmp_path_factory) -> dict[str, str]:
    if not INSPECTOR.exists():
        pytest.fail(f"{INSPECTOR} is missing: run `npm ci` in {HERE} (tests/clients/run.sh does)")
    home = tmp_path_factory.mktemp("inspector-home")
    return {
        **os.environ,
        # No keychain here: keep any secret in memory, and every file the CLI might
        # write (catalog, client config) in a throwaway home.
        "HOME": str(home),
        "MCP_INSPECTOR_SECRET_STORE": "memory",
        "NO_COLOR": "1",
    }


def session_file_for(folder: Path, config: Path) -> Path:
    path = folder / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "toolhost": {
                        "command": str(TOOLHOST),
                        "args": ["serve", "--config", str(config)],
                        "cwd": str(REPO),
                        "protocolEra": "modern",
                    }
                }
            },
            indent=2,
        )
    )
    return path


def inspector(era: str, config: Path, session_file: Path, env: dict[str, str]):
    """Runs the Inspector CLI for one method in `era` against toolhost serving `config`;
    returns (exit code, the printed result, a description of the run for assertion
    messages)."""

    def run(*method_args: str) -> tuple[int, dict[str, Any], str]:
        if era == "legacy":
            argv = [
                str(INSPECTOR), "--cli", *method_args, "--format", "json",
                "--", str(TOOLHOST), "serve", "--config", str(config),
            ]  # fmt: skip
        else:
            argv = [
                str(INSPECTOR), "--cli", "--config", str(session_file), "--server", "toolhost",
                *method_args, "--format", "json",
            ]  # fmt: skip
        proc = subprocess.run(
            argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL
        )
        where = f"{' '.join(argv)}\nexit {proc.returncode}\nstdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}"
        try:
            output = json.loads(proc.stdout)
        except ValueError:
            pytest.fail(f"the Inspector printed no JSON object:\n{where}")
        assert "result" in output, where
        return proc.returncode, output["result"], where

    run.era = era  # type: ignore[attr-defined]
    return run


@pytest.fixture(params=ERAS)
def inspect(request, inspector_env, tmp_path_factory):
    """The Inspector CLI against the example tools (`toolhost.default.toml`)."""
    folder = tmp_path_factory.mktemp("inspector-config")
    return inspector(request.param, CONFIG, session_file_for(folder, CONFIG), inspector_env)


@pytest.fixture(params=ERAS)
def inspect_notes(request, inspector_env, notes_config, tmp_path_factory):
    """The Inspector CLI against the `notes` example (prompt, resources)."""
    folder = tmp_path_factory.mktemp("inspector-notes")
    return inspector(request.param, notes_config, session_file_for(folder, notes_config), inspector_env)


CONFORMANCE = REPO / "guest-examples" / "target" / "wasm32-wasip2" / "release" / "conformance.wasm"


@pytest.fixture(scope="module")
def tasks_config(tmp_path_factory) -> Path:
    return config_of(tmp_path_factory.mktemp("inspector-tasks-config"), CONFORMANCE)


@pytest.fixture(params=ERAS)
def inspect_tasks(request, inspector_env, tasks_config, tmp_path_factory):
    """The Inspector CLI against the conformance guest, whose `slow_compute` may run as a task."""
    folder = tmp_path_factory.mktemp("inspector-tasks")
    return inspector(request.param, tasks_config, session_file_for(folder, tasks_config), inspector_env)


def assert_era(result: dict[str, Any], era: str) -> None:
    stamp = (result.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo")
    if era == "modern":
        # 2026-07-28 servers SHOULD stamp serverInfo on results.
        assert stamp is not None and stamp["name"] == "toolhost", result
    else:
        assert stamp is None, result


def test_tools_list(inspect):
    # --strict: report tool-schema portability problems and exit 6 on an error-severity one.
    code, result, where = inspect("--method", "tools/list", "--strict")
    assert code == 0, where
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert {"hello", "add", "range", "divide", "media", "bulk", "legacy_success"} <= set(tools), where
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    }
    if inspect.era == "legacy":
        assert tools["range"]["outputSchema"]["type"] == "object"
        assert tools["range"]["outputSchema"]["properties"]["result"]["type"] == "array"
    else:
        assert tools["range"]["outputSchema"] == {"type": "array", "items": {"type": "integer"}}


def test_call_add(inspect):
    code, result, where = inspect("--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "b=3")
    assert code == 0, where
    assert result["structuredContent"] == {"sum": 5}, where
    assert result.get("isError", False) is False, where
    text = json.loads(result["content"][0]["text"])
    assert text.get("data", text) == {"sum": 5}, where
    assert_era(result, inspect.era)


def test_call_range(inspect):
    code, result, where = inspect(
        "--method", "tools/call", "--tool-name", "range", "--tool-args-json", '{"start": 1, "end": 4}'
    )
    assert code == 0, where
    if inspect.era == "legacy":
        assert result["structuredContent"] == {"result": [1, 2, 3]}, where
    else:
        assert result["structuredContent"] == [1, 2, 3], where
    assert_era(result, inspect.era)


def test_call_divide_by_zero(inspect):
    code, result, where = inspect("--method", "tools/call", "--tool-name", "divide", "--tool-arg", "a=1", "b=0")
    assert code == EXIT_TOOL_ERROR, where
    assert result["isError"] is True, where
    assert "structuredContent" not in result, where
    assert any("b must not be zero" in block.get("text", "") for block in result["content"]), where
    assert_era(result, inspect.era)


def test_prompts_get(inspect_notes):
    code, result, where = inspect_notes(
        "--method", "prompts/get", "--prompt-name", "summarize_note", "--prompt-args", "slug=results"
    )
    assert code == 0, where
    embedded, question = result["messages"]
    assert embedded["content"]["type"] == "resource", where
    assert embedded["content"]["resource"]["uri"] == "notes://note/results", where
    assert embedded["content"]["resource"]["text"].startswith("# Results"), where
    assert question["content"]["text"] == "Summarize the note above in one sentence.", where
    assert_era(result, inspect_notes.era)


def test_resources_read_and_templates(inspect_notes):
    code, result, where = inspect_notes("--method", "resources/read", "--uri", "notes://note/sandbox")
    assert code == 0, where
    (contents,) = result["contents"]
    assert contents["mimeType"] == "text/markdown", where
    assert contents["text"].startswith("# The sandbox"), where
    assert_era(result, inspect_notes.era)
    code, result, where = inspect_notes("--method", "resources/templates/list")
    assert code == 0, where
    assert [t["uriTemplate"] for t in result["resourceTemplates"]] == ["notes://note/{slug}"], where


def test_a_long_call_is_polled_as_a_task(inspect_tasks):
    """In the modern era the Inspector declares the tasks extension: the call becomes
    a task (the server's log, passed through on stderr, says so), which the Inspector
    polls with tasks/get to its end and prints as the call's result. In the legacy
    era it waits for the result."""
    code, result, where = inspect_tasks(
        "--method", "tools/call", "--tool-name", "slow_compute", "--tool-args-json", '{"seconds": 1.5, "label": "inspector"}'
    )
    assert code == 0, where
    assert result["content"][-1]["text"] == "Computed inspector in 1.5 s.", where
    assert result.get("isError") is not True, where
    became_task = "the call became a task" in where
    assert became_task == (inspect_tasks.era == "modern"), where
    assert_era(result, inspect_tasks.era)
