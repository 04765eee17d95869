//! The old path of [`crate::render::format`], where the versioned serialized
//! form now lives beside (not inside) the legacy renderer.
//!
//! Kept so that the callers outside this change (`render/mapper.rs`,
//! `mcp/handler.rs`, `tests/common`, `tests/store.rs`, the fuzz target) build
//! unchanged; delete it once they import from `crate::render::format`.

pub use crate::render::format::{
    FormatError, FormatVersion, decode, decode_app_response, decode_stored, encode,
};
