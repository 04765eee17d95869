//! The host-wide budget of result bytes in flight (`host.max_result_bytes_in_flight`):
//! a result holds its size of it from the moment it is lifted out of the guest
//! until the last copy of the converted result is dropped (after the mapper
//! rendered it and the rendering went to the transport). Many large results at
//! once therefore wait for room, until their call's deadline, instead of all being
//! converted and rendered together; a result larger than the whole budget waits
//! until it has the budget to itself. Results of at most [`SMALL_RESULT_BYTES`]
//! are not counted: ordinary answers never wait behind large ones.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::result::Lease;

/// The budget is counted in KiB, so a permit count fits in a `u32`.
const UNIT: u64 = 1024;

/// Results up to this size take nothing from the budget: the semaphore is fair,
/// so an ordinary small answer would otherwise queue behind large ones.
pub const SMALL_RESULT_BYTES: u64 = 64 * 1024;

/// The shared budget of result bytes in flight.
#[derive(Debug, Clone)]
pub struct ResultsInFlight {
    permits: Arc<Semaphore>,
    units: u32,
    bytes: u64,
}

impl ResultsInFlight {
    /// A budget of `bytes` (at least 1 KiB).
    pub fn new(bytes: u64) -> Self {
        let units = u32::try_from(bytes.div_ceil(UNIT).max(1)).unwrap_or(u32::MAX);
        ResultsInFlight {
            permits: Arc::new(Semaphore::new(units as usize)),
            units,
            bytes,
        }
    }

    /// The budget in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Waits until `bytes` of the budget are free (all of it for a result larger
    /// than the budget), at most until `deadline`; `None` when the deadline came
    /// first. A result of at most [`SMALL_RESULT_BYTES`] never waits.
    pub async fn acquire(&self, bytes: u64, deadline: Instant) -> Option<Lease> {
        if bytes <= SMALL_RESULT_BYTES {
            return Some(Lease::default());
        }
        let units = u32::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(u32::MAX)
            .clamp(1, self.units);
        let permit: OwnedSemaphorePermit = tokio::time::timeout_at(
            deadline.into(),
            self.permits.clone().acquire_many_owned(units),
        )
        .await
        .ok()?
        .ok()?;
        Some(Lease::new(permit))
    }

    /// Bytes of the budget free right now (for tests and logs).
    pub fn available_bytes(&self) -> u64 {
        self.permits.available_permits() as u64 * UNIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn results_wait_for_room_until_their_deadline() {
        let mib = 1 << 20;
        let budget = ResultsInFlight::new(10 * mib);
        let soon = || Instant::now() + Duration::from_millis(50);
        let first = budget.acquire(8 * mib, soon()).await.expect("room");
        assert_eq!(budget.available_bytes(), 2 * mib);
        assert!(budget.acquire(4 * mib, soon()).await.is_none());
        // A small result does not queue behind large ones.
        assert!(budget.acquire(SMALL_RESULT_BYTES, soon()).await.is_some());
        // Larger than the whole budget: waits until it has it to itself.
        drop(first);
        let whole = budget.acquire(100 * mib, soon()).await.expect("room");
        assert_eq!(budget.available_bytes(), 0);
        drop(whole);
        assert_eq!(budget.available_bytes(), 10 * mib);
    }
}
