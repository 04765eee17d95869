//! The `host` interface a plugin imports: log, progress, its granted configuration.
//!
//! Log and progress messages each have a byte budget per call (`max_log_bytes`,
//! `max_progress_bytes`). The import always returns normally; what goes over the
//! budget is dropped (neither logged nor sent), and the call ends as
//! `resource_limit` naming the budget, whatever the guest returns.
//!
//! Both packages import the same `host` interface under their own names; the
//! `0.2.0` one is this same implementation.

use super::bindings::v0_1::plugin::toolhost::plugin::{host, types};
use super::bindings::v0_2::full::toolhost::plugin::host as host_0_2;
use super::state::{CallState, GuestEvent, LOG_LINES_PER_CALL, LogLevel};

impl types::Host for CallState {}

impl host::Host for CallState {
    async fn log(&mut self, level: host::LogLevel, message: String) -> wasmtime::Result<()> {
        self.log_lines += 1;
        if self.log_lines > LOG_LINES_PER_CALL {
            if self.log_lines == LOG_LINES_PER_CALL + 1 {
                tracing::warn!(plugin = %self.plugin, tool = %self.tool, "guest sent more than {LOG_LINES_PER_CALL} log lines; dropping the rest of this call's");
            }
            return Ok(());
        }
        self.log_bytes = self.log_bytes.saturating_add(message.len() as u64);
        if self.log_bytes > self.budgets.log_bytes {
            let budget = self.budgets.log_bytes;
            self.hit(
                "max_log_bytes",
                format!("the guest sent more than {budget} bytes of log messages"),
            );
            return Ok(());
        }
        let level = match level {
            host::LogLevel::Trace => LogLevel::Trace,
            host::LogLevel::Debug => LogLevel::Debug,
            host::LogLevel::Info => LogLevel::Info,
            host::LogLevel::Warn => LogLevel::Warn,
            host::LogLevel::Error => LogLevel::Error,
        };
        let (plugin, tool) = (&*self.plugin, &*self.tool);
        match level {
            LogLevel::Trace => tracing::trace!(plugin, tool, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, tool, "{message}"),
            LogLevel::Info => tracing::info!(plugin, tool, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, tool, "{message}"),
            LogLevel::Error => tracing::error!(plugin, tool, "{message}"),
        }
        if let Some(events) = &self.events {
            events.send(GuestEvent::Log { level, message });
        }
        Ok(())
    }

    async fn progress(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        let bytes = message.as_ref().map_or(0, |m| m.len() as u64);
        self.progress_bytes = self.progress_bytes.saturating_add(bytes);
        if self.progress_bytes > self.budgets.progress_bytes {
            let budget = self.budgets.progress_bytes;
            self.hit(
                "max_progress_bytes",
                format!("the guest sent more than {budget} bytes of progress messages"),
            );
            return Ok(());
        }
        tracing::debug!(plugin = %self.plugin, tool = %self.tool, progress, total, "progress");
        if let Some(events) = &self.events {
            events.send(GuestEvent::Progress {
                progress,
                total,
                message,
            });
        }
        Ok(())
    }

    async fn get_config(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        Ok(self.config.get(&key).cloned())
    }
}

impl host_0_2::Host for CallState {
    async fn log(&mut self, level: host_0_2::LogLevel, message: String) -> wasmtime::Result<()> {
        let level = match level {
            host_0_2::LogLevel::Trace => host::LogLevel::Trace,
            host_0_2::LogLevel::Debug => host::LogLevel::Debug,
            host_0_2::LogLevel::Info => host::LogLevel::Info,
            host_0_2::LogLevel::Warn => host::LogLevel::Warn,
            host_0_2::LogLevel::Error => host::LogLevel::Error,
        };
        host::Host::log(self, level, message).await
    }

    async fn progress(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        host::Host::progress(self, progress, total, message).await
    }

    async fn get_config(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        host::Host::get_config(self, key).await
    }
}
