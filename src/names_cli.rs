//! `toolmark package lookalike NAME` and `toolmark package popularity [--refresh]`: the
//! look-alike rules of `/check` on the command line, and the popularity snapshot they weigh
//! names with (docs/api.md "Look-alike names", docs/operations.md "Popularity").

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toolmark_api::lookalike::Names;
use toolmark_crawler::popularity::{self, CountSources};

#[derive(Args)]
pub struct LookalikeArgs {
    /// `npm:NAME`, `npm:@SCOPE/NAME`, `pypi:NAME`, or a registry server name
    /// (`io.github.owner/name`; needs --data, whose index holds the known names).
    name: String,
    /// A data directory: its newest popularity snapshot (else the bundled one) and, for a
    /// server name, its index.
    #[arg(long)]
    data: Option<PathBuf>,
}

/// Prints the JSON answer; `Ok(true)` (exit 0) when the name imitates nothing, `Ok(false)`
/// (exit 1) when it does.
pub fn lookalike(args: LookalikeArgs) -> Result<bool> {
    let names = match &args.data {
        Some(data) => Names::load(data)?,
        None => Names::bundled(),
    };
    let asked = names.ask(&args.name, args.data.as_deref())?;
    println!("{}", serde_json::to_string_pretty(&asked)?);
    Ok(!asked.imitates())
}

#[derive(Args)]
pub struct PopularityArgs {
    /// The data directory whose `popularity/` receives refreshed snapshots.
    #[arg(long)]
    data: PathBuf,
    /// Fetch fresh weekly counts and write a new dated snapshot (without it: print the
    /// snapshot in use).
    #[arg(long)]
    refresh: bool,
    /// Names asked about at most, the most downloaded first.
    #[arg(long, default_value_t = toolmark_roles::popularity::DEFAULT_REFRESH_NAMES)]
    max_names: usize,
    /// npm's downloads API.
    #[arg(long, default_value = popularity::NPM_DOWNLOADS)]
    npm_api: String,
    /// pypistats' API.
    #[arg(long, default_value = popularity::PYPISTATS)]
    pypistats: String,
    /// Ask loopback or private addresses (tests, a local stand-in).
    #[arg(long)]
    allow_private: bool,
}

pub fn popularity_command(args: PopularityArgs) -> Result<bool> {
    if !args.refresh {
        let out = toolmark_api::lookalike::snapshot_summary(&args.data)?;
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(true);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let sources = CountSources {
        npm: args.npm_api,
        pypistats: args.pypistats,
        ..CountSources::default()
    };
    let r = toolmark_roles::popularity::refresh(
        runtime.handle(),
        &args.data,
        args.max_names,
        &sources,
        args.allow_private,
    )?;
    println!("{}", serde_json::to_string_pretty(&r.to_json())?);
    Ok(true)
}
