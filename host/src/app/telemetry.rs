//! Where the host's own diagnostics go: log lines on standard error (stdout is
//! the stdio transport's), and, when configured, OpenTelemetry traces over
//! OTLP/HTTP (protobuf).
//!
//! Traces are off unless `[telemetry] otlp_endpoint` or one of the standard
//! variables (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`,
//! `OTEL_TRACES_EXPORTER=otlp`) asks for them; `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none` turn them off whatever the file says. The spans
//! are the `tracing` spans of the `toolhost` crates at DEBUG and above (the
//! request, the tool call, instantiate, call, render, store); `tracing`'s
//! OpenTelemetry layer turns them into OpenTelemetry spans and the SDK's batch
//! processor sends them, from a bounded queue, with this crate's own HTTP
//! client. With traces off the subscriber is the plain log formatter alone.

use std::time::Duration;

use bytes::Bytes;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tracing::Level;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::FilterExt as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::config::{TelemetryConfig, check_endpoint};

/// Events of the libraries beneath that report no fault of the host, by target,
/// message and, where given, the text of their `error` field; they are dropped
/// before any layer sees them.
///
/// rmcp, when a request's client has closed the stream (a 2026-07-28 client
/// ending `subscriptions/listen`, a caller gone mid-call), still tries to send
/// the response it holds and logs at ERROR that the closed channel refused it:
/// while it drains the request's service, or, when the response was ready just
/// before the stream closed, as it sends it. Nothing failed, and an operator
/// alerting on ERROR lines would be paged for every client that hangs up. Any
/// other failure to send a response (an I/O error) is still logged.
const NOT_ERRORS: [(&str, &str, Option<&str>); 2] = [
    (
        "rmcp::service",
        "failed to send pending response during drain",
        None,
    ),
    (
        "rmcp::service",
        "fail to response message",
        Some("channel closed"),
    ),
];

/// Drops the events of [`NOT_ERRORS`]: a layer above a global filter, or a
/// per-layer filter.
#[derive(Clone, Copy)]
struct NoFalseErrors;

impl NoFalseErrors {
    fn keeps(event: &tracing::Event<'_>) -> bool {
        let target = event.metadata().target();
        if !NOT_ERRORS.iter().any(|(t, _, _)| *t == target) {
            return true;
        }
        let mut fields = EventText::default();
        event.record(&mut fields);
        !NOT_ERRORS.iter().any(|(t, message, error)| {
            *t == target
                && fields.message == *message
                && error.is_none_or(|error| fields.error.as_deref() == Some(error))
        })
    }

    fn may_drop(meta: &tracing::Metadata<'_>) -> bool {
        meta.is_event() && NOT_ERRORS.iter().any(|(t, _, _)| *t == meta.target())
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for NoFalseErrors {
    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        Self::keeps(event)
    }
}

impl<S> tracing_subscriber::layer::Filter<S> for NoFalseErrors {
    fn enabled(
        &self,
        _: &tracing::Metadata<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        true
    }

    fn callsite_enabled(
        &self,
        meta: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        if Self::may_drop(meta) {
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::always()
        }
    }

    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        Self::keeps(event)
    }
}

/// The `message` and `error` fields of an event, as text.
#[derive(Default)]
struct EventText {
    message: String,
    error: Option<String>,
}

impl tracing::field::Visit for EventText {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "message" => value.clone_into(&mut self.message),
            "error" => self.error = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        // `%error` arrives here too, as its Display form.
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

/// How long one export may take, reading the collector's answer included.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of a collector's answer that is read (it is a small protobuf).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// How long the last spans may take to leave at exit.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// The installed diagnostics; [`Telemetry::shutdown`] sends the spans still
/// queued.
#[must_use = "shut it down at exit, or the last spans are lost"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

/// Where traces are sent, as the configuration and the environment decide.
#[derive(Debug, PartialEq)]
pub enum Traces {
    Off,
    /// To `endpoint` (the full traces URL), or where the `OTEL_*` variables say
    /// when `None`.
    Otlp {
        endpoint: Option<String>,
    },
}

/// What `[telemetry]` and the `OTEL_*` variables (read through `env`) ask for.
///
/// # Errors
///
/// A message naming the key or variable that cannot be honoured: a protocol
/// other than `http/protobuf`, an exporter other than `otlp` or `none`, or an
/// endpoint that is not an http(s) URL.
pub fn traces(
    config: &TelemetryConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Traces, String> {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(Traces::Off);
    }
    let exporter = set("OTEL_TRACES_EXPORTER");
    match exporter.as_deref().map(str::trim) {
        Some("none") => return Ok(Traces::Off),
        None | Some("otlp") => {}
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_EXPORTER={other:?}: toolhost exports traces with \"otlp\" (or \"none\" for no traces)"
            ));
        }
    }
    let env_endpoint = [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]
    .into_iter()
    .find_map(|name| set(name).map(|value| (name, value)));
    if config.otlp_endpoint.is_none() && env_endpoint.is_none() && exporter.is_none() {
        return Ok(Traces::Off);
    }
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(protocol) = set(name)
            && protocol.trim() != "http/protobuf"
        {
            return Err(format!(
                "{name}={protocol:?}: toolhost sends OTLP over HTTP with protobuf; set it to \"http/protobuf\" and point the endpoint at the collector's HTTP port (4318)"
            ));
        }
    }
    if let Some(base) = &config.otlp_endpoint {
        return Ok(Traces::Otlp {
            endpoint: Some(format!("{}/v1/traces", base.trim_end_matches('/'))),
        });
    }
    if let Some((name, value)) = env_endpoint {
        check_endpoint(&value).map_err(|what| format!("{name}: {what}"))?;
    }
    Ok(Traces::Otlp { endpoint: None })
}

