"""The official Python MCP SDK (PyPI `mcp` 2.x) as a real client of toolhost.

Every test runs over stdio and over Streamable HTTP, in `mode="legacy"` (the
initialize handshake, offering 2025-11-25) and `mode="2026-07-28"` (stateless).
The SDK validates every result against the negotiated revision's schema and,
for a tool with an outputSchema, validates structuredContent against it (a
mismatch raises), so each successful call below is also that check.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
import pytest
from conftest import CONFIG, LEGACY, MODERN, connector
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio

EXAMPLE_TOOLS = {
    "hello",
    "add",
    "range",
    "divide",
    "read_file",
    "list_dir",
    "media",
    "bulk",
    "fail",
    "wrong_shape",
    "needs_privilege",
    "legacy_success",
    "legacy_error_string",
    "legacy_error_object",
    "legacy_dry_run",
    "legacy_plain",
}

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgaPj/HwAEggJ/59habAAAAABJRU5ErkJggg=="


@pytest.fixture
def connect(transport: str, mode: str, request):
    """An async context manager giving a connected `Client` for this transport and mode."""
    return connector(transport, mode, CONFIG, lambda: request.getfixturevalue("http_url"))


# ---------------------------------------------------------------- helpers


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def json_texts(result: types.CallToolResult) -> list[Any]:
    """The text blocks that parse as JSON."""
    out = []
    for text in texts(result):
        try:
            out.append(json.loads(text))
        except ValueError:
            pass
    return out


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    """The error a failed call reports in its text (the compat `{"success": false, ..}` block,
    or the plain text of spec mode): message and code."""
    assert result.is_error is True, result
    assert result.structured_content is None, result
    for value in json_texts(result):
        if isinstance(value, dict) and value.get("success") is False:
            return {"message": value["error"], "code": value.get("_meta", {}).get("errorCode")}
    return {"message": "\n".join(texts(result)), "code": None}


def assert_ok(result: types.CallToolResult, mode: str) -> None:
    assert result.is_error is False, result
    assert result.result_type == "complete"
    if mode == MODERN:
        # 2026-07-28 servers SHOULD stamp serverInfo on results.
        assert result.meta is not None
        assert result.meta.get("io.modelcontextprotocol/serverInfo", {}).get("name") == "toolhost"


# ---------------------------------------------------------------- tools/list


async def test_list_tools(connect, mode):
    async with connect() as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert EXAMPLE_TOOLS <= set(tools), sorted(tools)
    assert tools["add"].output_schema == {
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    }
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["hello"].title == "Hello"
    assert tools["hello"].annotations is not None and tools["hello"].annotations.read_only_hint is True
    list_schema = tools["range"].output_schema
    if mode == LEGACY:
        # Up to 2025-11-25 an outputSchema's root must be an object: the list is wrapped.
        assert list_schema == {
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
            "required": ["result"],
        }
    else:
        assert list_schema == {"type": "array", "items": {"type": "integer"}}
    assert tools["media"].output_schema is None


# ---------------------------------------------------------------- tools/call


async def test_hello(connect, mode):
    async with connect() as client:
        result = await client.call_tool("hello", {"name": "Ada"})
    assert_ok(result, mode)
    assert "Hello, Ada!" in texts(result)
    assert result.structured_content is None


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_log_lines_and_progress_arrive_before_the_result(connect, mode):
    """A call's log lines and progress reach the client while the call runs, so
    they are all in by the time its result is: over stdio, on 2026-07-28's
    per-request streams, and in a handshake-era HTTP session, where they travel
    on the call's own response stream, not the session's GET stream."""
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    options: dict[str, Any] = {"logging_callback": on_log}
    if mode == MODERN:
        options["log_level"] = "info"
    async with connect(**options) as client:
        if mode == LEGACY:
            await client.set_logging_level("info")
        result = await client.call_tool("hello", {"name": "Ada"}, progress_callback=on_progress)
        seen = [(log.level, log.data) for log in logs]
        assert_ok(result, mode)
        assert seen == [("info", "greeting Ada")], seen
        assert progress == [1.0], progress


async def test_add_structured(connect, mode):
    async with connect() as client:
        # call_tool lists the tools first if it has not, then validates structuredContent
        # against add's outputSchema: a non-conforming result would raise here.
        result = await client.call_tool("add", {"a": 2, "b": 3.5})
        # The check is live: the same validator rejects a result that breaks add's schema.
        forged = types.CallToolResult(content=[], structured_content={"sum": "five"})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await client.session.validate_tool_result("add", forged)
    assert_ok(result, mode)
    assert result.structured_content == {"sum": 5.5}
    # The same JSON in a text block (the compat envelope carries it as `data`).
    assert any(v == {"sum": 5.5} or (isinstance(v, dict) and v.get("data") == {"sum": 5.5}) for v in json_texts(result))


async def test_range_per_era(connect, mode):
    async with connect() as client:
        await client.list_tools()
        result = await client.call_tool("range", {"start": 1, "end": 5})
    assert_ok(result, mode)
    if mode == LEGACY:
        assert result.structured_content == {"result": [1, 2, 3, 4]}
    else:
        assert result.structured_content == [1, 2, 3, 4]


async def test_divide(connect, mode):
    async with connect() as client:
        ok = await client.call_tool("divide", {"a": 7, "b": 2})
        by_zero = await client.call_tool("divide", {"a": 1, "b": 0})
    assert_ok(ok, mode)
    assert ok.structured_content == {"quotient": 3.5}
    error = error_of(by_zero)
    assert "b must not be zero" in error["message"]
    assert error["code"] in ("invalid_arguments", None)


async def test_files(connect, mode):
    async with connect() as client:
        read = await client.call_tool("read_file", {"path": "readme.txt"})
        listing = await client.call_tool("list_dir", {})
        missing = await client.call_tool("read_file", {"path": "no-such-file.txt"})
    assert_ok(read, mode)
    assert read.structured_content == {
        "path": "readme.txt",
        "content": "Hello from the files example.\n",
        "bytes": 30,
    }
    assert_ok(listing, mode)
    names = ["notes", "readme.txt"]
    assert listing.structured_content == ({"result": names} if mode == LEGACY else names)
    error = error_of(missing)
    assert error["code"] in ("not_found", None)
    assert "no-such-file.txt" in error["message"]


async def test_media(connect, mode):
    async with connect() as client:
        result = await client.call_tool("media", {})
    assert_ok(result, mode)
    kinds = [block.type for block in result.content]
    # The compat summary first, then one block per part, in order.
    assert kinds[-5:] == ["image", "audio", "resource_link", "resource", "resource"], kinds
    image, audio, link, text_res, blob_res = result.content[-5:]
    assert isinstance(image, types.ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
    assert isinstance(audio, types.AudioContent)
    assert audio.mime_type == "audio/wav"
    raw = base64.b64decode(audio.data)
    assert raw[:4] == b"RIFF" and raw[8:12] == b"WAVE"
    assert isinstance(link, types.ResourceLink)
    assert str(link.uri) == "file:///reports/2027-02.csv"
    assert (link.name, link.title, link.mime_type, link.size) == ("2027-02.csv", "February sales", "text/csv", 18234)
    assert isinstance(text_res, types.EmbeddedResource)
    assert isinstance(text_res.resource, types.TextResourceContents)
    assert (str(text_res.resource.uri), text_res.resource.mime_type, text_res.resource.text) == (
        "file:///notes.txt",
        "text/plain",
        "Remember the milk",
    )
    assert isinstance(blob_res, types.EmbeddedResource)
    assert isinstance(blob_res.resource, types.BlobResourceContents)
    assert str(blob_res.resource.uri) == "file:///logo.png"
    assert blob_res.resource.mime_type == "image/png"
    assert blob_res.resource.blob == PNG_1X1


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_bulk_stored_result(connect, mode):
    async with connect() as client:
        result = await client.call_tool("bulk", {"count": 5000})
        assert_ok(result, mode)
        links = [block for block in result.content if isinstance(block, types.ResourceLink)]
        assert len(links) == 1, result.content
        link = links[0]
        assert str(link.uri).startswith("toolhost://results/")
        assert link.mime_type == "application/json"
        assert link.size and link.size > 100_000
        read = await client.read_resource(str(link.uri))
    assert len(read.contents) == 1
    contents = read.contents[0]
    assert isinstance(contents, types.TextResourceContents)
    assert str(contents.uri) == str(link.uri)
    assert contents.mime_type == "application/json"
    assert len(contents.text.encode()) == link.size
    items = json.loads(contents.text)["items"]
    assert len(items) == 5000
    assert items[0]["id"] == 1 and items[-1]["id"] == 5000
    assert items[41]["name"] == "item 42"


async def test_bulk_small_is_inline(connect, mode):
    async with connect() as client:
        result = await client.call_tool("bulk", {"count": 3})
    assert_ok(result, mode)
    assert not [block for block in result.content if isinstance(block, types.ResourceLink)]
    assert [item["id"] for item in result.structured_content["items"]] == [1, 2, 3]


async def test_missing_resource_error(connect, mode):
    async with connect() as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("toolhost://results/000000000000000000000000")
    # -32002 up to 2025-11-25; 2026-07-28 requires -32602.
    assert caught.value.code == (-32002 if mode == LEGACY else -32602)


async def test_unknown_tool_error(connect, mode):
    async with connect() as client:
        await client.list_tools()
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
    assert caught.value.code == -32602


async def test_fail_codes(connect, mode):
    async with connect() as client:
        for code in ("invalid_arguments", "missing_privilege", "not_found", "tool_error"):
            error = error_of(await client.call_tool("fail", {"code": code}))
            assert error["message"] == f"failing with {code} on purpose"
            assert error["code"] in (code, None)
        # Arguments outside the input schema are a tool error the model can see.
        error = error_of(await client.call_tool("fail", {"code": "nonsense"}))
        assert "input schema" in error["message"]


async def test_wrong_shape_is_withheld(connect, mode):
    async with connect() as client:
        result = await client.call_tool("wrong_shape", {})
    error = error_of(result)
    assert "does not match its output schema" in error["message"]


async def test_needs_privilege_local_caller(connect, mode):
    # No tokens are configured and the server is local: the caller holds every privilege.
    async with connect() as client:
        result = await client.call_tool("needs_privilege", {})
    assert_ok(result, mode)
    assert result.structured_content == {"ok": True}


async def test_legacy_app_tools(connect, mode):
    async with connect() as client:
        success = await client.call_tool("legacy_success", {})
        error_string = await client.call_tool("legacy_error_string", {})
        error_object = await client.call_tool("legacy_error_object", {})
        dry_run = await client.call_tool("legacy_dry_run", {})
        plain = await client.call_tool("legacy_plain", {})

    assert_ok(success, mode)
    assert success.structured_content == {"orderId": "1001", "status": "shipped"}

    error = error_of(error_string)
    assert error["message"] == "Missing privilege: order:read"

    error = error_of(error_object)
    assert error["message"] == "Order 1001 is locked"
    assert error["code"] in ("not_found", None)

    assert_ok(dry_run, mode)
    assert dry_run.structured_content == {"total": 12.5}
    assert dry_run.meta is not None and dry_run.meta.get("dev.toolhost/dryRun") is True
    assert dry_run.meta.get("dev.toolhost/legacy") == {"beside": {"preview": {"lines": 2}}}

    assert_ok(plain, mode)
    assert plain.structured_content is None
    assert "Order 1001 was shipped." in texts(plain)
