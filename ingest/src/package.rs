//! One package version observed in gVisor on request (`toolmark package observe SPEC`): fetched
//! from its registry and checked against its digest (or a local file taken as if published),
//! observed by the same sandbox observer as the sweep, and reported as a [`PackageReport`].
//! Nothing is logged.

use std::path::PathBuf;

use toolmark_crawler::mcp::ClientConfig;
use toolmark_crawler::packages::{PackageError, Registries, Spec};
use toolmark_observation::sandbox::PackageReport;
use toolmark_sandbox::observe::{Artifact, Launch, Observer, Report, Status};
use toolmark_sandbox::prepare::NpmOptions;

use crate::sweep::{FetchError, fetch_artifact, simple_index_pip};

/// What to observe and how: the version, the registries and caches, the sandbox's runs. Also
/// `toolmark package observe`'s flags (flattened there, as `CrawlFlags` is into `crawl`).
#[derive(Debug, Clone, clap::Args)]
pub struct PackageRequest {
    /// `npm:<name>@<version>`, `pypi:<name>==<version>`, or a local npm tarball (`.tgz`) or
    /// wheel (`.whl`, under its published file name).
    pub spec: String,
    /// The npm registry the package and its dependencies come from.
    #[arg(long = "registry", default_value = toolmark_crawler::packages::NPM_REGISTRY)]
    pub npm_registry: String,
    /// npm's cache (content-addressed, integrity-checked).
    #[arg(long, default_value = "/var/cache/toolmark/npm")]
    pub npm_cache: PathBuf,
    /// Install npm dependencies from the cache only.
    #[arg(long)]
    pub offline: bool,
    /// The Python package index a wheel comes from (its JSON API, `/pypi/<name>/json`) and pip
    /// installs its dependencies from (its simple API, `/simple`).
    #[arg(long, default_value = toolmark_crawler::packages::PYPI_INDEX)]
    pub pypi_index: String,
    /// pip's cache (shared between runs).
    #[arg(long, default_value = "/var/cache/toolmark/pip")]
    pub pip_cache: PathBuf,
    /// Install a wheel's dependencies from the wheels in this directory only (`pip --no-index
    /// --find-links`): no index is asked.
    #[arg(long)]
    pub find_links: Option<PathBuf>,
    /// Where runs live (each gets a directory of its own).
    #[arg(long, default_value = "/var/tmp/toolmark-sandbox")]
    pub work: PathBuf,
    /// Keep the run's directory (tree, decoy HOME, traces) for inspection (it stays mounted:
    /// a tmpfs).
    #[arg(long)]
    pub keep: bool,
    /// The `toolmark-probe` binary (the DNS sink and traps inside the sandbox); default: the
    /// one beside this binary. Without one the traps are off and lookups' names unknown.
    #[arg(long)]
    pub probe: Option<PathBuf>,
    /// An argument after the entry point (the registry's `packageArguments`); repeatable.
    #[arg(long = "arg")]
    pub arguments: Vec<String>,
    /// NAME or NAME=VALUE for the server's environment (a bare NAME gets a canary value);
    /// repeatable.
    #[arg(long = "env")]
    pub env: Vec<String>,
}

