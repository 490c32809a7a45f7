//! Webhook delivery in a cluster: the scheduler enqueues one `webhooks` job per fire time of
//! `schedules.webhooks` ([`enqueue_pass`]); the API replicas that have `[[webhooks]]` claim
//! them ([`Deliveries`]) and make the pass from their own index, with the delivery state in the
//! cluster's PostgreSQL (`toolmark_webhooks::Bookkeeping::Shared`), so any replica may make the
//! next pass and a receiver gets every event at least once, in order, whichever replica sends it.

use std::time::Duration;

use toolmark_queue::{Claim, Queue};
use toolmark_webhooks::{Bookkeeping, Deliverer, DeliveryError};

use crate::{RoleError, Stop};

/// The kind of a webhook delivery pass.
pub const WEBHOOKS: &str = "webhooks";

/// How often a delivering replica asks the queue for a pass.
pub const PASS_POLL: Duration = Duration::from_secs(2);

/// One webhook pass enqueued in `run`, unless one is still waiting or running
/// ([`super::polling::enqueue_one`]): the jobs added (0 or 1).
pub fn enqueue_pass(queue: &mut Queue, run: &str) -> Result<u64, RoleError> {
    super::polling::enqueue_one(queue, WEBHOOKS, run)
}

/// A replica's webhook passes: `deliverer` (over this replica's index) with its bookkeeping
/// in the cluster's database at `url`.
pub struct Deliveries {
    url: String,
    holder: String,
    deliverer: Deliverer,
    lease: Duration,
}

impl Deliveries {
    /// `deliverer` delivering as `holder` with its state in `url`'s database; jobs claimed for
    /// `lease` (a pass renews its own lease on the delivery state as it goes).
    pub fn new(url: &str, holder: &str, mut deliverer: Deliverer, lease: Duration) -> Deliveries {
        deliverer.bookkeeping = Bookkeeping::Shared {
            url: url.to_owned(),
            holder: holder.to_owned(),
        };
        Deliveries {
            url: url.to_owned(),
            holder: holder.to_owned(),
            deliverer,
            lease,
        }
    }

    /// Claims one pass if one is waiting and makes it (blocks; `runtime` runs the deliveries):
    /// whether one was claimed. A pass another replica is making (its lease on the state is
    /// held) completes this job: that pass delivers what is due.
    pub fn pass_once(
        &self,
        queue: &mut Queue,
        runtime: &tokio::runtime::Handle,
        stop: &Stop,
    ) -> Result<bool, RoleError> {
        let claims = queue
            .claim(&[WEBHOOKS], 1, self.lease)
            .map_err(RoleError::doing("claiming a webhook pass"))?;
        let Some(claim) = claims.into_iter().next() else {
            return Ok(false);
        };
        let outcome = runtime.block_on(self.deliverer.pass(stop));
        let result = match outcome {
            Ok(report) => Ok(crate::jobs::pass_summary(&report)),
            Err(DeliveryError::Busy(by)) => Ok(format!("another replica is delivering ({by})")),
            Err(e) => Err(e),
        };
        finish(queue, &claim, result)?;
        Ok(true)
    }

    /// Passes until `stop`, on the calling thread (blocks): one connection, opened again after
    /// a failure.
    pub fn run(&self, runtime: &tokio::runtime::Handle, stop: &Stop) {
        super::polling::poll(
            &self.url,
            &self.holder,
            "webhook passes",
            PASS_POLL,
            stop,
            |q| self.pass_once(q, runtime, stop),
        );
    }
}

fn finish(
    queue: &mut Queue,
    claim: &Claim,
    result: Result<String, DeliveryError>,
) -> Result<(), RoleError> {
    let done = match result {
        Ok(text) => {
            tracing::info!("webhook pass: {text}");
            queue.complete(claim, &text, None)
        }
        Err(e) => {
            tracing::warn!("webhook pass failed: {e}");
            queue
                .fail(claim, &e.to_string(), super::FAILED_RETRY)
                .map(|_| ())
        }
    };
    match done {
        Err(toolmark_queue::QueueError::Lost { .. }) => {
            tracing::warn!("webhook pass: its job's claim lapsed (the pass itself went on)");
            Ok(())
        }
        other => other.map_err(RoleError::doing("finishing the webhook pass")),
    }
}
