"""The official Python MCP SDK (PyPI `mcp` 2.x) against a plugin that offers more
than tools: `guest-examples/notes` (Rust) and its twin `guest-examples/js-notes`
(JavaScript), each with a prompt, resources, completions and a tool that asks
the user (elicitation).

Every test runs over stdio and Streamable HTTP, in `mode="legacy"` (2025-11-25:
the question is a request on the call's stream, answered by the client's
elicitation callback) and `mode="2026-07-28"` (the call answers `input_required`
and the SDK's driver retries it with the callback's answer and the signed
`requestState`). The SDK parses every result into the revision's types, so each
answer below is also that check.
"""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest
from conftest import JS_NOTES, MODERN, NOTES, config_of, connector, serving

pytestmark = pytest.mark.anyio



@pytest.fixture(scope="module", params=[NOTES, JS_NOTES], ids=["rust", "js"])
def notes_config(request, tmp_path_factory) -> Path:
    """The notes example of each language, alone."""
    return config_of(tmp_path_factory.mktemp(request.param.stem), request.param)


@pytest.fixture(scope="module")
def notes_url(notes_config, tmp_path_factory):
    log_path = tmp_path_factory.mktemp("notes-http") / "server.log"
    with serving(log_path, lambda _port: notes_config) as url:
        yield url


@pytest.fixture
def connect(transport: str, mode: str, notes_config: Path, request):
    """An async context manager giving a `Client` of the notes plugin."""
    return connector(transport, mode, notes_config, lambda: request.getfixturevalue("notes_url"))


async def test_a_prompt_embeds_its_note(connect):
    async with connect() as client:
        listed = await client.list_prompts()
        got = await client.get_prompt("summarize_note", {"slug": "sandbox"})
    (prompt,) = listed.prompts
    assert prompt.name == "summarize_note"
    assert prompt.title == "Summarize a note"
    assert [(a.name, a.required) for a in prompt.arguments] == [("slug", True)]
    embedded, question = got.messages
    assert isinstance(embedded.content, types.EmbeddedResource), embedded
    assert str(embedded.content.resource.uri) == "notes://note/sandbox"
    assert embedded.content.resource.text.startswith("# The sandbox")
    assert question.content.text == "Summarize the note above in one sentence."


async def test_a_resource_is_read_by_its_uri_and_by_its_template(connect):
    async with connect() as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        index = await client.read_resource("notes://index")
        note = await client.read_resource("notes://note/results")
    assert [str(r.uri) for r in resources.resources] == ["notes://index"]
    assert [t.uri_template for t in templates.resource_templates] == ["notes://note/{slug}"]
    assert "The sandbox" in index.contents[0].text
    (contents,) = note.contents
    assert contents.mime_type == "text/markdown"
    assert contents.text.startswith("# Results")


async def test_a_slug_is_completed_for_the_prompt_and_the_template(connect):
    async with connect() as client:
        for ref, typed, expected in [
            (types.ResourceTemplateReference(uri="notes://note/{slug}"), "re", ["results"]),
            (types.PromptReference(name="summarize_note"), "s", ["sandbox"]),
            (types.PromptReference(name="summarize_note"), "x", []),
        ]:
            done = await client.complete(ref, {"name": "slug", "value": typed})
            assert done.completion.values == expected, (ref, typed)


async def test_a_tool_asks_the_user_and_the_elicitation_callback_answers(connect, mode):
    asked: list[types.ElicitRequestParams] = []
    answer = types.ElicitResult(action="accept", content={"slug": "prompts"})

    async def elicit(_context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return answer

    async with connect(elicitation_callback=elicit) as client:
        picked = await client.call_tool("pick_note", {})
        answer = types.ElicitResult(action="decline")
        declined = await client.call_tool("pick_note", {})
    assert [q.message for q in asked] == ["Which note shall I show?"] * 2
    assert asked[0].requested_schema["properties"]["slug"]["enum"] == ["sandbox", "results", "prompts"]
    assert picked.is_error is False, picked
    assert picked.structured_content == {"slug": "prompts", "title": "Prompts and resources"}
    links = [block for block in picked.content if isinstance(block, types.ResourceLink)]
    assert [str(link.uri) for link in links] == ["notes://note/prompts"]
    assert declined.is_error is False, declined
    # In compat mode (the default) the legacy envelope comes first, then the part.
    assert [block.text for block in declined.content if isinstance(block, types.TextContent)][-1] == (
        "No note picked."
    )


@pytest.mark.parametrize("mode", [MODERN])
async def test_a_stateless_caller_sees_input_required_then_the_result(connect):
    async with connect(elicitation_callback=_never) as client:
        first = await client.session.call_tool("pick_note", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        ((key, request),) = first.input_requests.items()
        assert request.method == "elicitation/create"
        assert first.request_state
        done = await client.session.call_tool(
            "pick_note",
            {},
            input_responses={key: types.ElicitResult(action="accept", content={"slug": "sandbox"})},
            request_state=first.request_state,
        )
    assert done.structured_content == {"slug": "sandbox", "title": "The sandbox"}


async def _never(_context, params):
    raise AssertionError(f"the driver was not to answer {params}")
