"""The official Python MCP SDK's OAuth client against toolhost as an OAuth 2.1
resource server (#16), in both eras.

A test authorization server runs here: its RFC 8414 metadata, a token endpoint
for the client_credentials grant that signs RS256 JWTs, and its JWKS. toolhost
is started with `[oauth]` naming it. The SDK's `ClientCredentialsOAuthProvider`
starts without a token: from toolhost's 401 it finds the protected resource
metadata (RFC 9728), then the issuer's metadata, asks for the scope the 401
named, and calls a tool. A tool whose privilege the token lacks answers 403
`insufficient_scope`; the SDK steps up (a new token with the named scopes) and
the retried call succeeds. The SDK checks every result against the revision's
schema.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import anyio
import httpx2
import jwt
import pytest
from conftest import REPO, serving
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

CLIENT_ID = "toolhost-test-client"
CLIENT_SECRET = "s3cret-" + uuid.uuid4().hex
TIMEOUT = 60


class Issuer:
    """The test authorization server, on a loopback port, in a thread."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "rsa-1"
        self.token_requests: list[dict] = []
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/.well-known/oauth-authorization-server":
                    self.reply(200, issuer.metadata())
                elif self.path == "/jwks":
                    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(issuer.key.public_key()))
                    jwk.update({"kid": issuer.kid, "use": "sig", "alg": "RS256"})
                    self.reply(200, {"keys": [jwk]})
                else:
                    self.reply(404, {"error": "not_found"})

            def do_POST(self) -> None:
                if self.path != "/token":
                    self.reply(404, {"error": "not_found"})
                    return
                length = int(self.headers.get("content-length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                auth = self.headers.get("authorization", "")
                expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                if auth != f"Basic {expected}" or form.get("grant_type") != "client_credentials":
                    self.reply(401, {"error": "invalid_client"})
                    return
                issuer.token_requests.append(form)
                scope = form.get("scope", "")
                now = int(time.time())
                token = jwt.encode(
                    {
                        "iss": issuer.url,
                        "sub": CLIENT_ID,
                        "aud": form.get("resource", ""),
                        "scope": scope,
                        "iat": now,
                        "exp": now + 300,
                        "jti": uuid.uuid4().hex,
                    },
                    issuer.key,
                    algorithm="RS256",
                    headers={"kid": issuer.kid},
                )
                self.reply(
                    200,
                    {"access_token": token, "token_type": "Bearer", "expires_in": 300, "scope": scope},
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def metadata(self) -> dict:
        return {
            "issuer": self.url,
            # Required by RFC 8414's model in the SDK; this issuer only serves
            # client_credentials, so nothing is ever sent there.
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": ["mcp", "calc:add"],
        }


@pytest.fixture(scope="module")
def issuer():
    issuer = Issuer()
    yield issuer
    issuer.server.shutdown()


@pytest.fixture(scope="module")
def oauth_url(issuer, tmp_path_factory):
    """toolhost serve --http with [oauth] naming the test issuer; `add` needs a privilege
    that only the scope `calc:add` grants."""
    dir = tmp_path_factory.mktemp("toolhost-oauth")
    calc = REPO / "guest-examples" / "target" / "wasm32-wasip2" / "release" / "calc.wasm"

    def config_for(port: int):
        config = dir / "toolhost.toml"
        config.write_text(
            f'[store]\nkind = "sqlite"\npath = "{dir}/r.sqlite3"\nsigning_key_file = "{dir}/k"\n'
            f'[oauth]\nresource = "http://127.0.0.1:{port}/mcp"\nissuer = "{issuer.url}"\n'
            f'required_scopes = ["mcp"]\n'
            f'[oauth.scopes]\n"calc:add" = ["math:add"]\n'
            f'[[plugin]]\npath = "{calc}"\n[plugin.tool_privileges]\nadd = ["math:add"]\n'
        )
        return config

    with serving(dir / "server.log", config_for) as url:
        yield url


class Memory:
    """Token storage in memory, as the SDK's TokenStorage protocol asks."""

    def __init__(self) -> None:
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info) -> None:
        self.client_info = client_info


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_discovery_from_the_401_then_a_step_up_on_403(issuer, oauth_url, mode):
    # Unauthenticated, the server says where its metadata is and which scope to ask for.
    async with httpx2.AsyncClient() as plain:
        refused = await plain.post(oauth_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]

    before = len(issuer.token_requests)
    provider = ClientCredentialsOAuthProvider(
        server_url=oauth_url,
        storage=Memory(),
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        issuer=issuer.url,
    )
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient(auth=provider, timeout=TIMEOUT) as http:
            transport = streamable_http_client(oauth_url, http_client=http)
            async with Client(transport, mode=mode, read_timeout_seconds=TIMEOUT) as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                # The first token has the scope the 401 named: `add` is not for it.
                assert "divide" in tools and "add" not in tools, tools
                divided = await client.call_tool("divide", {"a": 9, "b": 3})
                assert not divided.is_error, divided
                assert divided.structured_content == {"quotient": 3}
                # `add` answers 403 insufficient_scope; the SDK gets a token with the
                # scopes named there and the retried call passes.
                added = await client.call_tool("add", {"a": 2, "b": 3})
                assert not added.is_error, added
                assert added.structured_content == {"sum": 5}
    scopes = [request.get("scope") for request in issuer.token_requests[before:]]
    assert scopes == ["mcp", "mcp calc:add"], scopes
    for request in issuer.token_requests[before:]:
        assert request.get("resource") == oauth_url, request
