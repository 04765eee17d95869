//! The metadata and stored links of format 1: camelCase keys, timestamps as
//! RFC 3339 text, extensions as `{"namespace", "name", "value"}`.

use std::borrow::Cow;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Refusal;
use crate::result::{
    Extension as ResultExtension, LegacyKeys as ResultLegacyKeys, Metadata as ResultMetadata,
    Pagination as ResultPagination, StoredLink as ResultStoredLink,
};

/// The facts about a result (`"metadata"`); every field may be absent.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pagination: Option<Pagination<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<Cow<'a, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<Extension<'a>>,
    #[serde(default, skip_serializing_if = "LegacyKeys::is_empty")]
    pub legacy: LegacyKeys<'a>,
}

/// Where a page of a longer list lies. Unknown keys are refused, so the legacy
/// parser keeps an app's own pagination object verbatim instead.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pagination<'a> {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// A value under an extension's namespace; validated when read.
#[derive(Debug, Serialize, Deserialize)]
pub struct Extension<'a> {
    pub namespace: Cow<'a, str>,
    pub name: Cow<'a, str>,
    pub value: Cow<'a, Value>,
}

/// The keys a legacy envelope carried without a typed home (`beside` the
/// envelope, inside its `meta`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct LegacyKeys<'a> {
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub beside: Cow<'a, Map<String, Value>>,
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub meta: Cow<'a, Map<String, Value>>,
}

/// A result kept in a store (`"storedLinks"`, and the legacy `_meta.storedLinks`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredLink<'a> {
    pub uri: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub mime: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<Timestamp>,
}

fn is_empty_map(map: &Map<String, Value>) -> bool {
    map.is_empty()
}

impl Metadata<'_> {
    pub fn is_empty(&self) -> bool {
        self.pagination.is_none()
            && self.dry_run.is_none()
            && self.response_size.is_none()
            && self.query.is_none()
            && self.generated_at.is_none()
            && self.expires_at.is_none()
            && self.duration_ms.is_none()
            && self.extensions.is_empty()
            && self.legacy.is_empty()
    }

    /// The result's metadata; `at` is this object's path, for a refusal.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] naming the extension whose namespace or name is refused.
    pub fn into_metadata(self, at: &str) -> Result<ResultMetadata, Refusal> {
        let extensions = self
            .extensions
            .into_iter()
            .enumerate()
            .map(|(index, extension)| {
                ResultExtension::new(
                    extension.namespace.into_owned(),
                    extension.name.into_owned(),
                    extension.value.into_owned(),
                )
                .map_err(|e| Refusal {
                    at: format!("{at}.extensions[{index}]"),
                    problem: e.to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(ResultMetadata {
            pagination: self.pagination.map(Pagination::into_pagination),
            dry_run: self.dry_run,
            response_size: self.response_size,
            query: self.query.map(Cow::into_owned),
            generated_at: self.generated_at,
            expires_at: self.expires_at,
            duration_ms: self.duration_ms,
            extensions,
            legacy: ResultLegacyKeys {
                beside: self.legacy.beside.into_owned(),
                meta: self.legacy.meta.into_owned(),
            },
        })
    }
}

impl<'a> From<&'a ResultMetadata> for Metadata<'a> {
    fn from(metadata: &'a ResultMetadata) -> Self {
        Metadata {
            pagination: metadata.pagination.as_ref().map(Pagination::from),
            dry_run: metadata.dry_run,
            response_size: metadata.response_size,
            query: metadata.query.as_ref().map(Cow::Borrowed),
            generated_at: metadata.generated_at,
            expires_at: metadata.expires_at,
            duration_ms: metadata.duration_ms,
            extensions: metadata
                .extensions
                .iter()
                .map(|extension| Extension {
                    namespace: Cow::Borrowed(extension.namespace()),
                    name: Cow::Borrowed(extension.name()),
                    value: Cow::Borrowed(extension.value()),
                })
                .collect(),
            legacy: LegacyKeys::from(&metadata.legacy),
        }
    }
}

impl<'a> From<&'a ResultPagination> for Pagination<'a> {
    fn from(pagination: &'a ResultPagination) -> Self {
        Pagination {
            total: pagination.total,
            offset: pagination.offset,
            limit: pagination.limit,
            next_cursor: pagination.next_cursor.as_deref().map(Cow::Borrowed),
            has_more: pagination.has_more,
        }
    }
}

impl Pagination<'_> {
    pub fn into_pagination(self) -> ResultPagination {
        ResultPagination {
            total: self.total,
            offset: self.offset,
            limit: self.limit,
            next_cursor: self.next_cursor.map(Cow::into_owned),
            has_more: self.has_more,
        }
    }
}

impl<'a> From<&'a ResultLegacyKeys> for LegacyKeys<'a> {
    fn from(keys: &'a ResultLegacyKeys) -> Self {
        LegacyKeys {
            beside: Cow::Borrowed(&keys.beside),
            meta: Cow::Borrowed(&keys.meta),
        }
    }
}

impl LegacyKeys<'_> {
    pub fn is_empty(&self) -> bool {
        self.beside.is_empty() && self.meta.is_empty()
    }
}

impl<'a> From<&'a ResultStoredLink> for StoredLink<'a> {
    fn from(link: &'a ResultStoredLink) -> Self {
        StoredLink {
            uri: Cow::Borrowed(&link.uri),
            size: link.size,
            mime: Cow::Borrowed(&link.mime),
            expires_at: link.expires_at,
        }
    }
}

impl StoredLink<'_> {
    pub fn into_link(self) -> ResultStoredLink {
        ResultStoredLink {
            uri: self.uri.into_owned(),
            size: self.size,
            mime: self.mime.into_owned(),
            expires_at: self.expires_at,
        }
    }
}
