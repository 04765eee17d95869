# toolhost: the two commands that matter are `make run` and `make test`.
# Each installs what it needs on a fresh machine.

CARGO ?= cargo
PYTHON ?= python3
A2A_VENV := tests/a2a/.venv

# The guests land in guest-examples/target, where the tests, the benchmarks and
# `make run` read them, whatever CARGO_TARGET_DIR names for the host.
GUESTS := --manifest-path guest-examples/Cargo.toml --target-dir guest-examples/target \
	--target wasm32-wasip2 --release --locked
# The example guests in JavaScript, Python and C (before the rules: make expands
# prerequisites as it reads them).
LANG_OUT := guest-examples/target/lang
LANG_GUESTS := $(LANG_OUT)/js_tools.wasm $(LANG_OUT)/js_legacy_app.wasm $(LANG_OUT)/js_web.wasm \
	$(LANG_OUT)/js_notes.wasm \
	$(LANG_OUT)/py_tools.wasm $(LANG_OUT)/py_web.wasm $(LANG_OUT)/c_tools.wasm

.PHONY: run test setup postgres registry guests rust-guests lint unit a2a-check conformance clients bless build test-build soak bench pgo pgo-bench link-order fuzz

## Build the host (release: optimised Cranelift) and the example tools, and serve
## them over MCP on stdio (the client snippet goes to stderr). For HTTP:
## ./target/release/toolhost serve --http 127.0.0.1:8080
run: build guests
	./target/release/toolhost serve

build:
	$(CARGO) build --release --locked

## The host as the tests build it: `cargo test` unifies the dev-dependencies'
## features into the binary, so `cargo build` would compile much of it again.
## After `make unit` this is instant, and target/release/toolhost is the binary
## the unit tests ran.
test-build:
	$(CARGO) test --release --locked --no-run

## Every example guest: the Rust ones (guest-examples/target/wasm32-wasip2/release/*.wasm)
## and those in JavaScript, Python and C (guest-examples/target/lang/*.wasm). Each
## toolchain is installed on first use; a component is rebuilt only when its sources,
## the WIT or its toolchain's pinned versions change.
guests: rust-guests $(LANG_GUESTS)

rust-guests:
	rustup target add wasm32-wasip2
	$(CARGO) build $(GUESTS)

