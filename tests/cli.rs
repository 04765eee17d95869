//! The `toolhost` command line, run as a user would: `check`, `call` and `tools`,
//! with the commands `docs/writing-tools.md` shows.

mod common;

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

#[test]
fn check_rejects_a_component_of_no_toolhost_world() {
    let output = toolhost(&["check", guest("not_a_tool").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("error: ") && text.contains("exports neither toolhost:plugin/tool@0.1.0"),
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
    ] {
        assert!(text.contains(tool), "{tool} missing from {text}");
    }
}
