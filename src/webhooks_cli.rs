//! `toolmark webhooks deliver`: one webhook delivery pass over the subscriptions the
//! configuration lists (what `toolmark run`'s `webhooks` job does on its schedule), and the
//! deliverer both build.

use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Subcommand;
use toolmark_config::{Config, RunFlags};
use toolmark_crawler::guard::Policy;
use toolmark_crawler::mcp::ClientConfig;
use toolmark_index::DataDir;
use toolmark_schedules::{JobContext, JobError, JobFn};
use toolmark_webhooks::{Deliverer, PassReport};

#[derive(Subcommand)]
pub enum WebhooksCommand {
    /// One delivery pass: every subscription that is due gets the events after its cursor, in
    /// order, until one is not acknowledged. Reads the same configuration as `toolmark run`.
    Deliver(Box<RunFlags>),
}

pub fn run(command: WebhooksCommand) -> Result<bool> {
    let WebhooksCommand::Deliver(flags) = command;
    let config = Config::load(&flags)?;
    // The base `toolmark run` serves under with this configuration (`base_url`; without it,
    // the configured listen address).
    let base = config.public_base(config.listen);
    let Some(deliverer) = deliverer(&config, &base)? else {
        eprintln!("toolmark webhooks deliver: the configuration lists no [[webhooks]]");
        return Ok(true);
    };
    let runtime = crate::serve_cli::runtime()?;
    let stop = toolmark_ingest::Stop::new();
    let report = runtime.block_on(async {
        let signalled = stop.clone();
        tokio::spawn(async move {
            crate::serve_cli::terminated().await;
            signalled.cancel();
        });
        deliverer.pass(&stop).await
    })?;
    print!("{}", summary(&report));
    Ok(report.subscriptions.iter().all(|s| s.failure.is_none()))
}

/// One line per subscription.
fn summary(report: &PassReport) -> String {
    let mut out = String::new();
    for s in &report.subscriptions {
        let state = match (&s.failure, s.waiting) {
            (Some(f), _) => format!("not delivered: {f}"),
            (None, true) => "backing off (not due yet)".to_owned(),
            (None, false) => "up to date".to_owned(),
        };
        out.push_str(&format!(
            "{}: {} delivered, cursor {}, {state}\n",
            s.id, s.delivered, s.cursor
        ));
    }
    out
}

/// The deliverer of `config`'s subscriptions (`None` when it lists none): the answer key
/// signs, the events' issuer is `base`'s `/api/v1/issuer` (the public base the API serves
/// under, so a webhook's body is the document the API serves), and the client follows
/// the crawl's SSRF policy and name resolution (`crawl.allow_private`, for tests and demos
/// only; `crawl.resolve` pins and `crawl.no_dns`).
pub fn deliverer(config: &Config, base: &str) -> Result<Option<Deliverer>> {
    let subscriptions = config.subscriptions()?;
    if subscriptions.is_empty() {
        return Ok(None);
    }
    let data = DataDir::new(&config.data);
    let key = data.answer_key().context("the answer key")?;
    let issuer = format!("{base}/api/v1/issuer");
    let client = ClientConfig {
        policy: Policy {
            allow_private: config.crawl.allow_private,
        },
        resolver: toolmark_ingest::resolver(&config.crawl)?,
        user_agent: format!(
            "toolmark/{} (security-event webhooks)",
            env!("CARGO_PKG_VERSION")
        ),
        ..ClientConfig::default()
    };
    Ok(Some(Deliverer::new(
        &data,
        key,
        issuer,
        subscriptions,
        client,
    )))
}

/// The delivery pass as `toolmark run`'s job; it stops with the job's stop signal (shutdown or
/// a lost lease). A subscription that was not acknowledged fails the run (the scheduler logs
/// it); the subscription's own back-off decides when it is tried again.
pub fn job(deliverer: Deliverer) -> JobFn {
    let deliverer = Arc::new(deliverer);
    Arc::new(move |ctx: JobContext| {
        let deliverer = deliverer.clone();
        Box::pin(async move {
            let report = deliverer
                .pass(&ctx.stop)
                .await
                .map_err(|e| JobError::new(e.to_string()))?;
            let text = summary(&report).trim_end().replace('\n', "; ");
            if report.subscriptions.iter().any(|s| s.failure.is_some()) {
                return Err(JobError::new(text));
            }
            Ok(text)
        })
    })
}
