//! One memory budget shared by every observation in flight, and the per-address limit.
//!
//! ## The byte budget
//!
//! A [`Budget`] is a count of bytes (a fair tokio semaphore, counted in KiB). Every observation
//! holds a grant from it while it runs and charges against that grant, before the memory is
//! used, what it is about to hold:
//!
//! - every decompressed body byte, [`BODY_COPIES`] times (the buffer it is read into, and the
//!   copy kept as a page or an event), for the whole observation: pages are kept to the end;
//! - before each JSON parse, [`parse_estimate`] of the text (the parse tree and the result
//!   copy), released when the parse is dropped.
//!
//! A grant starts at [`crate::limits::OBSERVATION_GRANT`]: enough for every real tool set seen,
//! so a typical observation never asks again. When a charge passes its grant the observation
//! tries to grow it **without waiting**. If the budget cannot give that at once, the run is
//! abandoned: everything it held is dropped and its grant returned, it waits — holding nothing
//! of the budget, and with no timer running — for a grant as large as the per-observation caps
//! can need (or twice what it wanted, if more), and runs again from the start with a fresh
//! deadline. Should that run still not fit, the third and last run waits for the whole budget
//! and then runs alone; an observation holding the whole budget is never refused (its own caps
//! bound it).
//!
//! This cannot deadlock: an observation only ever *waits* for budget while holding none, and
//! one holding budget never waits for budget, only tries. The semaphore is fair, so a large
//! waiter is served before later small ones and cannot starve. An observation waits; it is not
//! failed for lack of budget (timers start only once the grant is held). A set over the
//! per-observation caps ends `too-large` exactly as without the budget.
//!
//! When an observation ends, its grant is shrunk to what its pages hold ([`Grant::shrink_to`])
//! and handed, with the pages, to the crawl's consumer in [`crate::crawl::Outcome::grant`]: the
//! pages stay accounted until the consumer drops the grant (after recording them), so outcomes
//! waiting in a consumer's batch are inside the budget too. A consumer must drop it within a
//! bounded time whatever the crawl does (the binary's recorder flushes by latency and by
//! held bytes), or observations waiting for budget wait for it.
//!
//! ## The per-address limit
//!
//! The crawl's per-host limit is keyed by host name; many names can point at one address. An
//! [`AddressGate`] applies the same limit per resolved address ([`address_key`]: IPv4 per
//! address, IPv6 per /64): after the SSRF guard resolves a target, its observation joins every
//! address it may dial and waits for a permit at each (in key order, so two observations never
//! each hold what the other waits for) before it takes budget. At most
//! [`crate::limits::MAX_WAITING_PER_ADDRESS`] may wait at one address beyond those running;
//! [`AddressGate::join`] refuses more at once ([`Busy`]) and the crawl sets such a target aside
//! until the address has room, so waiters never fill the crawl's global slots. Waits for an
//! address or for budget end early, the observation abandoned, when the crawl's stop token is
//! cancelled.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Copies of each decompressed body byte an observation is charged for: the buffer it is read
/// into (whose capacity may reach twice its length while it grows; the cumulative charge covers
/// that, since a body is dropped once parsed) and the page or event text kept from it.
pub const BODY_COPIES: usize = 2;

/// Bytes charged per structural token (`{`, `[`, `,` or `:` outside strings) of a JSON text
/// about to be parsed. Measured with a counting allocator on 4–8 MiB pages: the tool-set and
/// JSON-RPC parsers' trees cost 2.2× the text for tools with 4 KB descriptions, 9.4× for dense
/// objects (`"k":{}`) and 21× for dense number arrays (`1,1,1`): 42 bytes per token before
/// allocator overhead, so 64 is an upper bound.
pub const BYTES_PER_TOKEN: usize = 64;

/// Text copies charged per parse besides the tree: the strings decoded out of it and the result
/// text taken from it.
pub const PARSE_COPIES: usize = 2;

/// The unit the semaphore counts in (tokio grants at most `u32::MAX` permits at once).
const UNIT: usize = 1024;

fn units(bytes: usize) -> usize {
    bytes.div_ceil(UNIT)
}

