//! What the cluster's small periodic jobs share (webhook passes, popularity refreshes): one job
//! of a kind open at a time, and a loop that asks the queue on one connection until stopped.

use std::time::Duration;

use toolmark_queue::{NewJob, Queue};

use crate::{RoleError, Stop};

/// One job of `kind` enqueued in `run` (the scheduler names it by its fire time, so two
/// schedulers firing for it add one) — unless one of that kind is still waiting or running: it
/// does everything due, and a second would only wait for the first. Returns the jobs added
/// (0 or 1).
pub fn enqueue_one(queue: &mut Queue, kind: &str, run: &str) -> Result<u64, RoleError> {
    let open = queue
        .open_keys(kind)
        .map_err(RoleError::doing(format!("the open {kind} jobs")))?;
    if !open.is_empty() {
        return Ok(0);
    }
    queue
        .enqueue(
            run,
            &[NewJob {
                kind: kind.into(),
                key: kind.into(),
                payload: "{}".into(),
            }],
        )
        .map_err(RoleError::doing(format!("enqueueing the {kind} job")))
}

/// Calls `once` every `every` (at once again when it says it did something) until `stop`, on
/// one queue connection opened again after a failure; `what` names the loop in its warnings.
/// Blocks the calling thread.
pub fn poll(
    url: &str,
    holder: &str,
    what: &str,
    every: Duration,
    stop: &Stop,
    mut once: impl FnMut(&mut Queue) -> Result<bool, RoleError>,
) {
    let mut queue: Option<Queue> = None;
    while !stop.is_cancelled() {
        if queue.is_none() {
            match Queue::connect(url, holder) {
                Ok(q) => queue = Some(q),
                Err(e) => tracing::warn!("{what}: the queue: {e}"),
            }
        }
        if let Some(q) = queue.as_mut() {
            match once(q) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!("{what}: {}", crate::chain(&e));
                    queue = None;
                }
            }
        }
        let step = Duration::from_millis(100);
        let mut slept = Duration::ZERO;
        while slept < every && !stop.is_cancelled() {
            std::thread::sleep(step);
            slept += step;
        }
    }
}