/// Installs the log formatter (`TOOLHOST_LOG`, default `info`) and, when
/// `config` asks for traces, the OpenTelemetry layer; exports run on `runtime`.
/// `None` (the commands other than `serve`): logs only.
///
/// # Errors
///
/// A message fit to print at start-up when the telemetry settings cannot be
/// honoured (see [`traces`]) or the exporter cannot be built.
pub fn init(
    config: Option<&TelemetryConfig>,
    runtime: &tokio::runtime::Handle,
) -> Result<Telemetry, String> {
    use std::io::IsTerminal as _;
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
    };
    let env = |name: &str| std::env::var(name).ok();
    let traces = match config {
        Some(config) => traces(config, env)?,
        None => Traces::Off,
    };
    let Traces::Otlp { endpoint } = traces else {
        // The filter stays global (a disabled span is never made); the layer on
        // top only sees, and may drop, the events it lets through.
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_env_filter(filter())
            .finish()
            .with(NoFalseErrors)
            .init();
        return Ok(Telemetry { provider: None });
    };
    let config = config.expect("traces are on only with a configuration");
    let provider = provider(config, endpoint.as_deref(), runtime)?;
    let tracer = provider.tracer("toolhost");
    // The host's own spans, and its warnings and errors as span events: never
    // the spans and events of the libraries beneath (hyper, rmcp, wasmtime).
    let ours = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target().starts_with("toolhost")
            && *meta.level()
                <= if meta.is_span() {
                    Level::DEBUG
                } else {
                    Level::WARN
                }
    });
    // Per-layer filters only: a layer without one would make every span of
    // every crate, at every level, for the layers to throw away.
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter(filter().and(NoFalseErrors)),
        )
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_threads(false)
                .with_tracked_inactivity(false)
                .with_filter(ours.and(NoFalseErrors)),
        )
        .init();
    tracing::info!(
        endpoint = endpoint.as_deref().unwrap_or("from OTEL_EXPORTER_OTLP_*"),
        "sending traces over OTLP/HTTP"
    );
    Ok(Telemetry {
        provider: Some(provider),
    })
}

impl Telemetry {
    /// Sends the spans still queued (waiting at most a few seconds) and stops
    /// the exporter. Call it outside the runtime's `block_on`, with the runtime
    /// still running: the exports run on it.
    pub fn shutdown(self) {
        if let Some(provider) = self.provider
            && let Err(error) = provider.shutdown_with_timeout(SHUTDOWN_WAIT)
        {
            eprintln!("warning: the last trace spans may not have been sent: {error}");
        }
    }
}

/// The tracer provider: the OTLP/HTTP exporter behind the batch processor
/// (its queue and batch sizes from `OTEL_BSP_*`, else the SDK's defaults),
/// this service's resource, and the configured sampler.
fn provider(
    config: &TelemetryConfig,
    endpoint: Option<&str>,
    runtime: &tokio::runtime::Handle,
) -> Result<SdkTracerProvider, String> {
    let client = reqwest::Client::builder()
        .timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| format!("telemetry: cannot build the HTTP client: {e}"))?;
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(Sender::new(client, runtime.clone()));
    if let Some(endpoint) = endpoint {
        exporter = exporter.with_endpoint(endpoint);
    }
    let exporter = exporter
        .build()
        .map_err(|e| format!("telemetry: cannot set up the OTLP exporter: {e}"))?;
    let name = config
        .service_name
        .clone()
        .or_else(|| std::env::var("OTEL_SERVICE_NAME").ok())
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "toolhost".to_owned());
    let resource = Resource::builder()
        .with_service_name(name)
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    let mut builder = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource);
    if let Some(ratio) = config.sample_ratio {
        builder = builder.with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            ratio,
        ))));
    }
    Ok(builder.build())
}

/// The exporter's HTTP client: this crate's reqwest, run on the server's tokio
/// runtime (the SDK's batch processor exports from a thread of its own, where
/// no runtime runs).
///
/// A failed export logs one warning (`error.type = "trace_export_failed"`)
/// when the failures start and one line when exports work again, never one
/// per batch.
#[derive(Debug)]
struct Sender {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
    failing: std::sync::atomic::AtomicBool,
}

