#!/bin/sh
# Load times of one example component per language (docs/benchmarks.md): the
# release host's `toolhost tools` with a configuration holding only that plugin,
# once with an empty compile cache (the first load: Cranelift compiles the
# component) and once with the cache filled (a restart: it is read back).
#
#   make build guests && tests/bench/load-times.sh
#
# Needs hyperfine (Debian: apt-get install -y hyperfine). Results go to
# target/bench/load-<name>-{cold,warm}.json and a table on stdout.
set -eu
cd "$(dirname "$0")/../.."
command -v hyperfine >/dev/null || { echo "hyperfine is missing: apt-get install -y hyperfine" >&2; exit 2; }
[ -x target/release/toolhost ] || { echo "target/release/toolhost is missing: run make build" >&2; exit 2; }

out=target/bench
mkdir -p "$out"
COLD_RUNS=${COLD_RUNS:-3}
WARM_RUNS=${WARM_RUNS:-10}
rm -f "$out/sizes.tsv.tmp"

for entry in \
    "rust guest-examples/target/wasm32-wasip2/release/word_stats.wasm" \
    "c guest-examples/target/lang/c_tools.wasm" \
    "javascript guest-examples/target/lang/js_tools.wasm" \
    "python guest-examples/target/lang/py_tools.wasm"; do
    name=${entry%% *}
    wasm=${entry#* }
    [ -f "$wasm" ] || { echo "$wasm is missing: run make guests" >&2; exit 2; }
    dir="$out/load-$name"
    rm -rf "$dir"
    mkdir -p "$dir"
    printf '[host]\ndata_dir = "%s/data"\n\n[[plugin]]\npath = "%s"\n' "$PWD/$dir" "$PWD/$wasm" >"$dir/toolhost.toml"
    cmd="target/release/toolhost tools --config $dir/toolhost.toml"
    hyperfine --style basic --runs "$COLD_RUNS" --prepare "rm -rf $dir/data/compile-cache" \
        --export-json "$out/load-$name-cold.json" --command-name "$name cold" "$cmd"
    hyperfine --style basic --runs "$WARM_RUNS" --warmup 1 \
        --export-json "$out/load-$name-warm.json" --command-name "$name cached" "$cmd"
    printf '%s\t%s bytes\n' "$name" "$(wc -c <"$wasm")" >>"$out/sizes.tsv.tmp"
done
mv "$out/sizes.tsv.tmp" "$out/sizes.tsv"

echo
echo "| language | component | first load (cold cache) | cached load |"
echo "|---|---|---|---|"
for name in rust c javascript python; do
    python3 - "$out" "$name" <<'PY'
import json, sys
out, name = sys.argv[1], sys.argv[2]
def stat(kind):
    r = json.load(open(f"{out}/load-{name}-{kind}.json"))["results"][0]
    return f"{r['mean']*1000:.0f} ms ± {r['stddev']*1000:.0f}"
size = dict(l.rstrip("\n").split("\t") for l in open(f"{out}/sizes.tsv"))[name]
print(f"| {name} | {int(size.split()[0]) / 1e6:.2f} MB | {stat('cold')} | {stat('warm')} |")
PY
done
