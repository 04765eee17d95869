//! The `toolhost` command line.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use jiff::SignedDuration;
use toolhost::render::{Mapper, RenderContext, SizeLimits, Target};
use toolhost::samples;
use toolhost::store::MemoryStore;

/// Runs MCP tools written as sandboxed WebAssembly components.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Renders the sample results of the golden matrix through the mapper.
    Samples {
        /// Only this sample (see the list with no arguments).
        name: Option<String>,
        /// The format to render: `legacy`, `a2a`, `mcp-<revision>-<compat|spec>`,
        /// or `all`.
        #[arg(long, default_value = "mcp-2026-07-28-compat")]
        target: String,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Samples { name, target } => render_samples(name.as_deref(), &target),
    }
}

fn render_samples(name: Option<&str>, target: &str) -> ExitCode {
    let targets = if target == "all" {
        Target::all()
    } else {
        match target.parse::<Target>() {
            Ok(target) => vec![target],
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::from(2);
            }
        }
    };
    let all = samples::all();
    let chosen: Vec<_> = all
        .iter()
        .filter(|s| name.is_none_or(|n| n == s.name))
        .collect();
    if chosen.is_empty() {
        let names: Vec<_> = all.iter().map(|s| s.name).collect();
        eprintln!(
            "error: no sample named {:?}; the samples are: {}",
            name.unwrap_or_default(),
            names.join(", ")
        );
        return ExitCode::from(2);
    }
    let store = Arc::new(MemoryStore::new(
        SignedDuration::from_hours(1),
        samples::render_time,
    ));
    let mapper = Mapper::new(SizeLimits::default(), Some(store));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    for sample in chosen {
        for target in &targets {
            let mut ctx = RenderContext::new(sample.name, samples::render_time());
            ctx.output_schema = sample.output_schema.as_ref();
            ctx.request_id = "sample-1";
            let rendered = runtime.block_on(mapper.render(&sample.result, *target, &ctx));
            println!(
                "# {} ({}) as {target}, {} bytes{}",
                sample.name,
                sample.about,
                rendered.size,
                if rendered.offloaded {
                    ", offloaded to the store"
                } else {
                    ""
                }
            );
            println!(
                "{}",
                serde_json::to_string_pretty(&rendered.value).expect("JSON")
            );
        }
    }
    ExitCode::SUCCESS
}