impl Sender {
    fn new(client: reqwest::Client, runtime: tokio::runtime::Handle) -> Sender {
        Sender {
            client,
            runtime,
            failing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Logs the first failure of a run of them, and the recovery after one.
    fn observe(&self, failure: Option<String>) {
        use std::sync::atomic::Ordering;
        match failure {
            Some(problem) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error.type = "trace_export_failed", %problem, "cannot send traces to the OTLP endpoint; spans are dropped until it answers (check [telemetry] otlp_endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)");
                }
            }
            None => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("traces reach the OTLP endpoint again");
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl HttpClient for Sender {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, HttpError> {
        let request = reqwest::Request::try_from(request)?;
        let client = self.client.clone();
        let send = async move {
            let mut response = client.execute(request).await?;
            let mut answer = http::Response::builder().status(response.status());
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                let room = MAX_ANSWER_BYTES.saturating_sub(body.len());
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if chunk.len() > room {
                    break;
                }
            }
            if let Some(kind) = response.headers().get(http::header::CONTENT_TYPE) {
                answer = answer.header(http::header::CONTENT_TYPE, kind);
            }
            Ok::<_, HttpError>(answer.body(Bytes::from(body))?)
        };
        let answer = self.runtime.spawn(send).await?;
        self.observe(match &answer {
            Ok(response) if response.status().is_success() => None,
            Ok(response) => Some(format!("the endpoint answered {}", response.status())),
            Err(error) => Some(error.to_string()),
        });
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects the messages of the events it is shown.
    #[derive(Clone, Default)]
    struct Seen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            let mut fields = EventText::default();
            event.record(&mut fields);
            let line = match fields.error {
                Some(error) => format!("{}: {error}", fields.message),
                None => fields.message,
            };
            self.0.lock().unwrap().push(line);
        }
    }

    #[test]
    fn a_closed_client_stream_is_no_error_and_every_other_failure_is_kept() {
        let seen = Seen::default();
        let subscriber =
            tracing_subscriber::registry().with(seen.clone().with_filter(NoFalseErrors));
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "rmcp::service", error = %"channel closed", "fail to response message");
            tracing::error!(target: "rmcp::service", error = %"broken pipe", "fail to response message");
            tracing::error!(target: "rmcp::service", error = %"channel closed", "failed to send pending response during drain");
            tracing::error!(target: "rmcp::service", "response send task failed");
            tracing::error!(error = %"channel closed", "fail to response message");
        });
        assert_eq!(
            *seen.0.lock().unwrap(),
            [
                "fail to response message: broken pipe",
                "response send task failed",
                "fail to response message: channel closed",
            ]
        );
    }

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    fn configured(endpoint: &str) -> TelemetryConfig {
        TelemetryConfig {
            otlp_endpoint: Some(endpoint.to_owned()),
            ..TelemetryConfig::default()
        }
    }

    #[test]
    fn off_unless_something_names_an_endpoint() {
        let none = TelemetryConfig::default();
        assert_eq!(traces(&none, with(&[])), Ok(Traces::Off));
        assert_eq!(
            traces(&none, with(&[("OTEL_SERVICE_NAME", "x")])),
            Ok(Traces::Off)
        );
        assert_eq!(
            traces(
                &none,
                with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")])
            ),
            Ok(Traces::Otlp { endpoint: None })
        );
        assert_eq!(
            traces(&none, with(&[("OTEL_TRACES_EXPORTER", "otlp")])),
            Ok(Traces::Otlp { endpoint: None })
        );
    }

    #[test]
    fn the_file_names_the_base_and_traces_go_to_v1_traces() {
        assert_eq!(
            traces(&configured("http://127.0.0.1:4318/"), with(&[])),
            Ok(Traces::Otlp {
                endpoint: Some("http://127.0.0.1:4318/v1/traces".to_owned())
            })
        );
    }

    #[test]
    fn the_standard_switches_turn_traces_off_whatever_the_file_says() {
        let config = configured("http://127.0.0.1:4318");
        for vars in [
            [("OTEL_SDK_DISABLED", "true")],
            [("OTEL_TRACES_EXPORTER", "none")],
        ] {
            assert_eq!(traces(&config, with(&vars)), Ok(Traces::Off), "{vars:?}");
        }
    }

    #[test]
    fn what_cannot_be_honoured_is_named() {
        let config = configured("http://127.0.0.1:4318");
        let error = traces(&config, with(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(
            error.starts_with("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\"")
                && error.contains("http/protobuf"),
            "{error}"
        );
        let error = traces(&config, with(&[("OTEL_TRACES_EXPORTER", "zipkin")])).unwrap_err();
        assert!(error.contains("OTEL_TRACES_EXPORTER"), "{error}");
        let error = traces(
            &TelemetryConfig::default(),
            with(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318")]),
        )
        .unwrap_err();
        assert!(
            error.starts_with("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "),
            "{error}"
        );
    }
}
