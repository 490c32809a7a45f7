//! One connection to the cluster's PostgreSQL shared by an API replica's readers (client
//! reports, the cluster's run history), opened again after a failure, and never dropped on an
//! async worker thread.

use std::sync::Mutex;

use toolmark_queue::{Queue, QueueError};

/// A kept connection to the queue database.
pub struct Db {
    url: String,
    holder: String,
    queue: Mutex<Option<Queue>>,
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
            queue: Mutex::new(Some(queue)),
        })
    }

    /// `work` on the connection (opened again if the last one failed); a database error drops
    /// the connection, so the next call starts on a fresh one. Blocks.
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
        if slot.is_none() {
            *slot = Some(Queue::connect(&self.url, &self.holder)?);
        }
        let queue = slot.as_mut().expect("connected above");
        work(queue).inspect_err(|e| {
            if matches!(e, QueueError::Postgres { .. }) {
                *slot = None;
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
            .take();
        if let Some(queue) = queue {
            std::thread::spawn(move || drop(queue));
        }
    }
}
