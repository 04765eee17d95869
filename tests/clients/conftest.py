"""Shared fixtures for the real-client tests: where the server is, and a
`toolhost serve --http` started on a free loopback port for the session."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLHOST = REPO / "target" / "release" / "toolhost"
# The example tools, exactly as the embedded default: named explicitly so that a
# ./toolhost.toml a developer left in the repository root changes nothing.
CONFIG = REPO / "toolhost.default.toml"
# How long a client waits for toolhost, per request and per test.
CLIENT_TIMEOUT = 30


def connector(transport: str, mode: str, config: Path, http_url: Callable[[], str]):
    """An async context manager giving a `Client` (Python SDK) of toolhost serving
    `config`: a child process over stdio, or `http_url()` over HTTP; `mode` is
    the SDK's `"legacy"` (2025-11-25 handshake) or `"2026-07-28"`."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    @contextlib.asynccontextmanager
    async def connect(**options):
        if transport == "stdio":
            server = StdioServerParameters(command=str(TOOLHOST), args=["serve", "--config", str(config)], cwd=str(REPO))
        else:
            server = http_url()
        with anyio.fail_after(CLIENT_TIMEOUT):
            async with Client(server, mode=mode, read_timeout_seconds=CLIENT_TIMEOUT, **options) as client:
                assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
                yield client

    return connect


# The two eras of the Python SDK's `Client(mode=..)`.
LEGACY = "legacy"
MODERN = "2026-07-28"


@pytest.fixture(params=["stdio", "http"])
def transport(request) -> str:
    """The SDK tests run over stdio and Streamable HTTP."""
    return request.param


@pytest.fixture(params=[LEGACY, MODERN])
def mode(request) -> str:
    """The SDK tests run in both eras."""
    return request.param


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _built() -> None:
    missing = [p for p in (TOOLHOST, CONFIG) if not p.exists()]
    wasm = REPO / "guest-examples" / "target" / "wasm32-wasip2" / "release" / "calc.wasm"
    if not wasm.exists():
        missing.append(wasm)
    if missing:
        pytest.exit(
            f"build toolhost and the example tools first (cargo build --release && make guests): missing {missing}",
            returncode=2,
        )


@contextlib.contextmanager
def serving(log_path: Path, config_for: Callable[[int], Path]) -> Iterator[str]:
    """`toolhost serve --http 127.0.0.1:PORT --config config_for(PORT)`, yielding its MCP URL
    once it accepts connections; stopped (SIGTERM, then SIGKILL) at the end. Retries on
    another port if the chosen one was taken meanwhile."""
    last_error = "not started"
    for _attempt in range(3):
        port = free_port()
        config = config_for(port)
        log = open(log_path, "wb")
        proc = subprocess.Popen(
            [str(TOOLHOST), "serve", "--http", f"127.0.0.1:{port}", "--config", str(config)],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "TOOLHOST_LOG": os.environ.get("TOOLHOST_LOG", "info")},
        )
        deadline = time.monotonic() + 60
        ready = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    ready = True
                    break
            except OSError:
                time.sleep(0.1)
        if ready:
            try:
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.close()
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
        last_error = log_path.read_text(errors="replace")[-2000:]
    pytest.fail(f"toolhost serve --http did not start:\n{last_error}")


@pytest.fixture(scope="session")
def http_url(tmp_path_factory):
    """The example tools over HTTP for the whole session."""
    log_path = tmp_path_factory.mktemp("toolhost-http") / "server.log"
    with serving(log_path, lambda _port: CONFIG) as url:
        yield url


NOTES = REPO / "guest-examples" / "target" / "wasm32-wasip2" / "release" / "notes.wasm"
JS_NOTES = REPO / "guest-examples" / "target" / "lang" / "js_notes.wasm"


def config_of(folder: Path, component: Path) -> Path:
    """A configuration serving `component` alone, with its data under `folder`.
    `toolhost tools` loads it once, so the component is compiled into the data
    directory's cache before any client waits on a server (a JavaScript
    component takes seconds, more on a busy machine)."""
    config = folder / "toolhost.toml"
    config.write_text(f'[host]\ndata_dir = "{folder / "data"}"\n[[plugin]]\npath = "{component}"\n')
    loaded = subprocess.run(
        [str(TOOLHOST), "tools", "--config", str(config)], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert loaded.returncode == 0, f"{component} does not load:\n{loaded.stderr[-2000:]}"
    return config


@pytest.fixture(scope="session")
def notes_config(tmp_path_factory) -> Path:
    """A configuration with the `notes` example alone: a plugin with a prompt,
    resources, completions and a tool that asks the user."""
    return config_of(tmp_path_factory.mktemp("notes"), NOTES)


CONFORMANCE = REPO / "guest-examples" / "target" / "wasm32-wasip2" / "release" / "conformance.wasm"


@pytest.fixture(scope="session")
def conformance_config(tmp_path_factory) -> Path:
    """The conformance guest alone, whose task fixtures the tasks tests call."""
    return config_of(tmp_path_factory.mktemp("conformance"), CONFORMANCE)


@pytest.fixture(scope="session")
def conformance_url(conformance_config, tmp_path_factory):
    """The conformance guest over HTTP for the whole session."""
    log_path = tmp_path_factory.mktemp("conformance-http") / "server.log"
    with serving(log_path, lambda _port: conformance_config) as url:
        yield url
