//! `[telemetry]`: OpenTelemetry traces, sent over OTLP/HTTP (protobuf). Off
//! unless an endpoint is configured here or in the standard `OTEL_*`
//! environment variables (`app::telemetry` reads those).
//!
//! ```toml
//! [telemetry]
//! otlp_endpoint = "http://127.0.0.1:4318"  # traces go to <endpoint>/v1/traces
//! # service_name = "toolhost"              # default: OTEL_SERVICE_NAME, then "toolhost"
//! # sample_ratio = 1.0                     # share of new traces kept (default:
//! #                                        # OTEL_TRACES_SAMPLER, else all); a
//! #                                        # caller's traceparent decides for its own
//! ```

use serde::Deserialize;

use super::ConfigError;
use std::path::Path;

/// The telemetry settings, checked. The default: no endpoint here (the
/// environment may still name one), the service name from the environment or
/// `toolhost`, every new trace kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryConfig {
    /// The OTLP/HTTP base URL; `None`: `OTEL_EXPORTER_OTLP_*ENDPOINT`, or off.
    pub otlp_endpoint: Option<String>,
    pub service_name: Option<String>,
    /// The share of traces started here (no parent) that are kept; `None`:
    /// `OTEL_TRACES_SAMPLER`, else every one.
    pub sample_ratio: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTelemetry {
    otlp_endpoint: Option<String>,
    service_name: Option<String>,
    sample_ratio: Option<f64>,
}

impl RawTelemetry {
    pub(super) fn resolve(self, file: &Path) -> Result<TelemetryConfig, ConfigError> {
        let problem =
            |key: &str, what: String| ConfigError::new(file, format!("telemetry.{key}: {what}"));
        if let Some(endpoint) = &self.otlp_endpoint {
            check_endpoint(endpoint).map_err(|what| problem("otlp_endpoint", what))?;
        }
        if let Some(name) = &self.service_name
            && name.trim().is_empty()
        {
            return Err(problem(
                "service_name",
                "is empty; remove it or name the service".into(),
            ));
        }
        if let Some(sample_ratio) = self.sample_ratio
            && !(0.0..=1.0).contains(&sample_ratio)
        {
            return Err(problem(
                "sample_ratio",
                format!("{sample_ratio} is not between 0.0 (keep none) and 1.0 (keep all)"),
            ));
        }
        Ok(TelemetryConfig {
            otlp_endpoint: self.otlp_endpoint,
            service_name: self.service_name,
            sample_ratio: self.sample_ratio,
        })
    }
}

/// Whether `endpoint` is an `http` or `https` URL with a host and no query,
/// fit to have `/v1/traces` appended; else what is wrong with it.
///
/// # Errors
///
/// A message naming `endpoint` and what to change.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let url = url::Url::parse(endpoint)
        .map_err(|e| format!("{endpoint:?} is not an absolute URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!(
            "{endpoint:?} is not an http(s) URL with a host; give the collector's OTLP/HTTP address, e.g. \"http://127.0.0.1:4318\""
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{endpoint:?} has a query or a fragment; give the base URL only"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str) -> Result<TelemetryConfig, String> {
        let raw: RawTelemetry = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.resolve(Path::new("t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn nothing_set_is_the_default() {
        assert_eq!(resolve("").unwrap(), TelemetryConfig::default());
    }

    #[test]
    fn bad_values_name_the_key_and_the_fix() {
        let error = resolve("otlp_endpoint = \"grpc://collector:4317\"").unwrap_err();
        assert!(
            error.contains("telemetry.otlp_endpoint") && error.contains("http(s) URL"),
            "{error}"
        );
        let error = resolve("otlp_endpoint = \"http://c:4318/?a=1\"").unwrap_err();
        assert!(error.contains("query"), "{error}");
        let error = resolve("sample_ratio = 1.5").unwrap_err();
        assert!(
            error.contains("telemetry.sample_ratio") && error.contains("between"),
            "{error}"
        );
        let error = resolve("service_name = \" \"").unwrap_err();
        assert!(error.contains("telemetry.service_name"), "{error}");
        assert!(resolve("endpoint = \"http://c:4318\"").is_err());
    }

    #[test]
    fn an_endpoint_and_a_ratio_are_kept() {
        let config =
            resolve("otlp_endpoint = \"https://otel.example.com\"\nsample_ratio = 0.25").unwrap();
        assert_eq!(
            config.otlp_endpoint.as_deref(),
            Some("https://otel.example.com")
        );
        assert_eq!(config.sample_ratio, Some(0.25));
    }
}
