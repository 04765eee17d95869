//! What a plugin offers beside tools (`toolhost:plugin@0.2.0`): prompts,
//! resources and completions, through the catalog as the MCP handler uses it.
//! Each runs in the sandbox under the plugin's budgets; privileges hide them as
//! they hide tools; a URI belongs to one plugin.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::host::{TestHost, guest, root};
use serde_json::{Map, Value, json};
use toolhost::catalog::{Caller, Catalog};
use toolhost::config::Config;
use toolhost::result::{Contents, ErrorCode, Prompt, ResourceBody, ToolError};
use toolhost::runtime::{CallIo, EngineSettings, Offered, Runtime};

fn conformance(policy: &str) -> String {
    format!(
        "[[plugin]]\npath = \"{}\"\n{policy}",
        guest("conformance").display()
    )
}

/// What a prompt's `get` or a resource's `read` answered to a caller that
/// cannot be asked (these prompts and resources ask nothing).
fn answered<T>(offered: Result<Offered<T>, ToolError>) -> Result<T, ToolError> {
    match offered? {
        Offered::Answer(answer) => Ok(answer),
        Offered::Asking(questions) => panic!("asked {questions:?} without an asker"),
    }
}

async fn get_prompt(catalog: &Catalog, name: &str, id: &str) -> Result<Prompt, ToolError> {
    let prompt = catalog.prompt(name).unwrap();
    answered(
        catalog
            .get_prompt(prompt, None, &Caller::local(), id, CallIo::default())
            .await,
    )
}

async fn read(catalog: &Catalog, uri: &str, caller: &Caller) -> Result<Vec<Contents>, ToolError> {
    answered(
        catalog
            .read_resource(uri, caller, "r-1", CallIo::default())
            .await,
    )
}

fn arguments(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn a_prompt_larger_than_the_result_budget_ends_with_resource_limit() {
    let host = TestHost::new(&conformance("[plugin.policy]\nmax_result_bytes = 200\n")).await;
    let catalog = &host.catalog;
    let filled = get_prompt(catalog, "test_simple_prompt", "r-1").await;
    assert_eq!(filled.unwrap().messages.len(), 1, "a small prompt fits");

    let error = get_prompt(catalog, "test_prompt_with_image", "r-2")
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::ResourceLimit, "{error:?}");
    assert!(
        error.message.contains("over the budget of 200 bytes"),
        "{}",
        error.message
    );
    assert_eq!(
        error.details.as_ref().unwrap()["budget"],
        "max_result_bytes"
    );

    // The next request is served.
    let again = get_prompt(catalog, "test_simple_prompt", "r-3").await;
    assert!(again.is_ok());
}

#[tokio::test]
async fn resources_read_by_uri_and_by_template_and_unknown_ones_are_not_found() {
    let host = TestHost::new(&conformance("")).await;
    let catalog = &host.catalog;
    let local = Caller::local();
    let text = read(catalog, "test://static-text", &local).await.unwrap();
    assert_eq!(
        text[0].body,
        ResourceBody::Text("This is the content of the static text resource.".into())
    );
    let binary = read(catalog, "test://static-binary", &local).await.unwrap();
    assert!(matches!(&binary[0].body, ResourceBody::Bytes(b) if b.starts_with(b"\x89PNG")));
    let templated = read(catalog, "test://template/42/data", &local)
        .await
        .unwrap();
    let ResourceBody::Text(json_text) = &templated[0].body else {
        panic!("text")
    };
    assert_eq!(
        serde_json::from_str::<Value>(json_text).unwrap()["id"],
        "42"
    );

    for unknown in [
        "test://nothing",
        "test://template//data",
        "test://template/1/2/data",
    ] {
        let error = read(catalog, unknown, &local).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::NotFound, "{unknown}");
        assert_eq!(error.details.unwrap()["uri"], unknown);
    }
}