/// What parsing `text` is charged: [`PARSE_COPIES`] times its length plus [`BYTES_PER_TOKEN`]
/// for every structural token outside strings. One linear scan, no allocation.
pub fn parse_estimate(text: &[u8]) -> usize {
    let mut tokens = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' | b',' | b':' => tokens += 1,
                _ => {}
            }
        }
    }
    text.len()
        .saturating_mul(PARSE_COPIES)
        .saturating_add(tokens.saturating_mul(BYTES_PER_TOKEN))
}

/// The memory budget observations share; clones share it. See the module documentation.
#[derive(Clone, Debug)]
pub struct Budget {
    semaphore: Arc<Semaphore>,
    /// Total, in units.
    total: usize,
}

impl Budget {
    /// A budget of `bytes` (at least one KiB, at most what a semaphore can count).
    pub fn new(bytes: usize) -> Budget {
        let total = units(bytes).clamp(1, Semaphore::MAX_PERMITS);
        Budget {
            semaphore: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// The budget's size in bytes.
    pub fn bytes(&self) -> usize {
        self.total * UNIT
    }

    /// Bytes not granted to anyone right now.
    pub fn available(&self) -> usize {
        self.semaphore.available_permits() * UNIT
    }

    /// Wait for a grant of `bytes` (clamped to the whole budget).
    pub(crate) async fn acquire(&self, bytes: usize) -> Grant {
        let want = units(bytes).clamp(1, self.total);
        let permit = acquire_units(&self.semaphore, want).await;
        Grant {
            budget: self.clone(),
            permit: Some(permit),
            units: want,
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(crate::limits::MEMORY_BUDGET)
    }
}

async fn acquire_units(semaphore: &Arc<Semaphore>, n: usize) -> OwnedSemaphorePermit {
    // `n` never exceeds the total, which fits the semaphore; it can exceed u32 only for a
    // budget above 4 TiB, where taking u32::MAX units is the same as all of them in practice.
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    semaphore
        .clone()
        .acquire_many_owned(n)
        .await
        .expect("the budget's semaphore is never closed")
}

/// Budget held by one observation; returned when dropped.
#[derive(Debug)]
pub struct Grant {
    budget: Budget,
    permit: Option<OwnedSemaphorePermit>,
    units: usize,
}

impl Grant {
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.units * UNIT
    }

    /// Give back all but what `bytes` needs (rounded up to the budget's unit); never grows.
    /// A finished observation keeps only what its pages hold, so observations waiting in a
    /// consumer's batch hold no more of the budget than their pages use.
    pub fn shrink_to(&mut self, bytes: usize) {
        let keep = units(bytes).min(self.units);
        let Some(permit) = &mut self.permit else {
            return;
        };
        if keep == 0 {
            self.permit = None;
        } else if let Some(extra) = permit.split(self.units - keep) {
            drop(extra);
        } else {
            return;
        }
        self.units = keep;
    }

    /// Whether this grant is the whole budget (then it is never refused more).
    fn whole(&self) -> bool {
        self.units >= self.budget.total
    }

    /// Grow to cover `need` bytes if the budget has that free right now; never waits. A grant
    /// that is the whole budget always "grows": it runs alone and its caps bound it.
    fn try_grow(&mut self, need: usize) -> bool {
        let need = units(need);
        if need <= self.units || self.whole() {
            return true;
        }
        let room = self.budget.total - self.units;
        // Ask a quarter more than needed, so a body growing chunk by chunk asks rarely.
        let ask = (need - self.units + need / 4).min(room);
        let min = (need - self.units).min(room);
        for n in [ask, min] {
            let Ok(n32) = u32::try_from(n) else { continue };
            if let Ok(more) = self.budget.semaphore.clone().try_acquire_many_owned(n32) {
                match &mut self.permit {
                    Some(p) => p.merge(more),
                    None => self.permit = Some(more),
                }
                self.units += n;
                return need <= self.units || self.whole();
            }
        }
        false
    }
}

/// One run's account: what it holds against its grant.
#[derive(Debug)]
pub(crate) struct Meter {
    state: Mutex<MeterState>,
}

#[derive(Debug)]
struct MeterState {
    grant: Option<Grant>,
    /// Bytes charged and not released.
    used: usize,
    /// The most charged at once, when a charge could not be granted.
    starved: Option<usize>,
}

/// A body being read (`toolmark_outbound::body`) is charged [`BODY_COPIES`] times its
/// decompressed bytes.
impl toolmark_outbound::body::BodyMeter for Meter {
    fn charge_body(&self, bytes: usize) -> Result<(), toolmark_outbound::body::OverBudget> {
        self.charge(bytes.saturating_mul(BODY_COPIES))
            .map_err(|Starved| toolmark_outbound::body::OverBudget)
    }
}

/// A charge could not be covered without waiting: the run must stop and start again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Starved;

impl Meter {
    pub(crate) fn new(grant: Grant) -> Meter {
        Meter {
            state: Mutex::new(MeterState {
                grant: Some(grant),
                used: 0,
                starved: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MeterState> {
        // A panic while holding this lock leaves plain numbers behind: still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Charge `bytes` for the rest of the run.
    pub(crate) fn charge(&self, bytes: usize) -> Result<(), Starved> {
        let mut s = self.lock();
        if s.starved.is_some() {
            return Err(Starved);
        }
        let used = s.used.saturating_add(bytes);
        let granted = match &mut s.grant {
            Some(g) => g.try_grow(used),
            None => false,
        };
        if granted {
            s.used = used;
            Ok(())
        } else {
            s.starved = Some(used);
            Err(Starved)
        }
    }

    /// Charge `bytes` until the returned hold is dropped.
    pub(crate) fn hold(self: &Arc<Self>, bytes: usize) -> Result<Hold, Starved> {
        self.charge(bytes)?;
        Ok(Hold {
            meter: self.clone(),
            bytes,
        })
    }

    fn release(&self, bytes: usize) {
        let mut s = self.lock();
        s.used = s.used.saturating_sub(bytes);
    }

    /// What a run that starved wanted (`None` when it never did).
    pub(crate) fn starved(&self) -> Option<usize> {
        self.lock().starved
    }

    /// Take the grant out (the run is over; a late charge by a task still winding down fails).
    pub(crate) fn take_grant(&self) -> Option<Grant> {
        let mut s = self.lock();
        let used = s.used;
        s.starved.get_or_insert(used);
        s.grant.take()
    }
}

/// A charge released when dropped.
#[derive(Debug)]
pub(crate) struct Hold {
    meter: Arc<Meter>,
    bytes: usize,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.meter.release(self.bytes);
    }
}

/// The key an address is limited under: an IPv4 address as itself, an IPv6 address by its /64
/// (the usual allocation to one machine or one site, so a server cannot be reached by more
/// observations at once by spreading names over its subnet), an IPv4-mapped IPv6 address as
/// the IPv4 address it maps. The same keying as the API's per-client limits.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// The per-address limit of a crawl: at most `limit` observations dial one address (key:
/// [`address_key`]) at a time, and at most `waiting` more wait for it.
#[derive(Debug)]
pub struct AddressGate {
    limit: usize,
    waiting: usize,
    slots: Mutex<HashMap<IpAddr, Slot>>,
}

#[derive(Debug)]
struct Slot {
    semaphore: Arc<Semaphore>,
    /// Observations holding or waiting for a permit here.
    occupants: usize,
    /// Permits for ending sessions here ([`Place::into_closer`]): `limit` of them.
    closing: Arc<Semaphore>,
    /// Observations ending a session here.
    closers: usize,
}

/// [`AddressGate::join`] refused: this address key has as many observations running and
/// waiting as it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy(pub IpAddr);

/// One observation's place at every address it may dial: it counts as an occupant of each
/// from [`AddressGate::join`] until dropped, and holds their permits after [`Place::wait`].
#[derive(Debug)]
pub struct Place {
    gate: Arc<AddressGate>,
    /// Address keys, in order (permits are taken in this order).
    keys: Vec<IpAddr>,
    permits: Vec<OwnedSemaphorePermit>,
}

impl AddressGate {
    /// A gate letting `limit` (at least 1) observations at each address, and `waiting` more
    /// wait there.
    pub fn new(limit: usize, waiting: usize) -> AddressGate {
        AddressGate {
            limit: limit.max(1),
            waiting,
            slots: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Observations running plus waiting an address key may have.
    pub fn capacity(&self) -> usize {
        self.limit.saturating_add(self.waiting)
    }

    /// Observations running at or waiting for `key` now.
    pub fn occupants(&self, key: IpAddr) -> usize {
        self.lock().get(&key).map_or(0, |s| s.occupants)
    }

    /// Take a place at every address of `addrs` (by [`address_key`]), or refuse at once, with
    /// the first key that is full, when any has [`AddressGate::capacity`] occupants already.
    /// Never waits.
    pub fn join(self: &Arc<Self>, addrs: &[SocketAddr]) -> Result<Place, Busy> {
        let mut keys: Vec<IpAddr> = addrs.iter().map(|a| address_key(a.ip())).collect();
        keys.sort();
        keys.dedup();
        let mut slots = self.lock();
        if let Some(full) = keys
            .iter()
            .find(|k| slots.get(k).is_some_and(|s| s.occupants >= self.capacity()))
        {
            return Err(Busy(*full));
        }
        for key in &keys {
            slots
                .entry(*key)
                .or_insert_with(|| Slot {
                    semaphore: Arc::new(Semaphore::new(self.limit)),
                    occupants: 0,
                    closing: Arc::new(Semaphore::new(self.limit)),
                    closers: 0,
                })
                .occupants += 1;
        }
        Ok(Place {
            gate: self.clone(),
            keys,
            permits: Vec::new(),
        })
    }
}

impl Place {
    /// Wait for a permit at every address, in key order (so two observations never each hold
    /// what the other waits for). Cancel-safe: permits taken so far are kept, and dropping the
    /// place returns them.
    pub async fn wait(&mut self) {
        while self.permits.len() < self.keys.len() {
            let key = self.keys[self.permits.len()];
            let semaphore = self
                .gate
                .lock()
                .get(&key)
                .map(|s| s.semaphore.clone())
                .expect("a place's slots live as long as it");
            self.permits.push(
                semaphore
                    .acquire_owned()
                    .await
                    .expect("address semaphores are never closed"),
            );
        }
    }
}

impl Place {
    /// Trade this place (its permits taken) for a [`Closer`] at the same addresses, so the
    /// session the observation was issued can be ended without holding up the next observation
    /// there: the place's permits go back at once, and at most `limit` closers hold each address
    /// (beside its `limit` observations). Without a free closing permit at every address, the
    /// place is handed back unchanged (the caller ends its session holding it).
    pub fn into_closer(mut self) -> Result<Closer, Place> {
        let mut slots = self.gate.lock();
        let mut taken = Vec::with_capacity(self.keys.len());
        for key in &self.keys {
            let permit = slots
                .get(key)
                .and_then(|s| s.closing.clone().try_acquire_owned().ok());
            match permit {
                Some(p) => taken.push(p),
                None => {
                    drop(slots);
                    return Err(self);
                }
            }
        }
        for key in &self.keys {
            if let Some(slot) = slots.get_mut(key) {
                slot.occupants = slot.occupants.saturating_sub(1);
                slot.closers += 1;
            }
        }
        drop(slots);
        self.permits.clear();
        let keys = std::mem::take(&mut self.keys);
        Ok(Closer {
            gate: self.gate.clone(),
            keys,
            _permits: taken,
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.permits.clear();
        let mut slots = self.gate.lock();
        for key in &self.keys {
            if let Some(slot) = slots.get_mut(key) {
                slot.occupants = slot.occupants.saturating_sub(1);
                if slot.occupants == 0 && slot.closers == 0 {
                    // Nobody holds or waits for its permits: forget the address.
                    slots.remove(key);
                }
            }
        }
    }
}

/// An observation ending its session at every address it dialled ([`Place::into_closer`]);
/// its closing permits go back when dropped.
#[derive(Debug)]
pub struct Closer {
    gate: Arc<AddressGate>,
    keys: Vec<IpAddr>,
    _permits: Vec<OwnedSemaphorePermit>,
}

impl Drop for Closer {
    fn drop(&mut self) {
        let mut slots = self.gate.lock();
        for key in &self.keys {
            if let Some(slot) = slots.get_mut(key) {
                slot.closers = slot.closers.saturating_sub(1);
                if slot.occupants == 0 && slot.closers == 0 {
                    slots.remove(key);
                }
            }
        }
    }
}

/// `fut`'s output, or `None` if `stop` is cancelled first. Without a token, `fut`'s output.
pub(crate) async fn unless_stopped<T>(
    fut: impl std::future::Future<Output = T>,
    stop: Option<&CancellationToken>,
) -> Option<T> {
    let Some(stop) = stop else {
        return Some(fut.await);
    };
    tokio::select! {
        biased;
        out = fut => Some(out),
        () = stop.cancelled() => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_count_tokens_outside_strings() {
        assert_eq!(parse_estimate(b"1"), 2);
        assert_eq!(parse_estimate(b"[1,2]"), 10 + 2 * BYTES_PER_TOKEN);
        // Structural characters inside strings, escaped quotes included, are text.
        assert_eq!(parse_estimate(br#""{[,:\"]}""#), 20);
    }

    #[tokio::test]
    async fn a_grant_grows_only_while_the_budget_has_room() {
        let budget = Budget::new(10 * UNIT);
        let meter = Meter::new(budget.acquire(2 * UNIT).await);
        meter.charge(UNIT).unwrap();
        meter.charge(5 * UNIT).unwrap();
        assert!(budget.available() <= 4 * UNIT);
        // Someone else takes what is left: the next growth fails at once, without waiting.
        let other = budget.acquire(budget.available()).await;
        assert_eq!(meter.charge(4 * UNIT), Err(Starved));
        assert_eq!(meter.starved(), Some(10 * UNIT));
        assert_eq!(meter.charge(1), Err(Starved), "a starved run stays starved");
        drop(meter.take_grant());
        drop(other);
        assert_eq!(budget.available(), 10 * UNIT);
    }

    #[tokio::test]
    async fn holds_are_released_and_the_whole_budget_is_never_refused() {
        let budget = Budget::new(4 * UNIT);
        let meter = Arc::new(Meter::new(budget.acquire(100 * UNIT).await));
        assert_eq!(
            budget.available(),
            0,
            "a grant is clamped to the whole budget"
        );
        {
            let _h = meter.hold(50 * UNIT).unwrap();
        }
        meter.charge(3 * UNIT).unwrap();
        assert_eq!(meter.lock().used, 3 * UNIT);
    }

    #[tokio::test]
    async fn the_address_gate_limits_each_address() {
        let gate = Arc::new(AddressGate::new(2, 1));
        let a: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let b: SocketAddr = "127.0.0.2:80".parse().unwrap();
        let mut one = gate.join(&[a]).unwrap();
        one.wait().await;
        let mut two = gate.join(&[a, b]).unwrap();
        two.wait().await;
        // A third for `a` must wait (polled once, it is not ready); `b` alone still has room.
        let mut third = gate.join(&[a]).unwrap();
        tokio::select! {
            biased;
            _ = third.wait() => panic!("a third observation entered one address"),
            _ = std::future::ready(()) => {}
        }
        assert_eq!(gate.occupants(a.ip()), 3);
        // Two running and one waiting fill `a`: a fourth is refused at once, naming it.
        assert_eq!(gate.join(&[b, a]).unwrap_err(), Busy(a.ip()));
        let mut at_b = gate.join(&[b]).unwrap();
        at_b.wait().await;
        drop(one);
        third.wait().await;
        drop((two, third, at_b));
        assert_eq!(gate.occupants(a.ip()), 0);
        assert!(gate.lock().is_empty(), "idle addresses are forgotten");
    }

    #[tokio::test]
    async fn a_closer_gives_the_place_back_and_closers_are_limited_too() {
        let gate = Arc::new(AddressGate::new(1, 1));
        let a: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let mut first = gate.join(&[a]).unwrap();
        first.wait().await;
        let closing = first.into_closer().expect("a closing permit is free");
        // The place is free again for the next observation.
        let mut second = gate.join(&[a]).unwrap();
        second.wait().await;
        assert_eq!(gate.occupants(a.ip()), 1);
        // With the one closing permit taken, the second keeps its place to end its session.
        let second = second.into_closer().unwrap_err();
        drop(closing);
        let closing = second.into_closer().expect("the permit came back");
        assert_eq!(gate.occupants(a.ip()), 0);
        assert!(
            !gate.lock().is_empty(),
            "an address being closed is remembered"
        );
        drop(closing);
        assert!(gate.lock().is_empty(), "idle addresses are forgotten");
    }

    #[test]
    fn address_keys_are_ipv4_addresses_and_ipv6_slash_64s() {
        let key = |s: &str| address_key(s.parse().unwrap()).to_string();
        assert_eq!(key("192.0.2.7"), "192.0.2.7");
        assert_eq!(key("2001:db8:1:2:aa:bb:cc:dd"), "2001:db8:1:2::");
        assert_eq!(key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff::9"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("::ffff:192.0.2.7"), "192.0.2.7");
    }
}
