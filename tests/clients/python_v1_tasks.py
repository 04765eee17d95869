"""The official Python SDK 1.x client (PyPI `mcp` 1.30, the last major version
that speaks 2025-11-25's tasks) against toolhost serving the conformance
guest: run by test_handshake_tasks.py in its own venv (tests/clients/.venv-v1,
from requirements-v1.txt), since the 2.x SDK of the other tests dropped them.

    python python_v1_tasks.py stdio <toolhost> <config>
    python python_v1_tasks.py http <url>

It negotiates 2025-11-25, lists the tools, and runs tools as tasks with
`session.experimental`: `call_tool_as_task`, `poll_task` to the end,
`get_task_result` (which, for `confirm_delete`, waits while the tool's question
reaches the elicitation callback), `cancel_task`, and `list_tasks` where the
server offers it. The SDK parses every
answer into its 2025-11-25 types. One JSON object on stdout says what it saw.
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext

# 1.30 marks its tasks API deprecated: 2.x dropped 2025-11-25's tasks.
warnings.simplefilter("ignore", DeprecationWarning)
questions: list[dict[str, Any]] = []


async def answer(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    meta = params.meta.model_dump(by_alias=True) if params.meta else {}
    questions.append({"message": params.message, "meta": meta})
    return types.ElicitResult(action="accept", content={"confirm": True})


async def run_task(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    created = await session.experimental.call_tool_as_task(name, arguments)
    task_id = created.task.taskId
    statuses = []
    async for task in session.experimental.poll_task(task_id):
        statuses.append(task.status)
        if task.status == "input_required":
            break
    result = await session.experimental.get_task_result(task_id, types.CallToolResult)
    final = await session.experimental.get_task(task_id)
    return {
        "taskId": task_id,
        "created": created.task.status,
        "statuses": statuses,
        "final": final.status,
        "statusMessage": final.statusMessage,
        "result": result.model_dump(by_alias=True, exclude_none=True, mode="json"),
    }


async def exercise(session: ClientSession) -> dict[str, Any]:
    init = await session.initialize()
    report: dict[str, Any] = {
        "protocolVersion": init.protocolVersion,
        "taskCapability": init.capabilities.tasks.model_dump(by_alias=True, exclude_none=True)
        if init.capabilities.tasks
        else None,
    }
    tools = (await session.list_tools()).tools
    report["execution"] = {
        tool.name: tool.execution.taskSupport if tool.execution else None for tool in tools
    }
    report["slow"] = await run_task(session, "slow_compute", {"seconds": 1, "label": "py"})
    report["confirm"] = await run_task(session, "confirm_delete", {"filename": "c.txt"})
    report["failing"] = await run_task(session, "failing_job", {})
    long = await session.experimental.call_tool_as_task("slow_compute", {"seconds": 30, "label": "x"})
    cancelled = await session.experimental.cancel_task(long.task.taskId)
    report["cancelled"] = cancelled.status
    if init.capabilities.tasks and init.capabilities.tasks.list:
        listed, cursor = [], None
        while True:
            page = await session.experimental.list_tasks(cursor)
            listed += [task.taskId for task in page.tasks]
            if not page.nextCursor:
                break
            cursor = page.nextCursor
        report["listed"] = listed
    report["questions"] = questions
    return report


async def main() -> None:
    kind, *rest = sys.argv[1:]
    if kind == "stdio":
        server = StdioServerParameters(command=rest[0], args=["serve", "--config", rest[1]])
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write, elicitation_callback=answer) as session:
                report = await exercise(session)
    else:
        async with streamablehttp_client(rest[0]) as (read, write, _):
            async with ClientSession(read, write, elicitation_callback=answer) as session:
                report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)
