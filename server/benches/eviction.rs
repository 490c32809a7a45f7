//! What choosing an eviction victim costs (`conn::Admission`): the accept loop looks at every
//! open connection once the total cap is reached, so each connection accepted at the cap costs
//! a pass over the cap's connections. A bench binary, not criterion: it prints the median and
//! the 99th percentile of the admissions at the cap, timed one by one.
//!
//! `TOOLMARK_BENCH_CONNECTIONS` open connections (default 16,384: `MAX_CONNECTIONS`), from
//! distinct addresses, every one waiting on its client (the worst case: all are looked at and
//! compared), a third of them idle after a request; then `TOOLMARK_BENCH_ADMISSIONS` (default
//! 2,000) new connections, each evicting one.
//!
//! `cargo bench -p toolmark-server --bench eviction`

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use toolmark_server::conn::{Activity, Admission};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn address(i: usize) -> IpAddr {
    let i = u32::try_from(i).unwrap_or(u32::MAX);
    IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | i))
}

fn main() {
    let cap = env("TOOLMARK_BENCH_CONNECTIONS", 16_384);
    let admissions = env("TOOLMARK_BENCH_ADMISSIONS", 2_000);
    let admission = Admission::new(cap, 1);
    let mut open = VecDeque::new();
    for i in 0..cap {
        let activity = Activity::new();
        if i % 3 == 0 {
            // One request answered: idle on keep-alive since.
            activity.request();
            activity.answered();
        }
        open.push_back(admission.admit(address(i), &activity).unwrap());
    }
    let mut took = Vec::with_capacity(admissions);
    for i in 0..admissions {
        let activity = Activity::new();
        let started = Instant::now();
        let place = admission.admit(address(cap + i), &activity).unwrap();
        took.push(started.elapsed());
        assert!(place.evicted_another);
        // The victim is the oldest (every connection waits; their last activity is their
        // acceptance or their answer, in that order): it closes, as its task would.
        drop(open.pop_front());
        open.push_back(place);
    }
    took.sort();
    let at = |p: f64| took[((took.len() - 1) as f64 * p).round() as usize];
    println!(
        "eviction at the cap of {cap} connections ({admissions} admissions, each evicting one): median {:?}, p99 {:?}, max {:?}",
        at(0.5),
        at(0.99),
        took[took.len() - 1]
    );
}
