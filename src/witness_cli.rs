//! `toolmark witness`: toolmark's own C2SP tlog-witness (`toolmark-witness`) for other logs,
//! behind the same connection layer as `toolmark serve`.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use toolmark_server::HttpFlags;
use toolmark_witness::Witness;

#[derive(Args)]
pub struct WitnessArgs {
    /// The witness's directory: `witness.key` (created on first start, mode 0600) and
    /// `witness.sqlite` (latest cosigned checkpoint per origin, evidence).
    #[arg(long)]
    pub data: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7380")]
    pub listen: SocketAddr,
    /// A trusted log, `ORIGIN=VKEY` (repeat; several keys per origin are allowed). The vkey's
    /// name need not be the origin.
    #[arg(long = "trust", env = "TOOLMARK_WITNESS_TRUST", value_delimiter = ',')]
    pub trust: Vec<String>,
    /// A file of trusted logs: one `ORIGIN=VKEY` per line; blank lines and `#` comments skipped.
    #[arg(long)]
    pub trust_file: Option<PathBuf>,
    /// The cosigner name (the key name in its vkey and cosignature lines); fixed by the key
    /// file once created.
    #[arg(long, default_value = toolmark_witness::DEFAULT_NAME)]
    pub name: String,
    /// The URL prefix of the routes (`<prefix>/add-checkpoint`,
    /// `<prefix>/<sha256 hex of origin>/checkpoint`), e.g. `/witness`.
    #[arg(long, default_value = "")]
    pub prefix: String,
    /// Print the witness's vkey (creating the key if need be) and exit.
    #[arg(long)]
    pub print_vkey: bool,
    /// Print the evidence (requests that failed consistency) as JSON lines and exit.
    #[arg(long)]
    pub evidence: bool,
    /// After a clock that ran ahead is fixed: forget the time of each origin's last
    /// cosignature (a cosignature is otherwise never dated before the previous one), and exit.
    #[arg(long)]
    pub clear_timestamps: bool,
    /// What one client may cost (defaults: docs/operations.md, "Limits").
    #[command(flatten)]
    pub http: HttpFlags,
}

pub fn run(args: WitnessArgs) -> Result<()> {
    let trusted = toolmark_witness::trusted(&args.trust, args.trust_file.as_deref())?;
    if !(args.prefix.is_empty() || args.prefix.starts_with('/')) {
        anyhow::bail!("--prefix {:?} must start with '/'", args.prefix);
    }
    let witness = Witness::open(&args.data, &args.name, &trusted)
        .with_context(|| format!("opening the witness in {}", args.data.display()))?;
    if args.print_vkey {
        println!("{}", witness.vkey());
        return Ok(());
    }
    if args.evidence {
        for row in witness.evidence()? {
            println!("{}", serde_json::to_string(&row)?);
        }
        return Ok(());
    }
    if args.clear_timestamps {
        let n = witness.clear_timestamps()?;
        println!("cleared the last cosignature time of {n} logs");
        return Ok(());
    }
    let limits = args.http.limits()?;
    let runtime = toolmark_roles::api::runtime()?;
    let stop = crate::serve_cli::stop_on_signal(&runtime);
    let serve = toolmark_roles::witness::serve(witness, args.listen, &args.prefix, limits, stop);
    Ok(runtime.block_on(serve)?)
}
