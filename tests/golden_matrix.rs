//! The golden render matrix: every sample result through every renderer, revision
//! and mode, compared byte for byte with the checked-in file under
//! `tests/golden/<sample>/<target>.json`. A file holds the exact bytes a client
//! receives (for MCP, the `result` member of the JSON-RPC response as rmcp writes
//! it; `tests/wire.rs` checks that against running servers), then a newline.
//! Every MCP rendering is also validated against the official JSON schema of its
//! revision (`CallToolResult`), and written as text for stdio
//! (`RenderContext::mcp_as_text`), which must give the same bytes.
//!
//! To regenerate after an intended change: `TOOLHOST_BLESS=1 make test`, then
//! review `git diff tests/golden` before committing: the diff *is* the change in
//! what callers see.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use toolhost::render::{RenderContext, ServerInfo, Target};
use toolhost::samples;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/golden")
}

#[tokio::test]
async fn golden_matrix() {
    let bless = std::env::var_os("TOOLHOST_BLESS").is_some();
    let mapper = common::mapper();
    let schemas = common::McpSchemas::load();
    let mut mismatches = Vec::new();
    let mut invalid = Vec::new();
    let mut expected_files = BTreeSet::new();
    let all = samples::all();
    assert!(all.len() >= 12, "the matrix needs at least 12 samples");

    for sample in &all {
        for target in Target::all() {
            let mut ctx = RenderContext::new(sample.name, samples::render_time());
            ctx.output_schema = sample.output_schema.as_ref();
            ctx.request_id = "req-1";
            ctx.server = Some(ServerInfo {
                name: "toolhost",
                version: env!("CARGO_PKG_VERSION"),
            });
            let rendered = mapper.render(&sample.result, target, &ctx).await;
            let text = rendered.rendering.to_json() + "\n";
            let path = golden_dir()
                .join(sample.name)
                .join(format!("{target}.json"));
            expected_files.insert(path.clone());

            // Over stdio the mapper writes the text itself: the same bytes.
            if let Target::Mcp { .. } = target {
                let mut stdio = ctx;
                stdio.mcp_as_text = true;
                let written = mapper.render(&sample.result, target, &stdio).await;
                let written = written.rendering.into_json() + "\n";
                if written != text {
                    mismatches.push(format!(
                        "{}: the text written for stdio differs from rmcp's from byte {}",
                        path.display(),
                        first_difference(&text, &written)
                    ));
                }
            }
            if let Target::Mcp { revision, .. } = target
                && let Err(errors) =
                    schemas.check_call_tool_result(revision, &rendered.rendering.to_value())
            {
                invalid.push(format!("{}: {errors}", path.display()));
            }
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
            } else {
                match std::fs::read_to_string(&path) {
                    Ok(golden) if golden == text => {}
                    Ok(golden) => mismatches.push(format!(
                        "{} differs from byte {}",
                        path.display(),
                        first_difference(&golden, &text)
                    )),
                    Err(e) => mismatches.push(format!("{} cannot be read: {e}", path.display())),
                }
            }
        }
    }

    let stale: Vec<_> = walk(&golden_dir())
        .into_iter()
        .filter(|path| !expected_files.contains(path))
        .collect();
    if bless {
        for path in &stale {
            std::fs::remove_file(path).unwrap();
        }
    }
    assert!(
        invalid.is_empty(),
        "renderings that break their revision's schema:\n{}",
        invalid.join("\n")
    );
    assert!(
        mismatches.is_empty(),
        "{} golden rendering(s) differ from what the mapper renders now:\n{}\n\
         If the change is intended, run `TOOLHOST_BLESS=1 make test` and review `git diff tests/golden`.",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert!(
        bless || stale.is_empty(),
        "golden files for no sample or target (remove them, or bless):\n{:?}",
        stale
    );
    assert!(
        expected_files.len() >= 12 * 12,
        "{} renderings",
        expected_files.len()
    );
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(golden_dir().join(path.strip_prefix(golden_dir()).unwrap()));
            }
        }
    }
    files
}

/// Where `a` and `b` first differ, with a little of each from there.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = at.saturating_sub(20);
    let show = |s: &str| s.get(from..(at + 40).min(s.len())).unwrap_or("").to_owned();
    format!("{at}: golden {:?}, now {:?}", show(a), show(b))
}
