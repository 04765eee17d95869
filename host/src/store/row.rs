//! One stored result as the SQL stores keep it: what both [`super::SqliteStore`]
//! and [`super::PostgresStore`] write and read, so the two agree on ids, expiry,
//! links and format versions.

use jiff::{SignedDuration, Timestamp};

use super::signing::Signer;
use super::{Kept, Offload, StoreError};

/// The MIME type of every stored result: the serialized result object.
pub const MIME: &str = "application/json";

/// A row about to be written.
#[derive(Debug, Clone)]
pub struct NewRow {
    /// 128 random bits in hex: unguessable even without the signature.
    pub id: String,
    /// The format version `body` is written in.
    pub format: i64,
    pub body: String,
    /// The size of the result's data in bytes, when it has data.
    pub size: Option<i64>,
    pub principal: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub expires_at: i64,
}

impl NewRow {
    /// The row for `offload`, created at `now` and expiring `ttl` later.
    ///
    /// # Errors
    ///
    /// When the expiry is out of range or the system has no randomness for an id.
    pub fn new(
        offload: Offload<'_>,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<Self, StoreError> {
        let format = offload.row_format()?;
        let expires_at = now
            .checked_add(ttl)
            .map_err(|e| StoreError(format!("expiry out of range: {e}")))?;
        let mut id = [0u8; 16];
        getrandom::fill(&mut id)
            .map_err(|e| StoreError(format!("no randomness for an id: {e}")))?;
        Ok(NewRow {
            id: id.iter().map(|b| format!("{b:02x}")).collect(),
            format,
            body: offload.body.to_owned(),
            size: offload.data_size.map(|s| s as i64),
            principal: offload.principal.map(str::to_owned),
            created_at: now.as_second(),
            expires_at: expires_at.as_second(),
        })
    }

    /// Where this row was kept, with its signed link, once it is written.
    ///
    /// # Errors
    ///
    /// When the expiry is not a valid timestamp (it was made from one).
    pub fn kept(&self, signer: &Signer) -> Result<Kept, StoreError> {
        Ok(Kept {
            uri: signer.link(&self.id, self.principal.as_deref(), self.expires_at),
            size: self.size.map(|s| s as u64),
            mime: MIME.into(),
            expires_at: Timestamp::from_second(self.expires_at)
                .map_err(|e| StoreError(e.to_string()))?,
        })
    }
}
