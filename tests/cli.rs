//! The `toolhost` command line, run as a user would: `check`, `call` and `tools`,
//! with the commands `docs/writing-tools.md` shows (those of the JavaScript, Python
//! and C sections run exactly as written there).

use crate::common;

use std::process::{Command, Output};

use common::host::{guest, root};

fn toolhost(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(root())
        .env("TOOLHOST_LOG", "warn")
        .output()
        .expect("running toolhost")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn check_accepts_a_good_component() {
    let output = toolhost(&["check", guest("calc").to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert_eq!(stdout(&output), "", "no findings");
}

/// `check` says which package version a component was built against and what
/// it offers beside tools.
#[test]
fn check_names_the_package_version_and_the_offers() {
    let old = toolhost(&["check", guest("samples_v0_1").to_str().unwrap()]);
    assert!(
        stderr(&old).contains("toolhost:plugin@0.1.0, world plugin, 8 tool(s), 0 error(s)"),
        "{}",
        stderr(&old)
    );
    let notes = toolhost(&["check", guest("notes").to_str().unwrap()]);
    assert!(
        notes.status.success(),
        "{}{}",
        stdout(&notes),
        stderr(&notes)
    );
    assert!(
        stderr(&notes).contains(
            "toolhost:plugin@0.2.0, world plugin, 2 tool(s), 1 prompt(s), 1 resource(s), 1 resource template(s), 0 error(s)"
        ),
        "{}",
        stderr(&notes)
    );
}

#[test]
fn check_rejects_a_component_of_no_toolhost_world() {
    let output = toolhost(&["check", guest("not_a_tool").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("error: ")
            && text.contains("exports neither toolhost:plugin/tool (world plugin)"),
        "{text}"
    );
    assert!(
        text.contains("wasi:cli/run"),
        "it says what the component is instead: {text}"
    );
}

#[test]
fn check_rejects_duplicates_invalid_schemas_and_bad_names_one_line_each() {
    let output = toolhost(&["check", guest("broken").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 3, "{text}");
    assert!(
        errors
            .iter()
            .any(|l| l.contains("\"twice\": described twice")),
        "{text}"
    );
    assert!(
        errors.iter().any(|l| l.contains(
            "\"invalid_schema\": the input schema is not valid JSON Schema: at /properties/a/type"
        )),
        "{text}"
    );
    assert!(
        errors.iter().any(|l| l.contains("\"bad name!\": the name")),
        "{text}"
    );
}

#[test]
fn check_warns_about_legacy_envelopes_and_refuses_them_when_strict() {
    let app = guest("legacy_app");
    let lenient = toolhost(&["check", app.to_str().unwrap()]);
    assert!(lenient.status.success());
    assert!(
        stdout(&lenient).starts_with("warning: ") && stdout(&lenient).contains("deprecated"),
        "{}",
        stdout(&lenient)
    );
    let strict = toolhost(&["check", "--strict", app.to_str().unwrap()]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(
        stdout(&strict).starts_with("error: "),
        "{}",
        stdout(&strict)
    );
}

/// The commands of the Rust section of docs/writing-tools.md.
#[test]
fn the_documented_commands_work() {
    let docs = std::fs::read_to_string(root().join("docs/writing-tools.md")).unwrap();
    assert!(
        docs.contains("toolhost check"),
        "the guide shows toolhost check"
    );
    assert!(
        docs.contains("toolhost call hello --plugin"),
        "the guide shows toolhost call with --plugin"
    );
    let hello = guest("hello");
    let output = toolhost(&[
        "call",
        "hello",
        "--plugin",
        hello.to_str().unwrap(),
        "--args",
        r#"{"name":"Ada"}"#,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let rendered: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(
        rendered["content"].to_string().contains("Hello, Ada!"),
        "{rendered}"
    );
    assert_eq!(
        rendered["resultType"], "complete",
        "the latest revision by default"
    );
}

/// The line that marks a block of docs/writing-tools.md this test runs as written.
const RUN_MARKER: &str = "<!-- tests/cli.rs runs this block -->";

/// Each marked block of `docs`: the heading of its section and its lines.
fn marked_blocks(docs: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut heading = String::new();
    let mut lines = docs.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("## ") {
            heading = line.trim_start_matches("## ").to_owned();
        }
        if line.trim() == RUN_MARKER {
            let fence = lines.next().unwrap_or_default();
            assert_eq!(
                fence, "```sh",
                "{heading}: the marker must stand right above a ```sh block"
            );
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push((heading.clone(), body.join("\n")));
        }
    }
    blocks
}

/// The build, check and call commands of the JavaScript, Python and C sections of
/// docs/writing-tools.md, run as written by `sh -e` from the repository root, with
/// this toolhost and the toolchains `make guests` installs on the `PATH`. Each
/// builds its example into its own directory and calls its `word_stats`.
#[test]
fn the_documented_commands_of_every_language_work() {
    let docs = std::fs::read_to_string(root().join("docs/writing-tools.md")).unwrap();
    let blocks = marked_blocks(&docs);
    let sections: Vec<&str> = blocks.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(sections, ["JavaScript", "Python", "C"], "the marked blocks");

    let toolhost_dir = std::path::Path::new(env!("CARGO_BIN_EXE_toolhost"))
        .parent()
        .unwrap()
        .to_path_buf();
    // What `make guests` installs: componentize-js (npx finds it in the example's
    // node_modules; its .bin stays off the PATH, because clang would run binaryen's
    // wasm-opt from there on the C component, see the guide), componentize-py in
    // a virtualenv and wit-bindgen (under a root named by its version).
    let js = root().join("guest-examples/js-tools/node_modules/.installed");
    let wit_bindgen = std::fs::read_dir(root().join("target/tools"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("wit-bindgen-"))
        })
        .max()
        .unwrap_or_else(|| root().join("target/tools/wit-bindgen-<version>"));
    let bins = [
        root().join("guest-examples/target/py-venv/bin"),
        wit_bindgen.join("bin"),
    ];
    for needed in bins.iter().chain([&js]) {
        assert!(
            needed.exists(),
            "{} is missing: run `make guests` first",
            needed.display()
        );
    }
    let path = std::env::join_paths(std::iter::once(toolhost_dir).chain(bins).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();

    for (section, block) in blocks {
        assert!(
            block.contains("toolhost check ") && block.contains("toolhost call word_stats "),
            "{section}: the block checks and calls the tool:\n{block}"
        );
        let output = Command::new("sh")
            .args(["-e", "-c", &block])
            .current_dir(root())
            .env("PATH", &path)
            .env("TOOLHOST_LOG", "warn")
            .output()
            .expect("running sh");
        let out = stdout(&output);
        assert!(
            output.status.success(),
            "{section}: the documented commands failed:\n{block}\n{out}{}",
            stderr(&output)
        );
        // `toolhost check` printed no findings: no warning, no error.
        assert!(
            !out.contains("warning: ") && !out.contains("error: "),
            "{section}: {out}"
        );
        // The call's rendering is the JSON at the end of the output (after what the
        // build tools print, if anything).
        let start = if out.starts_with('{') {
            0
        } else {
            out.find("\n{")
                .map(|i| i + 1)
                .unwrap_or_else(|| panic!("{section}: no rendering in {out}"))
        };
        let rendered: serde_json::Value = serde_json::from_str(&out[start..])
            .unwrap_or_else(|e| panic!("{section}: {e} in {out}"));
        assert_eq!(
            rendered["structuredContent"],
            serde_json::json!({"characters": 12, "lines": 1, "words": 2}),
            "{section}: {rendered}"
        );
    }
}

#[test]
fn call_renders_for_the_chosen_revision_mode_and_format() {
    let calc = guest("calc");
    let calc = calc.to_str().unwrap();
    let args = [
        "call",
        "range",
        "--plugin",
        calc,
        "--args",
        r#"{"start":1,"end":3}"#,
    ];
    let old = toolhost(&[&args[..], &["--revision", "2025-06-18", "--mode", "spec"]].concat());
    let old: serde_json::Value = serde_json::from_str(&stdout(&old)).unwrap();
    assert_eq!(
        old["structuredContent"],
        serde_json::json!({"result": [1, 2]})
    );
    assert_eq!(old["content"][0]["text"], "[1,2]");
    let legacy = toolhost(&[&args[..], &["--format", "legacy"]].concat());
    let legacy: serde_json::Value = serde_json::from_str(&stdout(&legacy)).unwrap();
    assert_eq!(legacy["success"], true);
    assert_eq!(legacy["data"], serde_json::json!([1, 2]));
    let failed = toolhost(&[
        "call",
        "divide",
        "--plugin",
        calc,
        "--args",
        r#"{"a":1,"b":0}"#,
    ]);
    assert_eq!(failed.status.code(), Some(1), "a failed result exits 1");
    let unknown = toolhost(&["call", "nope", "--plugin", calc]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("the tools are: add, range, divide"),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn configuration_problems_name_the_file_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[[plugin]]\npath = \"a.wasm\"\n[plugin.policy]\nmemroy_mib = 3\n",
    )
    .unwrap();
    let output = toolhost(&["tools", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(&config.display().to_string())
            && stderr(&output).contains("memroy_mib"),
        "{}",
        stderr(&output)
    );

    // The same tool from two plugins: an error naming both.
    let hello = guest("hello");
    std::fs::write(&config, format!("[[plugin]]\nname = \"one\"\npath = \"{0}\"\n[[plugin]]\nname = \"two\"\npath = \"{0}\"\n", hello.display())).unwrap();
    let output = toolhost(&["tools", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.contains("\"hello\" is offered twice")
            && text.contains("plugin one")
            && text.contains("plugin two"),
        "{text}"
    );

    // Plugins load a few at once, but the error is that of the first one in the
    // configuration that fails: here the second fails at once (not a
    // component), the first only once it is compiled and inspected.
    let garbage = dir.path().join("garbage.wasm");
    std::fs::write(&garbage, b"not a component").unwrap();
    std::fs::write(
        &config,
        format!(
            "[[plugin]]\nname = \"first\"\npath = \"{}\"\nworld = \"legacy-app\"\n[[plugin]]\nname = \"second\"\npath = \"{}\"\n",
            hello.display(),
            garbage.display()
        ),
    )
    .unwrap();
    let output = toolhost(&["tools", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.contains(&hello.display().to_string())
            && text.contains("configured as world legacy-app")
            && !text.contains("garbage.wasm"),
        "{text}"
    );

    // A missing component says how to get it.
    std::fs::write(&config, "[[plugin]]\npath = \"missing.wasm\"\n").unwrap();
    let output = toolhost(&["tools", "--config", config.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("missing.wasm") && stderr(&output).contains("make guests"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn tools_lists_the_example_tools_of_the_embedded_defaults() {
    let output = toolhost(&["tools"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for tool in [
        "\"hello\"",
        "\"add\"",
        "\"read_file\"",
        "\"media\"",
        "\"bulk\"",
        "\"fail\"",
        "\"legacy_success\"",
        "\"word_stats\"",
        "\"js_word_stats\"",
        "\"js_countdown\"",
        "\"py_color\"",
        "\"c_number_facts\"",
        "\"order_status\"",
    ] {
        assert!(text.contains(tool), "{tool} missing from {text}");
    }
}
