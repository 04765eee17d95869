//! P1 by instruction count: `p1_count` (floor, text, typed) run under
//! `valgrind --tool=callgrind`, twice each with different numbers of calls; the
//! difference over the difference in calls is one call's instructions, whatever
//! else the machine is doing. The wall-clock ratios of criterion move by ±0.1
//! from run to run on shared VMs; these move by a few thousandths.

use std::path::Path;
use std::process::Command;

/// Instructions of one call of each of P1's paths.
pub struct Counts {
    pub floor: f64,
    /// The result's text written by the mapper (stdio, and HTTP without a session).
    pub text: f64,
    /// rmcp's typed result, serialized (HTTP in a session).
    pub typed: f64,
}

/// Counts one call of each path with the `p1_count` binary `bin`, from runs of
/// `fewer` and `more` calls.
///
/// # Errors
///
/// When valgrind is missing or a run fails: what went wrong, to print as a note.
pub fn p1(bin: &Path, (fewer, more): (usize, usize)) -> Result<Counts, String> {
    let found = Command::new("valgrind").arg("--version").output();
    if !found.is_ok_and(|out| out.status.success()) {
        return Err(
            "valgrind is not installed (`apt-get install valgrind`): no instruction counts for P1"
                .into(),
        );
    }
    let dir = tempfile::tempdir().map_err(|e| format!("a directory for callgrind: {e}"))?;
    // The main thread's instructions in a run of `calls` calls of `path`.
    let instructions = |path: &str, calls: usize| -> Result<u64, String> {
        let out = dir.path().join(format!("{path}-{calls}"));
        let run = Command::new("valgrind")
            .args(["--tool=callgrind", "--separate-threads=yes"])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(bin)
            .args([path, &calls.to_string()])
            .output()
            .map_err(|e| format!("valgrind {}: {e}", bin.display()))?;
        if !run.status.success() {
            let stderr = String::from_utf8_lossy(&run.stderr);
            return Err(format!("p1_count {path} under valgrind failed: {stderr}"));
        }
        main_thread_total(&out)
    };
    let per_call = |path: &str| -> Result<f64, String> {
        let (few, many) = (instructions(path, fewer)?, instructions(path, more)?);
        Ok((many as f64 - few as f64) / (more - fewer) as f64)
    };
    Ok(Counts {
        floor: per_call("floor")?,
        text: per_call("text")?,
        typed: per_call("typed")?,
    })
}

/// The instructions of the main thread, which makes the calls (the instance
/// runs on it too, on wasmtime's fiber): the `totals:` line of callgrind's file
/// for thread 1 (`<out>-01`). The other threads (the epoch ticker, tokio's idle
/// worker) do work by the clock, not by the call, and a longer run would count
/// more of it.
fn main_thread_total(out: &Path) -> Result<u64, String> {
    let file = format!("{}-01", out.display());
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    text.lines()
        .find_map(|line| line.strip_prefix("totals:")?.trim().parse().ok())
        .ok_or_else(|| format!("{file}: no `totals:` line"))
}
