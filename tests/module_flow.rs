//! The modules of `host/src` import one way, from the edge inward.
//!
//! A call flows mcp -> catalog -> runtime -> result -> render -> store; the
//! layers below say which top-level module may import which (`docs/decisions.md`,
//! "Module layers"). This test reads every file under `host/src`, strips its
//! comments, doc comments, strings and character literals, and checks each
//! `crate::<module>` path, whether in a `use` (also inside `crate::{..}`
//! groups) or in an expression. A failure names the file, the line, the import
//! and the rule it breaks.
//!
//! What it does not read: `main.rs`, the binary, which sees the library as
//! `toolhost::` and may use all of it; and `super::` paths, which in this crate
//! only ever reach within a module (a path to another top-level module is
//! written `crate::`).

use std::fmt;
use std::path::{Path, PathBuf};

/// The layers from the edge inward: each may import the layers to its right.
const ORDER: [&str; 9] = [
    "app", "mcp", "catalog", "supply", "runtime", "config", "render", "store", "result",
];

/// Modules narrower than their place in [`ORDER`] (or outside it): they may
/// import only the modules listed. A module in neither list may import none,
/// and one that is not in [`ORDER`] (`samples`) may be imported by none.
const ONLY: [(&str, &[&str]); 4] = [
    ("config", &["render"]),
    ("store", &[]),
    ("result", &[]),
    ("samples", &["result", "render"]),
];

/// Why `from` may not import `to`, or `None` when it may.
fn broken_rule(from: &str, to: &str) -> Option<String> {
    if from == to {
        return None;
    }
    let order = ORDER.join(" -> ");
    if !ORDER.contains(&to) {
        return Some(format!(
            "`{to}` is no layer of the order ({order}): nothing in the library imports it"
        ));
    }
    if let Some((_, allowed)) = ONLY.iter().find(|(module, _)| *module == from) {
        if allowed.contains(&to) {
            return None;
        }
        return Some(if allowed.is_empty() {
            format!("`{from}` is a leaf: it imports nothing from the crate")
        } else {
            format!("`{from}` imports only {}", allowed.join(", "))
        });
    }
    let Some(at) = ORDER.iter().position(|m| *m == from) else {
        return Some(format!(
            "`{from}` has no layer: add it to ORDER (and docs/decisions.md) where it belongs"
        ));
    };
    let to_at = ORDER.iter().position(|m| *m == to).expect("checked above");
    (to_at < at).then(|| {
        format!("`{to}` comes before `{from}` in {order}: imports point from the edge inward")
    })
}

/// One `crate::<module>` path in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Import {
    /// 1-based.
    line: usize,
    /// The top-level module the path names.
    module: String,
}

/// `source` with every comment, string and character literal replaced by
/// spaces; line breaks stay, so lines keep their numbers.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let after_ident = i > 0 && is_ident(chars[i - 1]);
        let start = i;
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if !after_ident && let Some(end) = raw_string_end(&chars, i) {
            i = end;
        } else if c == '"' || (c == 'b' && !after_ident && next == Some('"')) {
            i += if c == 'b' { 2 } else { 1 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // The quote, the backslash and the escaped character, then the rest
            // of a longer escape (`'\u{2713}'`) up to the closing quote.
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            // Code, and a lifetime or label (`'a` without a closing quote).
            out.push(c);
            i += 1;
            continue;
        }
        let end = i.min(chars.len());
        out.extend(chars[start..end].iter().map(|&c| blank(c)));
    }
    out
}

/// Where the raw string (`r"..."`, `r#"..."#`, `br"..."`) starting at `i` ends.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        let closing_hashes = chars[j + 1..].iter().take_while(|&&c| c == '#').count();
        if chars[j] == '"' && closing_hashes >= hashes {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// Every `crate::<module>` path in `source`, including each top-level module of
/// a `crate::{a::.., b}` group; `$crate` (a macro's own crate) is not one.
fn imports(source: &str) -> Vec<Import> {
    let code: Vec<char> = code_only(source).chars().collect();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let line_at = |i: usize| 1 + code[..i].iter().filter(|&&c| c == '\n').count();
    let skip_space = |mut i: usize| {
        while code.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        i
    };
    let ident_at =
        |i: usize| -> String { code[i..].iter().take_while(|&&c| is_ident(c)).collect() };
    let mut found = Vec::new();
    let mut i = 0;
    while i + 5 <= code.len() {
        let starts = code[i..].starts_with(&['c', 'r', 'a', 't', 'e'])
            && (i == 0 || !(is_ident(code[i - 1]) || code[i - 1] == '$'))
            && !code.get(i + 5).is_some_and(|&c| is_ident(c));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = skip_space(i + 5);
        if !code[j..].starts_with(&[':', ':']) {
            i += 5;
            continue;
        }
        j = skip_space(j + 2);
        if code.get(j) == Some(&'{') {
            // The first segment of each item of the group, at its top level.
            let mut depth = 0;
            let mut item_start = true;
            while j < code.len() {
                match code[j] {
                    '{' => {
                        depth += 1;
                        item_start = depth == 1;
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if item_start && is_ident(c) => {
                        item_start = false;
                        let module = ident_at(j);
                        j += module.len();
                        if module != "self" {
                            found.push(Import {
                                line: line_at(j),
                                module,
                            });
                        }
                        continue;
                    }
                    _ => {}
                }
                j += 1;
            }
        } else {
            let module = ident_at(j);
            if !module.is_empty() {
                found.push(Import {
                    line: line_at(j),
                    module,
                });
            }
        }
        i = j.max(i + 5);
    }
    found
}

/// The top-level module a file under `host/src` belongs to (`None`: the crate
/// roots `lib.rs` and `main.rs`).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        file => Some(file.trim_end_matches(".rs").to_owned()),
    }
}

