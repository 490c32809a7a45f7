//! Where the scheduler gets its time from.
//!
//! Everything in this crate reads the time through a [`Clock`]: [`SystemClock`] in production,
//! [`ManualClock`] in tests, where the test moves time forward by hand and can wait until the
//! tasks it drives are parked in [`Clock::sleep_until`] before it does.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

/// A source of wall-clock time that can also wait for a wall-clock time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;

    /// Completes once [`Clock::now`] is at or after `t` (at once if it already is).
    fn sleep_until(&self, t: DateTime<Utc>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// The longest single timer [`SystemClock::sleep_until`] sets before it looks at the wall
/// clock again. Tokio's timers run on a monotonic clock, which does not follow a wall-clock
/// step (NTP correction, manual change) and, on some systems, stops while the machine is
/// suspended; re-checking every second bounds how late a fire time, or a lease renewal
/// (every third of a lease, which can be as short as 3 s), can be after either.
pub const SYSTEM_SLEEP_SLICE: Duration = Duration::from_secs(1);

/// The real clock: [`Utc::now`] and tokio timers.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn sleep_until(&self, t: DateTime<Utc>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            loop {
                let now = Utc::now();
                let Ok(left) = (t - now).to_std() else {
                    return; // `t` is in the past
                };
                if left.is_zero() {
                    return;
                }
                tokio::time::sleep(left.min(SYSTEM_SLEEP_SLICE)).await;
            }
        })
    }
}

/// A clock that only moves when told to, for tests.
///
/// Sleepers park on a [`watch`] of the current time and wake when it reaches their deadline.
/// The clock also keeps the deadlines of the parked sleepers, so a test can wait until the
/// tasks it drives are all parked ([`ManualClock::sleepers_at_least`]) and then jump exactly to
/// the next deadline ([`ManualClock::next_deadline`]): no real-time sleeps, no races.
#[derive(Debug)]
pub struct ManualClock {
    time: watch::Sender<DateTime<Utc>>,
    /// Parked sleepers: id → deadline.
    sleepers: watch::Sender<BTreeMap<u64, DateTime<Utc>>>,
    next_sleeper_id: AtomicU64,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            time: watch::Sender::new(start),
            sleepers: watch::Sender::new(BTreeMap::new()),
            next_sleeper_id: AtomicU64::new(0),
        }
    }

    /// The clock's current time.
    pub fn now(&self) -> DateTime<Utc> {
        *self.time.borrow()
    }

    /// Moves the clock forward by `d`, waking the sleepers whose deadline it reaches.
    pub fn advance(&self, d: Duration) {
        let d = chrono::Duration::from_std(d).expect("ManualClock::advance: duration too large");
        self.time.send_modify(|t| *t += d);
    }

    /// Sets the clock to `t` (backwards too), waking the sleepers whose deadline it reaches.
    pub fn set(&self, t: DateTime<Utc>) {
        self.time.send_replace(t);
    }

    /// How many tasks are parked in [`Clock::sleep_until`] right now.
    pub fn sleepers(&self) -> usize {
        self.sleepers.borrow().len()
    }

    /// The earliest deadline among the parked sleepers.
    pub fn next_deadline(&self) -> Option<DateTime<Utc>> {
        self.sleepers.borrow().values().min().copied()
    }

    /// Completes once at least `n` tasks are parked in [`Clock::sleep_until`]. It has no
    /// timeout of its own: wrap it in `tokio::time::timeout` in a test.
    pub async fn sleepers_at_least(&self, n: usize) {
        let mut rx = self.sleepers.subscribe();
        // The sender lives in `self`, so this cannot fail while we borrow `self`.
        let _ = rx.wait_for(|s| s.len() >= n).await;
    }

    /// Sets the clock to the earliest parked deadline and returns it (None if nobody sleeps).
    pub fn advance_to_next_deadline(&self) -> Option<DateTime<Utc>> {
        let t = self.next_deadline()?;
        if t > self.now() {
            self.set(t);
        }
        Some(t)
    }
}

/// Removes a sleeper's entry when its future completes or is dropped (e.g. it lost a
/// `select!`).
struct SleeperGuard<'a> {
    clock: &'a ManualClock,
    id: u64,
}

impl Drop for SleeperGuard<'_> {
    fn drop(&mut self) {
        self.clock.sleepers.send_modify(|s| {
            s.remove(&self.id);
        });
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        ManualClock::now(self)
    }

    fn sleep_until(&self, t: DateTime<Utc>) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            let mut rx = self.time.subscribe();
            if *rx.borrow_and_update() >= t {
                return;
            }
            let id = self.next_sleeper_id.fetch_add(1, Ordering::Relaxed);
            self.sleepers.send_modify(|s| {
                s.insert(id, t);
            });
            let _guard = SleeperGuard { clock: self, id };
            // The sender lives in `self`, so this cannot fail while we borrow `self`.
            let _ = rx.wait_for(|now| *now >= t).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn t0() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    #[tokio::test]
    async fn manual_sleeper_wakes_at_its_deadline_and_not_before() {
        let clock = Arc::new(ManualClock::new(t0()));
        let c = clock.clone();
        let deadline = t0() + chrono::Duration::seconds(10);
        let task = tokio::spawn(async move {
            c.sleep_until(deadline).await;
            c.now()
        });
        clock.sleepers_at_least(1).await;
        assert_eq!(clock.next_deadline(), Some(deadline));
        clock.advance(Duration::from_secs(9));
        tokio::task::yield_now().await;
        assert_eq!(clock.sleepers(), 1, "woke before its deadline");
        clock.advance(Duration::from_secs(1));
        assert_eq!(task.await.unwrap(), deadline);
        assert_eq!(clock.sleepers(), 0);
    }

    #[tokio::test]
    async fn manual_sleep_in_the_past_returns_at_once_and_dropped_sleepers_unregister() {
        let clock = ManualClock::new(t0());
        clock.sleep_until(t0()).await;
        clock.sleep_until(t0() - chrono::Duration::seconds(1)).await;
        assert_eq!(clock.sleepers(), 0);
        tokio::select! {
            _ = clock.sleep_until(t0() + chrono::Duration::seconds(5)) => panic!("woke early"),
            _ = tokio::task::yield_now() => {}
        }
        assert_eq!(clock.sleepers(), 0, "a dropped sleeper stays registered");
    }

    #[tokio::test]
    async fn system_clock_sleep_until_past_returns_at_once() {
        let c = SystemClock;
        c.sleep_until(c.now() - chrono::Duration::seconds(1)).await;
    }
}
