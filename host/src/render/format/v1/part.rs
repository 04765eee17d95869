//! The content parts of format 1: `{"kind": "text" | "binary" | "resourceLink" |
//! "embeddedResource", ..}`, bytes as standard base64.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::base64_bytes;
use crate::result::{
    ContentPart, ResourceBody as ResultResourceBody, ResourceLink as ResultResourceLink,
};

/// One content part, tagged by `kind`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Part<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime: Option<Cow<'a, str>>,
    },
    Binary {
        #[serde(with = "base64_bytes")]
        data: Cow<'a, [u8]>,
        mime: Cow<'a, str>,
    },
    ResourceLink(ResourceLink<'a>),
    EmbeddedResource {
        uri: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime: Option<Cow<'a, str>>,
        body: ResourceBody<'a>,
    },
}

/// A pointer to a resource (the part `"kind": "resourceLink"`).
#[derive(Debug, Serialize, Deserialize)]
pub struct ResourceLink<'a> {
    pub uri: Cow<'a, str>,
    pub name: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// An embedded resource's body: `{"text": ".."}` or `{"bytes": "<base64>"}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceBody<'a> {
    Text(Cow<'a, str>),
    Bytes(#[serde(with = "base64_bytes")] Cow<'a, [u8]>),
}

fn borrowed(text: &Option<String>) -> Option<Cow<'_, str>> {
    text.as_deref().map(Cow::Borrowed)
}

fn owned(text: Option<Cow<'_, str>>) -> Option<String> {
    text.map(Cow::into_owned)
}

impl<'a> From<&'a ContentPart> for Part<'a> {
    fn from(part: &'a ContentPart) -> Self {
        match part {
            ContentPart::Text { text, mime } => Part::Text {
                text: Cow::Borrowed(text),
                mime: borrowed(mime),
            },
            ContentPart::Binary { data, mime } => Part::Binary {
                data: Cow::Borrowed(data),
                mime: Cow::Borrowed(mime),
            },
            ContentPart::ResourceLink(link) => Part::ResourceLink(ResourceLink {
                uri: Cow::Borrowed(&link.uri),
                name: Cow::Borrowed(&link.name),
                title: borrowed(&link.title),
                description: borrowed(&link.description),
                mime: borrowed(&link.mime),
                size: link.size,
            }),
            ContentPart::EmbeddedResource { uri, mime, body } => Part::EmbeddedResource {
                uri: Cow::Borrowed(uri),
                mime: borrowed(mime),
                body: match body {
                    ResultResourceBody::Text(text) => ResourceBody::Text(Cow::Borrowed(text)),
                    ResultResourceBody::Bytes(bytes) => ResourceBody::Bytes(Cow::Borrowed(bytes)),
                },
            },
        }
    }
}

impl Part<'_> {
    /// The result's part (every part of format 1 has one).
    pub fn into_part(self) -> ContentPart {
        match self {
            Part::Text { text, mime } => ContentPart::Text {
                text: text.into_owned(),
                mime: owned(mime),
            },
            Part::Binary { data, mime } => ContentPart::Binary {
                data: data.into_owned(),
                mime: mime.into_owned(),
            },
            Part::ResourceLink(link) => ContentPart::ResourceLink(ResultResourceLink {
                uri: link.uri.into_owned(),
                name: link.name.into_owned(),
                title: owned(link.title),
                description: owned(link.description),
                mime: owned(link.mime),
                size: link.size,
            }),
            Part::EmbeddedResource { uri, mime, body } => ContentPart::EmbeddedResource {
                uri: uri.into_owned(),
                mime: owned(mime),
                body: match body {
                    ResourceBody::Text(text) => ResultResourceBody::Text(text.into_owned()),
                    ResourceBody::Bytes(bytes) => ResultResourceBody::Bytes(bytes.into_owned()),
                },
            },
        }
    }
}