WIT := $(wildcard wit/*.wit)

# JavaScript: componentize-js (SpiderMonkey) from npm, at the versions the lock file
# pins. The SpiderMonkey feature `http` (fetch, through wasi:http) is left out of
# the tools that do not reach the web, so they do not import wasi:http; js_web
# keeps it. `fetch-event` (exporting wasi:http/incoming-handler) is never wanted.
JS_DIR := guest-examples/js-tools
COMPONENTIZE_JS_WITH_HTTP := cd $(JS_DIR) && npx --no-install componentize-js --disable fetch-event
COMPONENTIZE_JS := $(COMPONENTIZE_JS_WITH_HTTP) http

$(JS_DIR)/node_modules/.installed: $(JS_DIR)/package.json $(JS_DIR)/package-lock.json
	cd $(JS_DIR) && npm ci --no-audit --no-fund
	touch $@

$(LANG_OUT)/js_tools.wasm: $(JS_DIR)/tools.js $(WIT) $(JS_DIR)/node_modules/.installed
	mkdir -p $(LANG_OUT)
	$(COMPONENTIZE_JS) --wit ../../wit --world-name plugin -o ../target/lang/js_tools.wasm.tmp tools.js
	mv $@.tmp $@

$(LANG_OUT)/js_legacy_app.wasm: guest-examples/js-legacy-app/app.js $(WIT) $(JS_DIR)/node_modules/.installed
	mkdir -p $(LANG_OUT)
	$(COMPONENTIZE_JS) --wit ../../wit --world-name legacy-app -o ../target/lang/js_legacy_app.wasm.tmp ../js-legacy-app/app.js
	mv $@.tmp $@

# js-notes (prompts, resources, completions and a tool that asks: world `full`)
# shares js-tools' componentize-js, as js-web does.
$(LANG_OUT)/js_notes.wasm: guest-examples/js-notes/notes.js $(WIT) $(JS_DIR)/node_modules/.installed
	mkdir -p $(LANG_OUT)
	$(COMPONENTIZE_JS) --wit ../../wit --world-name full -o ../target/lang/js_notes.wasm.tmp ../js-notes/notes.js
	mv $@.tmp $@

# js-web shares js-tools' componentize-js (it has no package.json of its own).
$(LANG_OUT)/js_web.wasm: guest-examples/js-web/web.js $(WIT) $(JS_DIR)/node_modules/.installed
	mkdir -p $(LANG_OUT)
	$(COMPONENTIZE_JS_WITH_HTTP) --wit ../../wit --world-name plugin -o ../target/lang/js_web.wasm.tmp ../js-web/web.js
	mv $@.tmp $@

# Python: componentize-py from PyPI (pinned in requirements.txt) in a virtualenv.
PY_DIR := guest-examples/py-tools
PY_VENV := guest-examples/target/py-venv

$(PY_VENV)/.installed: $(PY_DIR)/requirements.txt
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install --quiet --disable-pip-version-check -r $(PY_DIR)/requirements.txt
	touch $@

$(LANG_OUT)/py_tools.wasm: $(PY_DIR)/app.py $(WIT) $(PY_VENV)/.installed
	mkdir -p $(LANG_OUT)
	$(PY_VENV)/bin/componentize-py --wit-path wit --world plugin componentize --python-path $(PY_DIR) --output $@.tmp app
	mv $@.tmp $@

# py-web's world (its wit/) is `plugin` plus wasi:http/outgoing-handler; the WASI
# packages it needs are vendored in py-web/wit/deps. Same componentize-py.
PY_WEB_DIR := guest-examples/py-web
$(LANG_OUT)/py_web.wasm: $(PY_WEB_DIR)/app.py $(wildcard $(PY_WEB_DIR)/wit/*.wit $(PY_WEB_DIR)/wit/deps/*.wit) $(WIT) $(PY_VENV)/.installed
	mkdir -p $(LANG_OUT)
	$(PY_VENV)/bin/componentize-py --wit-path $(PY_WEB_DIR)/wit --world plugin-http componentize --python-path $(PY_WEB_DIR) --output $@.tmp app
	mv $@.tmp $@

# C: Debian's clang, lld and wasi-libc; bindings from `wit-bindgen c` (crate
# wit-bindgen-cli, installed under target/tools); linked into a component by the
# wasm-component-ld that rustup ships beside rustc.
C_DIR := guest-examples/c-tools
C_GEN := $(LANG_OUT)/c-bindings
C_PACKAGES := clang lld wasi-libc libclang-rt-dev-wasm32
WIT_BINDGEN_VERSION := 0.63.0
# Installed under a root named by its version: changing the pin installs anew.
WIT_BINDGEN_ROOT := target/tools/wit-bindgen-$(WIT_BINDGEN_VERSION)
WIT_BINDGEN := $(WIT_BINDGEN_ROOT)/bin/wit-bindgen
COMPONENT_LD = $(shell rustc --print sysroot)/lib/rustlib/$(shell rustc -vV | sed -n 's/^host: //p')/bin/wasm-component-ld

$(LANG_OUT)/.c-toolchain:
	dpkg -s $(C_PACKAGES) >/dev/null 2>&1 || (apt-get update && apt-get install -y $(C_PACKAGES))
	mkdir -p $(LANG_OUT)
	touch $@

# A debug build: it writes the bindings of one small world, in milliseconds
# either way, and compiles in a fraction of the time of an optimised one.
$(WIT_BINDGEN):
	$(CARGO) install --debug --locked --root $(WIT_BINDGEN_ROOT) wit-bindgen-cli --version $(WIT_BINDGEN_VERSION)

$(C_GEN)/plugin.c: $(WIT) $(WIT_BINDGEN)
	rm -rf $(C_GEN)
	$(WIT_BINDGEN) c wit --world plugin --out-dir $(C_GEN)

$(LANG_OUT)/c_tools.wasm: $(wildcard $(C_DIR)/*.c $(C_DIR)/*.h) $(C_GEN)/plugin.c $(LANG_OUT)/.c-toolchain
	clang --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -Wextra -D_GNU_SOURCE \
		-I$(C_GEN) -fuse-ld=$(COMPONENT_LD) -o $@ \
		$(wildcard $(C_DIR)/*.c) $(C_GEN)/plugin.c $(C_GEN)/plugin_component_type.o

## Every test: formatting, clippy, unit, golden, rule, runtime and sandbox tests,
## the A2A check. The guests are built once and shared by every test.
test: setup guests lint unit a2a-check conformance clients

## What the tests need beside cargo: the A2A reference implementation (PyPI),
## PostgreSQL's server (Debian), which the store tests start on a private cluster,
## and the CNCF distribution registry (Debian's docker-registry), which the
## distribution tests start on a loopback port.
setup: $(A2A_VENV)/.installed postgres registry

postgres:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }

registry:
	@command -v docker-registry >/dev/null || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry; }

$(A2A_VENV)/.installed: tests/a2a/requirements.txt
	$(PYTHON) -m venv $(A2A_VENV)
	$(A2A_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/a2a/requirements.txt
	touch $@

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path guest-examples/Cargo.toml --all -- --check
	$(CARGO) clippy --release --locked --all-targets -- -D warnings
	$(CARGO) clippy $(GUESTS) -- -D warnings

unit: postgres registry
	$(CARGO) test --release --locked

## Every A2A rendering of the golden matrix, and the A2A task of a call waiting
## for input (tests/a2a/input-required), parsed by the official a2a-sdk.
a2a-check: setup
	$(A2A_VENV)/bin/python tests/a2a/check_a2a.py tests/a2a/samples-selftest tests/a2a/input-required $(wildcard tests/golden/*/a2a.json)

