# toolhost: the two commands that matter are `make run` and `make test`.
# Each installs what it needs on a fresh machine.

CARGO ?= cargo
PYTHON ?= python3
A2A_VENV := tests/a2a/.venv

.PHONY: run test setup lint unit a2a-check bless build

## Build the host (release: optimised Cranelift) and render the sample results.
run: build
	./target/release/toolhost samples

build:
	$(CARGO) build --release --locked

## Every test: formatting, clippy, unit + golden + rule tests, the A2A check.
test: setup lint unit a2a-check

## What the tests need beside cargo: the A2A reference implementation (PyPI).
setup: $(A2A_VENV)/.installed

$(A2A_VENV)/.installed: tests/a2a/requirements.txt
	$(PYTHON) -m venv $(A2A_VENV)
	$(A2A_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/a2a/requirements.txt
	touch $@

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --locked --all-targets -- -D warnings

unit:
	$(CARGO) test --release --locked

## Every A2A rendering of the golden matrix, parsed by the official a2a-sdk.
a2a-check: setup
	$(A2A_VENV)/bin/python tests/a2a/check_a2a.py tests/a2a/samples-selftest $(wildcard tests/golden/*/a2a.json)

## Regenerate the golden files after an intended change; review `git diff tests/golden`.
bless:
	TOOLHOST_BLESS=1 $(CARGO) test --release --locked --test golden_matrix
