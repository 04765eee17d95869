#!/usr/bin/env python3
"""Writes the host's link order (`host/link-order.txt`, `make link-order`): the
functions a serving toolhost runs, hottest first, for the linker to place
together at the front of the binary's code.

A release build leaves the functions of one call scattered over 32 MB of code,
so each call touches many pages and cache lines that the one before it had to
give up. With the hot functions side by side, sequential stdio calls/s rose a few
per cent; the idle server's memory did not measurably change (docs/benchmarks.md,
"Link order").

For each binary given, this runs the training of a profile-guided build
(`pgo-train.py`: every example tool over stdio in each handshake revision and
over Streamable HTTP, the servers started and stopped) under `perf record`, and
lists the binary's functions by how many samples fell in them. Symbol names
carry a hash of the build's dependency features, so the plain build
(`cargo build --release`, what `make run` serves) and the one of the tests and
benchmarks (`--examples`, the dev-dependencies' features unified) name the same
function differently: give both, and the file holds both lists, each in its own
order. The linker skips the names the binary it links does not have.

    link-order.py OUT ROUNDS BINARY...
"""

import collections
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def hot_functions(binary, rounds, workdir):
    """The mangled names of `binary`'s functions sampled while it serves the
    training run, the most sampled first."""
    data = os.path.join(workdir, os.path.basename(binary) + ".perf")
    subprocess.run(
        ["perf", "record", "--quiet", "-F", "20000", "-o", data, "--",
         sys.executable, os.path.join(HERE, "pgo-train.py"), binary, str(rounds)],
        check=True,
    )
    report = subprocess.run(
        ["perf", "report", "-i", data, "--dso", os.path.basename(binary),
         "--no-demangle", "--sort", "sym", "-F", "sample,sym", "--stdio"],
        check=True, capture_output=True, text=True,
    ).stdout
    samples = collections.Counter()
    for line in report.splitlines():
        # "  1234  [.] _RNv..."; unresolved addresses ("0x...") name nothing.
        parts = line.split()
        if len(parts) == 3 and parts[1] == "[.]" and not parts[2].startswith("0x"):
            samples[parts[2]] += int(parts[0])
    if not samples:
        raise SystemExit(f"perf recorded no samples in {binary}: is perf allowed here?")
    return [name for name, _ in samples.most_common()]


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    out, rounds, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    names, seen = [], set()
    with tempfile.TemporaryDirectory() as workdir:
        for binary in binaries:
            for name in hot_functions(binary, rounds, workdir):
                if name not in seen:
                    seen.add(name)
                    names.append(name)
    with open(out, "w") as file:
        file.write("\n".join(names) + "\n")
    print(f"link-order: {len(names)} functions into {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