/// Why a version could not be observed at all (a registry's "no such version" or "no wheel"
/// is not one: it is the report's status).
#[derive(Debug, thiserror::Error)]
pub enum PackageObserveError {
    /// A directory the run needs could not be made.
    #[error("{}: cannot create", .0.display())]
    Create(PathBuf, #[source] std::io::Error),
    /// The local file could not be read.
    #[error("{}: cannot read", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    /// The spec is none of the accepted forms.
    #[error("{0:?}: not npm:<name>@<version>, pypi:<name>==<version>, or a .tgz or .whl file")]
    NotASpec(String),
    /// The spec does not parse.
    #[error(transparent)]
    Spec(#[from] PackageError),
    /// The version could not be fetched.
    #[error("fetching {spec}")]
    Fetch {
        /// The version asked for.
        spec: String,
        /// Why.
        #[source]
        source: FetchError,
    },
}

/// `NAME=VALUE` as a variable with its value; a bare `NAME` as one that gets a canary value.
fn env_setting(text: &str) -> (String, Option<String>) {
    match text.split_once('=') {
        Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
        None => (text.to_owned(), None),
    }
}

/// The status of a version the registry says cannot be observed (`no-wheel`, `not-found`): the
/// registry's answer about the package, not a failure of ours. `None` for every other error.
fn unfetched(e: &FetchError) -> Option<Status> {
    match e {
        FetchError::Package(PackageError::NoWheel(_)) => Some(Status::NoWheel),
        FetchError::Package(PackageError::NotFound(_)) => Some(Status::NotFound),
        _ => None,
    }
}

/// Observe `r.spec` in gVisor: its report (the status `ok` only when it was observed
/// completely enough to list tools), with a fetched version's registry signals; a version the
/// registry says is missing or has no wheel is reported with that status, unobserved.
///
/// # Errors
///
/// [`PackageObserveError`] when nothing could be observed for a reason of ours.
pub async fn observe_package(r: &PackageRequest) -> Result<PackageReport, PackageObserveError> {
    for dir in [&r.work, &r.npm_cache, &r.pip_cache] {
        std::fs::create_dir_all(dir).map_err(|e| PackageObserveError::Create(dir.clone(), e))?;
    }
    let local = |ext: &str| r.spec.ends_with(ext);
    let (artifact, digest, fetched) = if local(".tgz") || local(".whl") {
        let path = PathBuf::from(&r.spec);
        let bytes = std::fs::read(&path).map_err(|e| PackageObserveError::Read(path.clone(), e))?;
        let digest = toolmark_toolset::Sri::of(&bytes).to_string();
        let artifact = if local(".whl") {
            Artifact::Wheel(path)
        } else {
            Artifact::Npm(path)
        };
        (artifact, digest, None)
    } else if r.spec.starts_with("npm:") || r.spec.starts_with("pypi:") {
        let spec = Spec::parse(&r.spec)?;
        let registries = Registries {
            npm: r.npm_registry.clone(),
            pypi: r.pypi_index.clone(),
        };
        let dir = r.work.join(format!("fetched-{}", std::process::id()));
        match fetch_artifact(&ClientConfig::default(), &registries, &spec, dir).await {
            Ok(f) => (f.artifact.clone(), f.sha256_sri.clone(), Some(f)),
            Err(e) => {
                let Some(status) = unfetched(&e) else {
                    let spec = spec.to_string();
                    return Err(PackageObserveError::Fetch { spec, source: e });
                };
                let report = Report::unfetched(status, format!("fetching {spec}: {e}"));
                return Ok(report.package_report(&r.spec, ""));
            }
        }
    } else {
        return Err(PackageObserveError::NotASpec(r.spec.clone()));
    };
    let mut pip = simple_index_pip(&r.pypi_index, r.pip_cache.clone());
    pip.find_links = r.find_links.clone();
    let mut observer = Observer::new(
        NpmOptions::new(r.npm_registry.clone(), r.npm_cache.clone(), r.offline),
        pip,
        r.work.clone(),
        r.probe.clone(),
    );
    observer.keep = r.keep;
    let launch = Launch {
        arguments: r.arguments.clone(),
        env: r.env.iter().map(|e| env_setting(e)).collect(),
    };
    let report = observer.observe(&artifact, &launch).await;
    let mut out = report.package_report(&r.spec, &digest);
    out.registry = fetched.as_ref().map(|f| f.registry.clone());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_wheel_and_not_found_are_printed_statuses_and_other_fetch_errors_are_not() {
        let package = |e: PackageError| FetchError::Package(e);
        assert_eq!(
            unfetched(&package(PackageError::NoWheel(1))),
            Some(Status::NoWheel)
        );
        assert_eq!(
            unfetched(&package(PackageError::NotFound("version 9".into()))),
            Some(Status::NotFound)
        );
        assert_eq!(
            unfetched(&package(PackageError::IntegrityMissing("SHA-256"))),
            None
        );
        assert_eq!(unfetched(&FetchError::FileName("../x.whl".into())), None);
        let report = Report::unfetched(Status::NoWheel, "fetching pypi:x==1: no wheel");
        let out = serde_json::to_value(report.package_report("pypi:x==1", "")).unwrap();
        assert_eq!(out["package"], "pypi:x==1");
        assert_eq!(out["status"], "no-wheel");
        assert_eq!(out["detail"], "fetching pypi:x==1: no wheel");
        assert_eq!(out["complete"], false);
        assert_eq!(out["tools"], serde_json::json!([]));
    }

    #[test]
    fn an_env_setting_is_a_value_or_a_bare_name_for_the_canary() {
        assert_eq!(env_setting("A=b=c"), ("A".into(), Some("b=c".into())));
        assert_eq!(env_setting("TOKEN"), ("TOKEN".into(), None));
    }

    #[test]
    fn a_spec_of_no_accepted_form_is_refused_before_anything_runs() {
        let work = std::env::temp_dir().join(format!("toolmark-package-{}", std::process::id()));
        let r = PackageRequest {
            spec: "left-pad@1".into(),
            npm_registry: String::new(),
            npm_cache: work.join("npm"),
            offline: true,
            pypi_index: String::new(),
            pip_cache: work.join("pip"),
            find_links: None,
            work: work.clone(),
            keep: false,
            probe: None,
            arguments: Vec::new(),
            env: Vec::new(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let e = runtime.block_on(observe_package(&r)).unwrap_err();
        assert!(matches!(e, PackageObserveError::NotASpec(_)), "{e}");
        std::fs::remove_dir_all(&work).unwrap();
    }
}
