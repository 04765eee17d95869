"""The official Python MCP SDK (PyPI `mcp` 2.x) against tasks: the conformance
guest's `slow_compute` and `failing_job`, which its plugin says may (and must) run
as tasks.

In `mode="2026-07-28"` the client declares the `io.modelcontextprotocol/tasks`
extension through the SDK's own extension interface (SEP-2133): a
`ClientExtension` claims the `resultType: "task"` result and resolves it by
polling `tasks/get` through the SDK's session until the task ends, so
`Client.call_tool` gives back the tool's result as for any call. In
`mode="legacy"` (2025-11-25) this SDK speaks no tasks (2.x dropped that
revision's `tasks/*`; test_handshake_tasks.py drives them with the
TypeScript and Python SDKs 1.x): the same call answers while it waits, and a tool that runs
only as a task is refused with `-32601`, as 2025-11-25 says.
Every test runs over stdio and Streamable HTTP. The SDK parses each result into
the revision's types (the task's inlined result into `CallToolResult`), so each
answer below is also that check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from conftest import MODERN, connector
from mcp import MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"


class CreatedTask(types.Result):
    """A `CreateTaskResult`: the task the server made of a call."""

    result_type: Literal["task"]
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class TaskRef(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskRef, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskRef
    name_param = "taskId"


class TaskState(types.Result):
    """What `tasks/get` says of a task: its status, and its result or error once it ended."""

    result_type: Literal["complete"]
    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    result: types.CallToolResult | None = None
    error: dict[str, Any] | None = None


class Tasks(ClientExtension):
    """The tasks extension, client side: polls a task to its end."""

    identifier = TASKS

    def __init__(self) -> None:
        self.created: list[CreatedTask] = []
        self.statuses: list[str] = []

    def claims(self):
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._poll)]

    async def _poll(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        self.created.append(created)
        with anyio.fail_after(30):
            while True:
                state = await ctx.session.send_request(GetTask(params=TaskRef(task_id=created.task_id)), TaskState)
                assert state.task_id == created.task_id
                self.statuses.append(state.status)
                if state.status in ("completed", "failed", "cancelled"):
                    break
                await anyio.sleep((created.poll_interval_ms or 500) / 1000)
        assert state.status == "completed", state
        assert state.result is not None and state.error is None, state
        return state.result


@pytest.fixture
def connect(transport: str, mode: str, conformance_config: Path, request):
    return connector(transport, mode, conformance_config, lambda: request.getfixturevalue("conformance_url"))


async def test_a_long_call_is_polled_to_completion_as_a_task(connect, mode):
    tasks = Tasks()
    async with connect(extensions=[tasks]) as client:
        result = await client.call_tool("slow_compute", {"seconds": 1.5, "label": "python"})
    assert isinstance(result, types.CallToolResult)
    assert result.is_error is not True
    # Compat mode (the default): the text block is the legacy envelope of the parts.
    assert "Computed python in 1.5 s." in result.content[0].text
    if mode == MODERN:
        (created,) = tasks.created
        assert created.status == "working"
        assert created.ttl_ms and created.ttl_ms > 0
        assert tasks.statuses[0] == "working" and tasks.statuses[-1] == "completed", tasks.statuses
    else:
        # The 2025-11-25 client speaks no tasks: it waited for the result.
        assert tasks.created == []


async def test_a_tool_that_runs_only_as_a_task(connect, mode):
    tasks = Tasks()
    async with connect(extensions=[tasks]) as client:
        if mode == MODERN:
            result = await client.call_tool("failing_job", {})
            assert result.is_error is True
            assert len(tasks.created) == 1
        else:
            # It negotiates 2025-11-25, whose task-only tools refuse a call
            # that is not a task as a method that does not exist.
            with pytest.raises(MCPError) as refused:
                await client.call_tool("failing_job", {})
            assert refused.value.code == -32601
