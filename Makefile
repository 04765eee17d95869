# toolhost: the two commands that matter are `make run` and `make test`.
# Each installs what it needs on a fresh machine.

CARGO ?= cargo
PYTHON ?= python3
A2A_VENV := tests/a2a/.venv

GUESTS := --manifest-path guest-examples/Cargo.toml --target wasm32-wasip2 --release --locked

.PHONY: run test setup postgres guests lint unit a2a-check conformance clients bless build

## Build the host (release: optimised Cranelift) and the example tools, and serve
## them over MCP on stdio (the client snippet goes to stderr). For HTTP:
## ./target/release/toolhost serve --http 127.0.0.1:8080
run: build guests
	./target/release/toolhost serve

build:
	$(CARGO) build --release --locked

## The Rust example and hostile guests (guest-examples/target/wasm32-wasip2/release/*.wasm).
guests:
	rustup target add wasm32-wasip2
	$(CARGO) build $(GUESTS)

## Every test: formatting, clippy, unit, golden, rule, runtime and sandbox tests,
## the A2A check. The guests are built once and shared by every test.
test: setup guests lint unit a2a-check conformance clients

## What the tests need beside cargo: the A2A reference implementation (PyPI) and
## PostgreSQL's server (Debian), which the store tests start on a private cluster.
setup: $(A2A_VENV)/.installed postgres

postgres:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }

$(A2A_VENV)/.installed: tests/a2a/requirements.txt
	$(PYTHON) -m venv $(A2A_VENV)
	$(A2A_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/a2a/requirements.txt
	touch $@

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path guest-examples/Cargo.toml --all -- --check
	$(CARGO) clippy --release --locked --all-targets -- -D warnings
	$(CARGO) clippy $(GUESTS) -- -D warnings

unit: postgres
	$(CARGO) test --release --locked

## Every A2A rendering of the golden matrix, parsed by the official a2a-sdk.
a2a-check: setup
	$(A2A_VENV)/bin/python tests/a2a/check_a2a.py tests/a2a/samples-selftest $(wildcard tests/golden/*/a2a.json)

## The official MCP conformance suite in both eras (Node 22 and the suite come
## from the npm registry); the per-check JSON lands in target/conformance/.
conformance: build guests
	tests/conformance/run.sh

## Real clients: the Python SDK (PyPI mcp 2.x) over stdio and HTTP in both eras,
## and the MCP Inspector CLI (npm) in both eras; installed into tests/clients/.
clients: build guests
	tests/clients/run.sh

## Regenerate the golden files after an intended change; review `git diff tests/golden`.
bless:
	TOOLHOST_BLESS=1 $(CARGO) test --release --locked --test golden_matrix