## The official MCP conformance suite in both eras (Node 22 and the suite come
## from the npm registry); the per-check JSON lands in target/conformance/.
conformance: test-build guests
	tests/conformance/run.sh

## Real clients: the Python SDK (PyPI mcp 2.x) over stdio and HTTP in both eras,
## the MCP Inspector CLI (npm) in both eras, and for 2025-11-25's tasks the
## TypeScript and Python SDK 1.x; installed into tests/clients/.
clients: test-build guests
	tests/clients/run.sh

## The load-with-faults test at full size: 20,000 calls at 64 concurrency over
## HTTP, 5% to hostile tools (make test runs 4,000).
soak: guests
	TOOLHOST_LOAD_CALLS=20000 $(CARGO) test --release --locked --test integration load_faults:: -- --nocapture

## Regenerate the golden files after an intended change; review `git diff tests/golden`.
bless:
	TOOLHOST_BLESS=1 $(CARGO) test --release --locked --test integration golden_matrix::

## Benchmarks (issue #7): criterion's in-process costs (benches/call.rs), then the
## process-level ones (examples/bench.rs: stdio against a bare rmcp server, HTTP
## under wrk, start-up, memory) and P1 by instruction count (examples/p1_count.rs
## under valgrind, installed from Debian when missing, like wrk); prints one
## table and writes it into
## docs/benchmarks.md. Optional: WASSETTE=/path/to/wassette (built by hand) adds the
## peer; QUICK=1 shortens every run; PGO=1 builds `make pgo` first and measures its
## binary's stdio calls, start-up and memory beside the plain one's, and P1 with
## criterion's benchmark built profile-guided too (`make pgo-bench`). About 10
## minutes on 2 cores (PGO=1: the two builds of `make pgo` and the two of
## `make pgo-bench` more). PGO_BIN=/path/to/toolhost measures a profile-guided
## binary built earlier by `make pgo` (of the same tree) instead of building one,
## without P1's profile-guided rows.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
BENCH_BIN := target/bench/bin
PGO_DIR := $(TARGET_DIR)/pgo
# The profile-guided binary measured beside the plain one, if any.
BENCH_PGO := $(if $(filter 1,$(PGO)),$(PGO_DIR)/toolhost,$(PGO_BIN))

