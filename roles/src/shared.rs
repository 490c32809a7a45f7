//! One connection to the cluster's PostgreSQL shared by an API replica's readers (client
//! reports, the cluster's run history), opened again after a failure, and never dropped on an
//! async worker thread.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use toolmark_queue::{Queue, QueueError};

/// How long after a failed connection no other is tried: callers get the failure at once
/// meanwhile (an API request must not wait [`toolmark_queue::CONNECT_TIMEOUT`] each time while
/// the database is down).
pub const RECONNECT_PAUSE: Duration = Duration::from_secs(5);

/// A kept connection to the queue database.
pub struct Db {
    url: String,
    holder: String,
    queue: Mutex<Slot>,
}

/// The connection, or when the last attempt to connect failed.
struct Slot {
    queue: Option<Queue>,
    failed: Option<(Instant, String)>,
}

impl Db {
    /// Connects to `url` as `holder` now (so a role that cannot reach its database says so when
    /// it starts). Blocks.
    ///
    /// # Errors
    ///
    /// The database could not be reached or its tables created.
    pub fn connect(url: &str, holder: &str) -> Result<Db, QueueError> {
        let queue = Queue::connect(url, holder)?;
        Ok(Db {
            url: url.to_owned(),
            holder: holder.to_owned(),
            queue: Mutex::new(Slot {
                queue: Some(queue),
                failed: None,
            }),
        })
    }

    /// `work` on the connection (opened again if the last one failed, at most once per
    /// [`RECONNECT_PAUSE`]); a database error drops the connection, so the next call starts on
    /// a fresh one. Blocks.
    ///
    /// # Errors
    ///
    /// What `work` or connecting returned.
    pub fn with<T>(
        &self,
        work: impl FnOnce(&mut Queue) -> Result<T, QueueError>,
    ) -> Result<T, QueueError> {
        let mut slot = self
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.queue.is_none() {
            if let Some((at, why)) = &slot.failed {
                if at.elapsed() < RECONNECT_PAUSE {
                    return Err(QueueError::Refused(format!(
                        "not connected (the last attempt, {}s ago, failed: {why})",
                        at.elapsed().as_secs()
                    )));
                }
            }
            match Queue::connect(&self.url, &self.holder) {
                Ok(q) => {
                    slot.queue = Some(q);
                    slot.failed = None;
                }
                Err(e) => {
                    slot.failed = Some((Instant::now(), e.to_string()));
                    return Err(e);
                }
            }
        }
        let queue = slot.queue.as_mut().expect("connected above");
        work(queue).inspect_err(|e| {
            if matches!(e, QueueError::Postgres { .. }) {
                slot.queue = None;
            }
        })
    }
}

impl Drop for Db {
    /// The database client's own drop blocks on a runtime of its own, which panics on an async
    /// worker thread (where a serving API drops its state): it is dropped on a thread of its own.
    fn drop(&mut self) {
        let queue = self
            .queue
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .queue
            .take();
        if let Some(queue) = queue {
            std::thread::spawn(move || drop(queue));
        }
    }
}
