"""toolhost example tools in Python, against the WIT world `plugin` (../../wit).

componentize-py turns this module into a component: `make guests` writes
guest-examples/target/lang/py_tools.wasm. The tools are the same as the
JavaScript ones (../js-tools):

- word_stats: the tool every example language implements alike (see
  guest-examples/word-stats); structured data with an output schema.
- color: structured data, or a coded `not_found` failure.
- countdown: reports through the host's `log` and `progress` imports.
"""

import json

from wit_world import exports
from wit_world.imports import host
from wit_world.imports.types import (
    Annotations,
    CallContext,
    ErrorCode,
    Metadata,
    Outcome,
    Outcome_Failure,
    Outcome_Success,
    ToolDescriptor,
    ToolError,
    ToolResult,
)


def to_json(value) -> str:
    # Keys in alphabetical order, as the Rust version's serde_json writes them,
    # so the four versions of word_stats are identical byte for byte.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


WORD_STATS = {
    "name": "word_stats",
    "title": "Word statistics",
    "description": "Counts the words, lines and characters of a text.",
    "input_schema": {
        "additionalProperties": False,
        "properties": {"text": {"description": "The text to count", "type": "string"}},
        "required": ["text"],
        "type": "object",
    },
    "output_schema": {
        "additionalProperties": False,
        "properties": {
            "characters": {"minimum": 0, "type": "integer"},
            "lines": {"minimum": 0, "type": "integer"},
            "words": {"minimum": 0, "type": "integer"},
        },
        "required": ["characters", "lines", "words"],
        "type": "object",
    },
}

COLORS = {"blue": [0, 0, 255], "green": [0, 128, 0], "red": [255, 0, 0]}

COLOR = {
    "name": "color",
    "title": "Color",
    "description": "Looks up a named color: its hex code and RGB components.",
    "input_schema": {
        "additionalProperties": False,
        "properties": {"name": {"description": "A color name such as red", "type": "string"}},
        "required": ["name"],
        "type": "object",
    },
    "output_schema": {
        "properties": {
            "hex": {"pattern": "^#[0-9a-f]{6}$", "type": "string"},
            "name": {"type": "string"},
            "rgb": {
                "items": {"maximum": 255, "minimum": 0, "type": "integer"},
                "maxItems": 3,
                "minItems": 3,
                "type": "array",
            },
        },
        "required": ["hex", "name", "rgb"],
        "type": "object",
    },
}

COUNTDOWN = {
    "name": "countdown",
    "title": "Countdown",
    "description": "Counts down from a number, logging and reporting progress at each step.",
    "input_schema": {
        "additionalProperties": False,
        "properties": {"from": {"maximum": 10, "minimum": 1, "type": "integer"}},
        "required": ["from"],
        "type": "object",
    },
    "output_schema": {
        "properties": {"counted": {"type": "integer"}},
        "required": ["counted"],
        "type": "object",
    },
}


def descriptor(tool: dict) -> ToolDescriptor:
    return ToolDescriptor(
        name=tool["name"],
        title=tool["title"],
        description=tool["description"],
        input_schema=to_json(tool["input_schema"]),
        output_schema=to_json(tool["output_schema"]),
        annotations=Annotations(read_only=True, destructive=None, idempotent=None, open_world=None),
        required_privileges=[],
        required_client_capabilities=[],
    )


def result(outcome: Outcome, summary: str | None) -> ToolResult:
    """A result with no content parts, stored links or metadata."""
    return ToolResult(
        outcome=outcome,
        summary=summary,
        content=[],
        stored_links=[],
        metadata=Metadata(
            pagination=None,
            dry_run=None,
            response_size=None,
            query=None,
            generated_at=None,
            expires_at=None,
            extensions=[],
        ),
    )


def success(data, summary: str) -> ToolResult:
    return result(Outcome_Success(to_json(data)), summary)


def failure(code: ErrorCode, message: str, details) -> ToolResult:
    return result(Outcome_Failure(ToolError(code=code, message=message, details=to_json(details))), None)


SPACES = frozenset(" \t\n\v\f\r")


def counted(n: int, noun: str) -> str:
    """`1 word`, `2 words`."""
    return f"1 {noun}" if n == 1 else f"{n} {noun}s"


def word_stats(args: dict) -> ToolResult:
    text = args["text"]
    # A Python str is a sequence of code points (Unicode scalar values).
    characters = len(text)
    words = 0
    in_word = False
    for c in text:
        if c in SPACES:
            in_word = False
        elif not in_word:
            in_word = True
            words += 1
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return success(
        {"characters": characters, "lines": lines, "words": words},
        f"{counted(words, 'word')}, {counted(lines, 'line')}, {counted(characters, 'character')}",
    )


def color(args: dict) -> ToolResult:
    name = args["name"]
    rgb = COLORS.get(name)
    if rgb is None:
        return failure(
            ErrorCode.NOT_FOUND,
            f'There is no color named "{name}"; ask for one of the known ones.',
            {"known": list(COLORS), "name": name},
        )
    hex_code = "#" + "".join(f"{v:02x}" for v in rgb)
    return success({"hex": hex_code, "name": name, "rgb": rgb}, f"{name} is {hex_code}")


def countdown(args: dict) -> ToolResult:
    start = int(args["from"])  # JSON Schema's `integer` admits 3.0 as well as 3
    host.log(host.LogLevel.INFO, f"counting down from {start}")
    for step in range(1, start + 1):
        host.log(host.LogLevel.DEBUG, str(start - step + 1))
        host.progress(float(step), float(start), f"step {step} of {start}")
    return success({"counted": start}, f"Counted down from {start}")


TOOLS = {"word_stats": word_stats, "color": color, "countdown": countdown}


class Tool(exports.Tool):
    """The export `tool`: componentize-py looks for a class of this name."""

    def describe(self) -> list[ToolDescriptor]:
        return [descriptor(tool) for tool in (WORD_STATS, COLOR, COUNTDOWN)]

    def call(self, name: str, arguments: str, context: CallContext) -> ToolResult:
        run = TOOLS.get(name)
        if run is None:
            return failure(
                ErrorCode.INVALID_ARGUMENTS, f"This plugin has no tool named `{name}`.", {"tool": name}
            )
        # The host validated the arguments against the tool's input schema.
        return run(json.loads(arguments))