#[tokio::test]
async fn completions_go_to_the_plugin_of_the_prompt_or_template() {
    let host = TestHost::new(&conformance("")).await;
    let catalog = &host.catalog;
    let local = Caller::local();
    let suggested = catalog
        .complete(
            ("ref/prompt", "test_prompt_with_arguments"),
            ("arg1", "pa"),
            &[],
            &local,
            "r-1",
        )
        .await
        .unwrap();
    assert_eq!(suggested.values, ["paris", "park", "party"]);
    let templated = catalog
        .complete(
            ("ref/resource", "test://template/{id}/data"),
            ("id", "te"),
            &[],
            &local,
            "r-2",
        )
        .await
        .unwrap();
    assert_eq!(templated.values, ["test", "testing", "tested"]);
    for (reference, argument, says) in [
        (("ref/prompt", "no_such_prompt"), "arg1", "Unknown prompt"),
        (
            ("ref/prompt", "test_prompt_with_arguments"),
            "arg9",
            "takes no argument",
        ),
        (
            ("ref/resource", "test://nothing/{x}"),
            "x",
            "Unknown resource template",
        ),
        (
            ("ref/resource", "test://template/{id}/data"),
            "other",
            "has no variable",
        ),
    ] {
        let error = catalog
            .complete(reference, (argument, ""), &[], &local, "r-3")
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidArguments);
        assert!(error.message.contains(says), "{}", error.message);
    }
}

#[tokio::test]
async fn a_caller_without_the_plugins_privileges_sees_no_prompt_or_resource() {
    let host = TestHost::new(&conformance("privileges = [\"fixtures:read\"]\n")).await;
    let catalog = &host.catalog;
    let outsider = Caller {
        principal: Some("outsider".into()),
        privileges: Some(BTreeSet::new()),
    };
    let insider = Caller {
        principal: Some("insider".into()),
        privileges: Some(BTreeSet::from(["fixtures:read".to_owned()])),
    };
    let prompt = catalog.prompt("test_prompt_with_arguments").unwrap();
    assert!(!prompt.visible_to(&outsider) && prompt.visible_to(&insider));
    let refused = catalog
        .get_prompt(
            prompt,
            Some(&arguments(json!({"arg1": "a", "arg2": "b"}))),
            &outsider,
            "r-1",
            CallIo::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::MissingPrivilege);
    let filled = catalog
        .get_prompt(
            prompt,
            Some(&arguments(json!({"arg1": "a", "arg2": "b"}))),
            &insider,
            "r-2",
            CallIo::default(),
        )
        .await;
    assert!(answered(filled).is_ok());

    assert!(!catalog.offers_resource("test://static-text", &outsider));
    let hidden = read(catalog, "test://static-text", &outsider)
        .await
        .unwrap_err();
    assert_eq!(
        hidden.code,
        ErrorCode::NotFound,
        "reads as one that does not exist"
    );
    assert!(read(catalog, "test://static-text", &insider).await.is_ok());
    let unseen = catalog
        .complete(
            ("ref/prompt", "test_prompt_with_arguments"),
            ("arg1", ""),
            &[],
            &outsider,
            "r-5",
        )
        .await
        .unwrap_err();
    assert!(
        unseen.message.contains("Unknown prompt"),
        "{}",
        unseen.message
    );
}

#[tokio::test]
async fn a_uri_offered_by_two_plugins_is_refused_naming_both() {
    let toml = format!(
        "{}\nname = \"first\"\nprefix = \"a\"\n{}\nname = \"second\"\nprefix = \"b\"\n",
        conformance(""),
        conformance("")
    );
    let config = Config::parse(&toml, Path::new("test.toml"), Path::new("")).unwrap();
    let settings = EngineSettings {
        pooling: false,
        fuel: false,
        max_memory_bytes: 64 << 20,
        ..EngineSettings::default()
    };
    let runtime = Runtime::new(settings, root().join("target/test-compile-cache")).unwrap();
    let error = Catalog::load(&config, &runtime)
        .await
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains("resource name \"test://static-text\" is offered twice: by plugin first")
            && error.contains("and by plugin second"),
        "{error}"
    );
}
