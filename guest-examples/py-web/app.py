"""toolhost's web tools in Python, the same two as the Rust example (../web) and
the JavaScript one (../js-web).

The world `plugin-http` (wit/world.wit) is toolhost's `plugin` plus the import
`wasi:http/outgoing-handler`, through which requests go out as far as the
operator's `http` rules allow. componentize-py turns this module into a
component: `make guests` writes guest-examples/target/lang/py_web.wasm.

- fetch_title: fetches a page and returns its status, <title> and links.
- call_api: a GET with `Authorization: Bearer <secret "api">` and
  `Accept: application/json`; returns the status and the body, parsed when it
  is JSON. The module only ever holds the secret's placeholder: the host puts
  the value in the header for the hosts the secret allows.
"""

import json
import re
from html.parser import HTMLParser

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host, outgoing_handler
from wit_world.imports.streams import StreamError_Closed
from wit_world.imports.toolhost_plugin_types import (
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
from wit_world.imports.wasi_http_types import (
    Fields,
    Method_Get,
    OutgoingBody,
    OutgoingRequest,
    Scheme_Http,
    Scheme_Https,
    http_error_code,
)

MAX_LINKS = 100
"""At most this many links are returned."""


# --- A small synchronous client over wasi:http -------------------------------


class HttpError(Exception):
    """A failed request; `code` is the wasi:http error-code name as the WIT
    spells it (`HTTP-request-denied`, `connection-refused`), or `invalid-url`,
    `invalid-header`, `stream-error` for what this module finds itself."""

    def __init__(self, code: str, detail: str | None = None):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


ACRONYMS = {"Dns": "DNS", "Ip": "IP", "Tls": "TLS", "Http": "HTTP", "Uri": "URI"}


def code_name(code) -> str:
    """`ErrorCode_HttpRequestDenied()` -> `HTTP-request-denied`."""
    words = re.findall(r"[A-Z][a-z0-9]*", type(code).__name__.removeprefix("ErrorCode_"))
    return "-".join(ACRONYMS.get(word, word.lower()) for word in words)


def split_url(url: str):
    """`scheme://authority/path?query#fragment` into the scheme, the authority
    and the path with its query (the fragment is not sent)."""
    scheme, sep, rest = url.partition("://")
    schemes = {"http": Scheme_Http, "https": Scheme_Https}
    if not sep or scheme.lower() not in schemes:
        raise HttpError("invalid-url", f"{url}: the scheme is neither http nor https")
    rest = rest.split("#", 1)[0]
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:end], rest[end:]
    if not authority or "@" in authority:
        raise HttpError("invalid-url", f"{url}: no host, or user information")
    if not path.startswith("/"):
        path = "/" + path
    return schemes[scheme.lower()](), authority, path


def get(url: str, headers: dict[str, str]) -> tuple[int, list[tuple[str, str]], bytes]:
    """Sends a GET and reads the whole response: (status, headers, body)."""
    scheme, authority, path = split_url(url)
    try:
        fields = Fields.from_list([(name, value.encode()) for name, value in headers.items()])
    except Err as e:
        raise HttpError("invalid-header", type(e.value).__name__) from None
    request = OutgoingRequest(fields)
    try:
        request.set_method(Method_Get())
        request.set_scheme(scheme)
        request.set_authority(authority)
        request.set_path_with_query(path)
    except Err:
        raise HttpError("invalid-url", url) from None
    body = request.body()
    try:
        future = outgoing_handler.handle(request, None)
    except Err as e:
        raise HttpError(code_name(e.value)) from None
    OutgoingBody.finish(body, None)

    # Every resource is dropped as soon as it is done with (a child before
    # its parent), as wasi:http requires.
    with future:
        with future.subscribe() as ready:
            ready.block()
        outcome = future.get()
    if outcome is None or isinstance(outcome, Err):
        raise HttpError("internal-error", "the response was already taken")
    if isinstance(outcome.value, Err):
        raise HttpError(code_name(outcome.value.value))
    with outcome.value.value as response:
        status = response.status()
        with response.headers() as fields:
            received = [(name, value.decode("utf-8", "replace")) for name, value in fields.entries()]
        with response.consume() as incoming, incoming.stream() as stream:
            chunks = []
            while True:
                try:
                    chunks.append(stream.blocking_read(64 * 1024))
                except Err as e:
                    if isinstance(e.value, StreamError_Closed):
                        break
                    code = http_error_code(e.value.value)
                    if code is None:
                        raise HttpError("stream-error", e.value.value.to_debug_string()) from None
                    raise HttpError(code_name(code)) from None
    return status, received, b"".join(chunks)


# --- Just enough HTML for a title and links -----------------------------------


def collapse(text: str) -> str:
    return " ".join(re.split(r"[ \t\n\f\r]+", text)).strip()


