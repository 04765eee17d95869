//! The wire names of the legacy envelope, in one place: the renderer
//! ([`super::envelope_text`]) writes them and the parser ([`super::parse`]) reads them.

pub const SUCCESS: &str = "success";
pub const DATA: &str = "data";
pub const ERROR: &str = "error";
pub const META: &str = "_meta";
pub const SUMMARY: &str = "summary";
pub const DRY_RUN: &str = "dryRun";
pub const RESPONSE_SIZE: &str = "responseSize";
pub const RESOURCE_URI: &str = "resourceUri";
pub const STORED_LINKS: &str = "storedLinks";
pub const PAGINATION: &str = "pagination";
pub const QUERY: &str = "query";
pub const GENERATED_AT: &str = "generatedAt";
pub const EXPIRES_AT: &str = "expiresAt";
pub const DURATION_MS: &str = "durationMs";
pub const ERROR_CODE: &str = "errorCode";
pub const ERROR_DETAILS: &str = "errorDetails";
pub const PARTS: &str = "parts";
