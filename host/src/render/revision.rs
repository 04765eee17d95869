//! The MCP revisions the mapper renders for, and what each one can express.

use std::fmt;
use std::str::FromStr;

/// A revision of the Model Context Protocol, by its date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    /// The stateless era.
    V2026_07_28,
}

impl Revision {
    /// Every revision, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The newest revision this build speaks.
    pub const LATEST: Revision = Revision::V2026_07_28;

    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Audio content blocks exist from 2025-03-26.
    pub fn has_audio(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// `structuredContent`, `outputSchema`, `resource_link` blocks and `_meta` on
    /// content blocks exist from 2025-06-18.
    pub fn has_structured_content(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// `elicitation/create` exists from 2025-06-18.
    pub fn has_elicitation(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// From 2026-07-28 structured content may be any JSON value, and every
    /// result says its `resultType`.
    pub fn is_stateless(self) -> bool {
        self >= Revision::V2026_07_28
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A revision string this build does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown MCP revision {0:?}; known revisions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
)]
pub struct UnknownRevision(pub String);

impl FromStr for Revision {
    type Err = UnknownRevision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Revision::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRevision(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_revision_and_refuses_others() {
        for revision in Revision::ALL {
            assert_eq!(revision.as_str().parse::<Revision>(), Ok(revision));
        }
        assert!("2025-01-01".parse::<Revision>().is_err());
    }

    #[test]
    fn capabilities_follow_the_revision_table() {
        use Revision::*;
        assert!(!V2024_11_05.has_audio() && V2025_03_26.has_audio());
        assert!(!V2025_03_26.has_structured_content() && V2025_06_18.has_structured_content());
        assert!(!V2025_11_25.is_stateless() && V2026_07_28.is_stateless());
    }
}
