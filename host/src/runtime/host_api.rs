//! The `host` interface a plugin imports: log, progress, its granted configuration.

use crate::result::wit::plugin::toolhost::plugin::{host, types};

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
        let level = match level {
            host::LogLevel::Trace => LogLevel::Trace,
            host::LogLevel::Debug => LogLevel::Debug,
            host::LogLevel::Info => LogLevel::Info,
            host::LogLevel::Warn => LogLevel::Warn,
            host::LogLevel::Error => LogLevel::Error,
        };
        let (plugin, tool) = (&*self.plugin, self.tool.as_str());
        match level {
            LogLevel::Trace => tracing::trace!(plugin, tool, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, tool, "{message}"),
            LogLevel::Info => tracing::info!(plugin, tool, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, tool, "{message}"),
            LogLevel::Error => tracing::error!(plugin, tool, "{message}"),
        }
        if let Some(events) = &self.events {
            let _ = events.send(GuestEvent::Log { level, message });
        }
        Ok(())
    }

    async fn progress(
        &mut self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> wasmtime::Result<()> {
        tracing::debug!(plugin = %self.plugin, tool = %self.tool, progress, total, "progress");
        if let Some(events) = &self.events {
            let _ = events.send(GuestEvent::Progress {
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