/// One import that breaks the layers.
struct Violation {
    file: PathBuf,
    line: usize,
    text: String,
    module: String,
    rule: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: imports `crate::{}` ({}): {}",
            self.file.display(),
            self.line,
            self.module,
            self.text.trim(),
            self.rule
        )
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// Every import of every file under `host/src`, with the rule each breaks.
fn scan() -> (usize, Vec<Violation>) {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let (mut seen, mut violations) = (0, Vec::new());
    for path in files {
        let relative = path.strip_prefix(&root).unwrap();
        let Some(from) = module_of(relative) else {
            continue;
        };
        let source = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = source.lines().collect();
        for import in imports(&source) {
            seen += 1;
            if let Some(rule) = broken_rule(&from, &import.module) {
                violations.push(Violation {
                    file: Path::new("host/src").join(relative),
                    line: import.line,
                    text: lines[import.line - 1].to_owned(),
                    module: import.module,
                    rule,
                });
            }
        }
    }
    (seen, violations)
}

#[test]
fn no_module_imports_one_later_in_the_flow() {
    let (seen, violations) = scan();
    // A scanner that found nothing would pass anything: the crate has over
    // sixty such paths, the mapper's import of the store among them.
    assert!(seen > 50, "only {seen} crate:: paths found under host/src");
    let mapper = std::fs::read_to_string(src().join("render/mapper.rs")).unwrap();
    assert!(
        imports(&mapper).iter().any(|i| i.module == "store"),
        "the scanner does not see render/mapper.rs import the store"
    );
    assert!(
        violations.is_empty(),
        "{} import(s) against the layers ({}; see docs/decisions.md):\n{}",
        violations.len(),
        ORDER.join(" -> "),
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_module_of_the_library_has_a_layer() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let code = code_only(&lib);
    let modules: Vec<&str> = code
        .lines()
        .filter_map(|line| {
            let line = line.trim().strip_prefix("pub ").unwrap_or(line.trim());
            line.strip_prefix("mod ")?.strip_suffix(';')
        })
        .collect();
    assert!(modules.contains(&"runtime"), "{modules:?}");
    for module in modules {
        assert!(
            ORDER.contains(&module) || ONLY.iter().any(|(m, _)| *m == module),
            "host/src/lib.rs declares `mod {module}`, which has no layer: add it to ORDER or ONLY in tests/module_flow.rs and to docs/decisions.md"
        );
    }
}

#[test]
fn the_rules_are_the_documented_order() {
    for (from, to) in [
        ("app", "mcp"),
        ("mcp", "store"),
        ("catalog", "runtime"),
        ("runtime", "config"),
        ("runtime", "render"),
        ("runtime", "store"),
        ("config", "render"),
        ("render", "store"),
        ("render", "result"),
        ("samples", "render"),
        ("samples", "result"),
    ] {
        assert_eq!(broken_rule(from, to), None, "{from} -> {to}");
    }
    for (from, to, rule) in [
        ("catalog", "mcp", "comes before"),
        ("render", "runtime", "comes before"),
        ("result", "render", "is a leaf"),
        ("store", "result", "is a leaf"),
        ("store", "config", "is a leaf"),
        ("config", "result", "imports only render"),
        ("config", "runtime", "imports only render"),
        ("render", "samples", "no layer of the order"),
        ("mcp", "app", "comes before"),
        ("extra", "result", "has no layer"),
    ] {
        let broken = broken_rule(from, to).unwrap_or_else(|| panic!("{from} -> {to} passed"));
        assert!(broken.contains(rule), "{from} -> {to}: {broken}");
    }
}

#[test]
fn the_scanner_reads_paths_and_groups_and_skips_comments_and_strings() {
    let source = r####"use crate::render::Mapper;
use crate::{store::Kept, result::{ToolResult, Outcome}};
// use crate::mcp::Server;
/// See [`crate::app`].
/* crate::catalog /* nested crate::catalog */ crate::catalog */
const A: &str = "crate::catalog";
const B: &str = r#"crate::catalog "quoted" "#;
const C: &[u8] = b"crate::catalog\"";
fn f<'a>(x: &'a str) -> char { let _ = crate :: config::load(x); 'c' }
macro_rules! m { () => { $crate::mcp::x() } }
fn g() { let q = '"'; crate::runtime::Runtime::new(); let e = ['\'', '\u{27}']; }
use crate::{
    self as root,
    samples,
};
"####;
    let found = imports(source);
    let found: Vec<(usize, &str)> = found.iter().map(|i| (i.line, i.module.as_str())).collect();
    assert_eq!(
        found,
        vec![
            (1, "render"),
            (2, "store"),
            (2, "result"),
            (9, "config"),
            (11, "runtime"),
            (14, "samples"),
        ]
    );
}