bench: guests $(if $(filter 1,$(PGO)),pgo pgo-bench)
	command -v wrk >/dev/null || (apt-get update && apt-get install -y wrk)
	command -v valgrind >/dev/null || (apt-get update && apt-get install -y valgrind)
	$(CARGO) build --release --locked --bin toolhost --examples
	# Copies: a shared target directory may be rebuilt under the running bench.
	mkdir -p $(BENCH_BIN)
	cp $(TARGET_DIR)/release/toolhost $(TARGET_DIR)/release/examples/native_add $(TARGET_DIR)/release/examples/wasmtime_add $(TARGET_DIR)/release/examples/bench $(TARGET_DIR)/release/examples/p1_count $(BENCH_BIN)/
	$(if $(BENCH_PGO),cp $(BENCH_PGO) $(BENCH_BIN)/toolhost-pgo)
	# Out of the page cache, so they start as a deployed binary does, read from
	# disk: pages just written by cp map differently (P5 read 5 MiB more).
	sync
	for f in $(BENCH_BIN)/*; do dd if=$$f iflag=nocache count=0 status=none; done
	# As a service runs: RUST_BACKTRACE makes every error on a fault path walk the stack.
	env -u RUST_BACKTRACE $(CARGO) bench --locked --bench call
	$(if $(filter 1,$(PGO)),env -u RUST_BACKTRACE TOOLHOST_BENCH_HTTP=0 CRITERION_HOME=$(abspath $(TARGET_DIR))/criterion-pgo \
		RUSTFLAGS="$(PGO_BENCH_USE_FLAGS)" $(PGO_CALL_BENCH) --target-dir $(PGO_BENCH_DIR)/use -- $(PGO_CALL_FILTER))
	env -u RUST_BACKTRACE TOOLHOST=$(BENCH_BIN)/toolhost NATIVE_ADD=$(BENCH_BIN)/native_add WASMTIME_ADD=$(BENCH_BIN)/wasmtime_add \
		P1_COUNT=$(BENCH_BIN)/p1_count \
		$(if $(BENCH_PGO),TOOLHOST_PGO=$(BENCH_BIN)/toolhost-pgo) \
		CRITERION_DIR=$(TARGET_DIR)/criterion \
		$(if $(filter 1,$(PGO)),CRITERION_PGO_DIR=$(abspath $(TARGET_DIR))/criterion-pgo) \
		WASSETTE=$(WASSETTE) QUICK=$(QUICK) $(BENCH_BIN)/bench

## A profile-guided build of the host, for deployment (docs/operating.md, "Speed"):
## an instrumented build serves the example tools to tests/bench/pgo-train.py
## (every example tool over stdio in each handshake revision and over Streamable
## HTTP, failures included), and a release build then lays out and optimises its
## code by that profile. Two full builds: 37 minutes on a slow 2-core VM. The binary is
## target/pgo/toolhost; `PGO=1 make bench` measures it beside the plain one.
HOST_TRIPLE = $(shell rustc -vV | sed -n 's/^host: //p')
LLVM_PROFDATA = $(shell rustc --print sysroot)/lib/rustlib/$(HOST_TRIPLE)/bin/llvm-profdata
# `--target`: the flags reach the host's code only, not build scripts or macros.
# The profile lays out the code itself: the link order of `make link-order` is
# left out (measured without it).
PGO_BUILD = TOOLHOST_LINK_ORDER=0 $(CARGO) build --release --locked --bin toolhost --target $(HOST_TRIPLE)
# keep-text-section-prefix: the hot functions together, the cold ones apart.
PGO_LAYOUT = -Clink-arg=-Wl,-z,keep-text-section-prefix
PGO_USE_FLAGS = -Cprofile-use=$(abspath $(PGO_DIR))/toolhost.profdata $(PGO_LAYOUT)

pgo: guests
	rustup component add llvm-tools
	rm -rf $(PGO_DIR)/profiles
	RUSTFLAGS="-Cprofile-generate=$(abspath $(PGO_DIR))/profiles" \
		$(PGO_BUILD) --target-dir $(PGO_DIR)/generate
	$(PYTHON) tests/bench/pgo-train.py $(PGO_DIR)/generate/$(HOST_TRIPLE)/release/toolhost
	$(LLVM_PROFDATA) merge -o $(PGO_DIR)/toolhost.profdata $(PGO_DIR)/profiles
	RUSTFLAGS="$(PGO_USE_FLAGS)" $(PGO_BUILD) --target-dir $(PGO_DIR)/use
	cp $(PGO_DIR)/use/$(HOST_TRIPLE)/release/toolhost $(PGO_DIR)/toolhost

## P1 of a profile-guided build: criterion's benchmark (benches/call.rs) built
## instrumented, trained on its own `call/` loop (the floor and toolhost alike), then
## built again with that profile. The server's profile of `make pgo` does not reach
## it: with the benchmark's dev-dependencies (their features unified into the
## host's), its crates are compiled under other symbol names. `PGO=1 make bench`
## runs it. Two builds of the benchmark: about 25 minutes on 2 cores.
PGO_BENCH_DIR := $(PGO_DIR)/bench
PGO_BENCH_USE_FLAGS = -Cprofile-use=$(abspath $(PGO_BENCH_DIR))/call.profdata $(PGO_LAYOUT)
PGO_CALL_BENCH = $(CARGO) bench --locked --bench call --target $(HOST_TRIPLE)
PGO_CALL_FILTER = '^call/(floor|toolhost/pooling)'

## The link order of the host (host/link-order.txt, which host/build.rs hands to
## the linker): the functions that `make pgo`'s training run spends its samples
## in, hottest first, placed together at the front of the binary's code
## (docs/benchmarks.md, "Link order"). Profiled in both builds, the plain one of
## `make run` and the one of the tests and benchmarks (the dev-dependencies'
## features change the symbols' names). Run it again when the dependencies
## change: names a build does not have are skipped, so a stale file costs speed,
## never a build. Needs `perf`; about 15 minutes on 2 cores, most of it building.
LINK_ORDER_DIR := $(TARGET_DIR)/link-order
link-order: guests
	command -v perf >/dev/null || (apt-get update && apt-get install -y linux-perf)
	mkdir -p $(LINK_ORDER_DIR)
	$(CARGO) build --release --locked --bin toolhost
	cp $(TARGET_DIR)/release/toolhost $(LINK_ORDER_DIR)/toolhost-run
	$(CARGO) build --release --locked --bin toolhost --examples
	cp $(TARGET_DIR)/release/toolhost $(LINK_ORDER_DIR)/toolhost-dev
	$(PYTHON) tests/bench/link-order.py host/link-order.txt 60 \
		$(LINK_ORDER_DIR)/toolhost-run $(LINK_ORDER_DIR)/toolhost-dev

pgo-bench: guests
	rustup component add llvm-tools
	rm -rf $(PGO_BENCH_DIR)/profiles
	env -u RUST_BACKTRACE TOOLHOST_BENCH_HTTP=0 CRITERION_HOME=$(abspath $(PGO_BENCH_DIR))/training \
		RUSTFLAGS="-Cprofile-generate=$(abspath $(PGO_BENCH_DIR))/profiles" \
		$(PGO_CALL_BENCH) --target-dir $(PGO_BENCH_DIR)/generate -- --profile-time 3 $(PGO_CALL_FILTER)
	$(LLVM_PROFDATA) merge -o $(PGO_BENCH_DIR)/call.profdata $(PGO_BENCH_DIR)/profiles
	RUSTFLAGS="$(PGO_BENCH_USE_FLAGS)" $(PGO_CALL_BENCH) --target-dir $(PGO_BENCH_DIR)/use --no-run

## Fuzzing (not part of `make test`): each cargo-fuzz target of fuzz/ for
## FUZZ_SECONDS seconds, one after the other. The stable toolchain serves: cargo-fuzz
## is installed under target/tools, RUSTC_BOOTSTRAP lets it pass its nightly flags,
## and `-s none` builds without a sanitizer (Rust code needs none for panics).
## The committed seeds (fuzz/seeds/<target>/) are copied into the working corpus
## (fuzz/corpus/<target>/, not committed); a crash lands in fuzz/artifacts/<target>/
## and stops the run. See docs/fuzzing.md. FUZZ_TARGETS picks a subset.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= legacy_parser mapper jsonrpc
CARGO_FUZZ_VERSION := 0.13.2
CARGO_FUZZ := target/tools/cargo-fuzz-$(CARGO_FUZZ_VERSION)/bin/cargo-fuzz
FUZZ := cd fuzz && RUSTC_BOOTSTRAP=1 ../$(CARGO_FUZZ)

$(CARGO_FUZZ):
	$(CARGO) install --locked --root target/tools/cargo-fuzz-$(CARGO_FUZZ_VERSION) cargo-fuzz@$(CARGO_FUZZ_VERSION)

fuzz: $(CARGO_FUZZ) rust-guests
	$(FUZZ) fuzz build -s none
	set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t; cp -n fuzz/seeds/$$t/* fuzz/corpus/$$t/ 2>/dev/null || true; \
		echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
		( $(FUZZ) fuzz run -s none $$t -- -max_total_time=$(FUZZ_SECONDS) -timeout=60 -rss_limit_mb=4096 ); \
	done