class Page(HTMLParser):
    """The first <title> and every <a href> with its text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title: str | None = None
        self.links: list[dict] = []
        self._title: list[str] | None = None
        self._link: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "title" and self.title is None and self._title is None:
            self._title = []
        elif tag == "a":
            self._end_link()
            href = dict(attrs).get("href")
            if href is not None:
                self._link = (href, [])
        elif self._link is not None:
            self._link[1].append(" ")

    def handle_endtag(self, tag):
        if tag == "title" and self._title is not None:
            self.title = collapse("".join(self._title)) or None
            self._title = None
        elif tag == "a":
            self._end_link()

    def handle_data(self, data):
        if self._title is not None:
            self._title.append(data)
        if self._link is not None:
            self._link[1].append(data)

    def _end_link(self):
        if self._link is not None:
            href, text = self._link
            self.links.append({"href": href, "text": collapse("".join(text))})
            self._link = None

    def close(self):
        super().close()
        self._end_link()
        if self._title is not None:
            self.handle_endtag("title")


# --- The tools -----------------------------------------------------------------


def to_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


URL_ARGS = {
    "additionalProperties": False,
    "properties": {"url": {"description": "An http or https URL", "type": "string"}},
    "required": ["url"],
    "type": "object",
}

FETCH_TITLE = {
    "name": "fetch_title",
    "title": "Fetch a page's title",
    "description": "Fetches a web page and returns its HTTP status, its title and its links.",
    "output_schema": {
        "properties": {
            "links": {
                "items": {
                    "properties": {"href": {"type": "string"}, "text": {"type": "string"}},
                    "required": ["href", "text"],
                    "type": "object",
                },
                "type": "array",
            },
            "status": {"type": "integer"},
            "title": {"type": ["string", "null"]},
            "url": {"type": "string"},
        },
        "required": ["url", "status", "title", "links"],
        "type": "object",
    },
}

CALL_API = {
    "name": "call_api",
    "title": "Call an API",
    "description": "Calls a JSON API with GET, authenticated by the operator's secret `api`; "
    "returns the status and the body (parsed when it is JSON).",
    "output_schema": {
        "properties": {"body": {}, "status": {"type": "integer"}},
        "required": ["status", "body"],
        "type": "object",
    },
}


def descriptor(tool: dict) -> ToolDescriptor:
    return ToolDescriptor(
        name=tool["name"],
        title=tool["title"],
        description=tool["description"],
        input_schema=to_json(URL_ARGS),
        output_schema=to_json(tool["output_schema"]),
        annotations=Annotations(read_only=True, destructive=None, idempotent=None, open_world=True),
        required_privileges=[],
        required_client_capabilities=[],
    )


def result(outcome: Outcome, summary: str | None) -> ToolResult:
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


def failed(url: str, error: HttpError) -> ToolResult:
    details = {"code": error.code, "url": url}
    message = f"GET {url} failed: {error}"
    return result(Outcome_Failure(ToolError(code=ErrorCode.TOOL_ERROR, message=message, details=to_json(details))), None)


def fetch_title(args: dict) -> ToolResult:
    url = args["url"]
    try:
        status, _, body = get(url, {"accept": "text/html"})
    except HttpError as e:
        return failed(url, e)
    page = Page()
    page.feed(body.decode("utf-8", "replace"))
    page.close()
    summary = f"{status} {url}: {page.title}" if page.title is not None else f"{status} {url} (no title)"
    return success({"url": url, "status": status, "title": page.title, "links": page.links[:MAX_LINKS]}, summary)


def call_api(args: dict) -> ToolResult:
    url = args["url"]
    headers = {"accept": "application/json"}
    # Without the secret configured, the request goes without credentials.
    token = host.get_config("secret:api")
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    try:
        status, _, body = get(url, headers)
    except HttpError as e:
        return failed(url, e)
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text
    return success({"status": status, "body": parsed}, f"GET {url} -> {status}")


TOOLS = {"fetch_title": fetch_title, "call_api": call_api}


class Tool(exports.Tool):
    """The export `tool`: componentize-py looks for a class of this name."""

    def describe(self) -> list[ToolDescriptor]:
        return [descriptor(tool) for tool in (FETCH_TITLE, CALL_API)]

    def call(self, name: str, arguments: str, context: CallContext) -> ToolResult:
        run = TOOLS.get(name)
        if run is None:
            return result(
                Outcome_Failure(
                    ToolError(
                        code=ErrorCode.INVALID_ARGUMENTS,
                        message=f"This plugin has no tool named `{name}`.",
                        details=to_json({"tool": name}),
                    )
                ),
                None,
            )
        # The host validated the arguments against the tool's input schema.
        return run(json.loads(arguments))
