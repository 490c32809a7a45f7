//! A world that makes security events: `io.example/alpha` whose tool set flips every day
//! between the filesystem set and its rug pull (a dangerous change both ways), and
//! `io.example/beta` whose protected-resource metadata names another authorization server
//! every day (a dangerous `authorization` change from day 1 on). Shared by the index's events
//! tests, the API's and the webhooks' (included with `#[path]` beside a `support` module that
//! is the index's test support).
#![allow(dead_code)]

use super::support::*;
use toolmark_observation::observe::{Observation, ProtectedResource};
use toolmark_observation::registry::Record;

pub const ALPHA: &str = "https://alpha.example.com/mcp";
pub const BETA: &str = "https://beta.example.com/mcp";

pub fn registry() -> Vec<Record> {
    records(serde_json::json!([
        {"name": "io.example/alpha", "version": "1.0.0",
         "remotes": [{"type": "streamable-http", "url": ALPHA}]},
        {"name": "io.example/beta", "version": "2.0.0",
         "remotes": [{"type": "streamable-http", "url": BETA}]},
    ]))
}

/// beta refusing with protected-resource metadata that names `server`.
fn beta_guarded_by(secs: u64, server: &str) -> Observation {
    let mut obs = auth_required(secs);
    let auth = obs.dialled_mut().unwrap().auth.as_mut().unwrap();
    auth.protected_resource = Some(ProtectedResource {
        url: "https://beta.example.com/.well-known/oauth-protected-resource".into(),
        from_challenge: true,
        http_status: Some(200),
        resource: Some(BETA.into()),
        authorization_servers: vec![server.to_owned()],
        ..Default::default()
    });
    obs
}

/// Record day `d` of the world.
pub fn record_day(env: &mut Env, d: u64) {
    env.run(&day_str(d, 0), &registry(), &[], |url| match url {
        ALPHA if d % 2 == 0 => Some(ok(day(d, 10), vec![corpus_page(FILESYSTEM)])),
        ALPHA => Some(ok(day(d, 10), vec![filesystem_rug_pull()])),
        BETA => Some(beta_guarded_by(
            day(d, 11),
            &format!("https://auth{d}.example.com"),
        )),
        other => panic!("dialled {other}"),
    });
}

/// A fresh world with `days` days recorded.
pub fn world(tag: &str, days: u64) -> Env {
    let mut env = Env::new(tag);
    for d in 0..days {
        record_day(&mut env, d);
    }
    env
}
