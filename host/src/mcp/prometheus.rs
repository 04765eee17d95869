//! Prometheus metrics: the process's recorder for the `metrics` facade, and the
//! text `GET /metrics` serves.
//!
//! Every layer records with the facade's macros (`metrics::counter!`, ...), by
//! the names below, without importing anything of the crate; without a recorder
//! (the CLI, in-process tests) they cost a check and record nothing. Label
//! values are bounded: tool and plugin names come from the catalog (an unknown
//! tool counts as [`UNKNOWN_TOOL`], never under the name the caller sent),
//! outcomes and budgets from closed sets, principals from the configuration.
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `toolhost_calls_total` | counter | `tool`, `outcome` |
//! | `toolhost_call_duration_seconds` | histogram | `tool` |
//! | `toolhost_instances_in_use` | gauge | `plugin` |
//! | `toolhost_budget_refusals_total` | counter | `budget`, `plugin` |
//! | `toolhost_offloads_total` | counter | `format` |
//! | `toolhost_store_errors_total` | counter | `operation` |
//! | `toolhost_catalog_reloads_total` | counter | `outcome` |
//! | `toolhost_sessions_open` | gauge | `transport` |
//! | `toolhost_rate_limited_total` | counter | `principal`, `tool` |
//! | `toolhost_audit_dropped_total` | counter | |

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// The `tool` label of a call naming a tool the caller cannot see: no tool
/// name has parentheses, so it stands for no real tool.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// The buckets of `toolhost_call_duration_seconds`: a fast tool's millisecond
/// up to the longest `timeout_ms`.
const DURATION_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The process's recorder, rendered on demand.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

static INSTALLED: OnceLock<Metrics> = OnceLock::new();

impl Metrics {
    /// Installs the recorder for the process (once; later calls get the same)
    /// and describes every metric.
    ///
    /// # Errors
    ///
    /// When another recorder is installed already.
    pub fn install() -> Result<Metrics, String> {
        if let Some(installed) = INSTALLED.get() {
            return Ok(installed.clone());
        }
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("toolhost_call_duration_seconds".into()),
                &DURATION_BUCKETS,
            )
            .map_err(|e| format!("metrics: {e}"))?
            .install_recorder()
            .map_err(|e| format!("cannot install the metrics recorder: {e}"))?;
        describe();
        let metrics = INSTALLED.get_or_init(|| Metrics { handle }).clone();
        // Histograms are drained into their buckets by upkeep; rendering runs it
        // too, this bounds what accumulates between scrapes.
        let upkeep = metrics.handle.clone();
        std::thread::Builder::new()
            .name("toolhost-metrics".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_secs(5));
                    upkeep.run_upkeep();
                }
            })
            .map_err(|e| format!("cannot start the metrics upkeep: {e}"))?;
        Ok(metrics)
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        self.handle.run_upkeep();
        self.handle.render()
    }
}

/// Shows `toolhost_rate_limited_total` at 0 for each principal and tool, so a
/// dashboard sees the series before the first refusal (`limits::log_refusal`
/// counts into it).
pub fn register_rate_limits<'a>(principals: &[&str], tools: impl Iterator<Item = &'a str>) {
    let tools: Vec<&str> = tools.collect();
    for principal in principals {
        for tool in &tools {
            metrics::counter!("toolhost_rate_limited_total", "principal" => (*principal).to_owned(), "tool" => (*tool).to_owned()).absolute(0);
        }
    }
}

fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        "toolhost_calls_total",
        "tools/call requests by tool and outcome (ok, an error code, or the refusal before the call)"
    );
    describe_histogram!(
        "toolhost_call_duration_seconds",
        Unit::Seconds,
        "tools/call duration from the request to the rendered result, by tool"
    );
    describe_gauge!(
        "toolhost_instances_in_use",
        "instances of each plugin serving a call now"
    );
    describe_counter!(
        "toolhost_budget_refusals_total",
        "calls a budget stopped or refused, by budget (a policy key, timeout, fuel, stack, instance_pool) and plugin"
    );
    describe_counter!(
        "toolhost_offloads_total",
        "results over the size limit kept in the result store, by format"
    );
    describe_counter!(
        "toolhost_store_errors_total",
        "result store operations that failed, by operation (put, get, purge)"
    );
    describe_counter!(
        "toolhost_catalog_reloads_total",
        "catalog reloads after a plugin directory changed, by outcome (ok, refused)"
    );
    describe_gauge!(
        "toolhost_sessions_open",
        "open sessions by transport (stdio, or handshake-era HTTP sessions)"
    );
    describe_counter!(
        "toolhost_rate_limited_total",
        "calls refused by a rate limit, by principal and tool"
    );
    describe_counter!(
        "toolhost_audit_dropped_total",
        "audit lines dropped because the writer was behind or failed"
    );
}
