//! What a plugin answers when a client reads one of its resources, and the
//! suggestions it makes for an argument being completed. Like the other
//! answers here, neither has a serialized form of its own.

use super::ResourceBody;

/// The content of one resource, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Contents {
    pub uri: String,
    pub mime: Option<String>,
    pub body: ResourceBody,
}

/// Values for an argument being completed, best first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Suggestions {
    pub values: Vec<String>,
    /// How many values there are in all, if known.
    pub total: Option<u32>,
    pub has_more: bool,
}
