//! Packages for the sandbox's gVisor tests: the observer they run (offline caches, the probe),
//! npm tarballs packed and wheels written here, fetched back from real registries as the
//! package sweep fetches, and the findings of a report read back.
#![allow(
    clippy::disallowed_methods,
    reason = "runs npm pack and Python's zipfile"
)]
#![allow(dead_code, reason = "each test binary uses part of it")]

use std::path::{Path, PathBuf};

use toolmark_sandbox::observe::{Artifact, Limits, Observer, Report};
use toolmark_sandbox::prepare::{NpmOptions, PYPI_SIMPLE, PipOptions};

use super::{registries, servers};

/// An observer installing from the warmed cache only, its runs under `work`.
pub fn observer(runsc: PathBuf, work: &Path) -> Observer {
    Observer {
        runsc: Some(runsc),
        // Offline: the registry the cache was warmed from is named (npm keys its cache by URL)
        // but never asked.
        npm: NpmOptions::new(
            "https://registry.npmjs.org/",
            servers().join("packages/npm-cache"),
            true,
        ),
        // Offline: the wheels scripts/mcp-servers downloaded, no index asked.
        pip: PipOptions::new(PYPI_SIMPLE, servers().join("packages/pip-cache"))
            .offline(servers().join("packages/wheels")),
        work: work.to_owned(),
        limits: Limits::default(),
        keep: std::env::var_os("TOOLMARK_KEEP_RUNS").is_some(),
        probe: Some(probe()),
    }
}

/// The probe binary cargo built beside this test (`target/<profile>/toolmark-probe`).
pub fn probe() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("toolmark-probe");
    assert!(
        path.is_file(),
        "{} (cargo builds it with the workspace)",
        path.display()
    );
    path
}

pub fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmark-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn codes(report: &Report) -> Vec<(&'static str, &'static str)> {
    report
        .findings
        .iter()
        .map(|f| (f.code, f.phase.as_str()))
        .collect()
}

/// The evidence of the first finding `code` of `report`.
pub fn evidence(report: &Report, code: &str) -> Vec<String> {
    report
        .findings
        .iter()
        .find(|f| f.code == code)
        .map(|f| f.evidence.clone())
        .unwrap_or_else(|| panic!("no {code}: {:?}", report.findings))
}

/// `spec` fetched back as the package sweep fetches it — through the crawler's SSRF guard
/// (loopback allowed), checked against the registry's digest — from `registries`; the file,
/// under the name the registry publishes (a wheel's name matters to pip).
pub async fn fetched(
    work: &Path,
    registries: &toolmark_crawler::packages::Registries,
    spec: &str,
) -> PathBuf {
    let mut config = toolmark_crawler::mcp::ClientConfig::default();
    config.policy.allow_private = true;
    let spec = toolmark_crawler::packages::Spec::parse(spec).unwrap();
    let artifact = toolmark_crawler::packages::fetch(&config, registries, &spec)
        .await
        .unwrap();
    let name = match &artifact.published {
        toolmark_crawler::packages::Published::Pypi(wheel) => wheel.filename.clone(),
        toolmark_crawler::packages::Published::Npm(_) => "package.tgz".to_owned(),
    };
    let dir = work.join("fetched");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&name), &artifact.bytes).unwrap();
    dir.join(name)
}

/// `npm pack` of `src` into `dir`: the tarball `name`.
pub fn pack(dir: &Path, src: &Path, name: &str) -> PathBuf {
    let out = std::process::Command::new("/usr/bin/npm")
        .args(["pack", "--silent", "--ignore-scripts", "--pack-destination"])
        .arg(dir)
        .current_dir(src)
        .env("npm_config_cache", dir.join("pack-cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join(name)
}

/// `/usr/bin/python3 -I ARGS`, which must succeed: its stdout.
pub fn python(args: &[&std::ffi::OsStr]) -> String {
    let out = std::process::Command::new("/usr/bin/python3")
        .arg("-I")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A wheel `name`-1.0 (`py3-none-any`) made here by `fixtures/wheel.py` (Python's zipfile):
/// `files` (path, text), console `scripts`, and `requires` added to its `METADATA`.
pub fn wheel(
    dir: &Path,
    name: &str,
    files: &[(&str, &str)],
    scripts: &str,
    requires: &str,
) -> PathBuf {
    let src = dir.join(format!("{name}-src"));
    for (path, text) in files {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wheel.py");
    let made = python(&[
        fixture.as_os_str(),
        src.as_os_str(),
        dir.as_os_str(),
        name.as_ref(),
        "1.0".as_ref(),
        scripts.as_ref(),
        requires.as_ref(),
    ]);
    PathBuf::from(made.trim())
}

/// A one-file package `name` whose server is `server` (JavaScript), packed into `dir`.
pub fn server_package(dir: &Path, name: &str, server: &str) -> PathBuf {
    let src = dir.join(name);
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("package.json"),
        format!(r#"{{"name":"{name}","version":"1.0.0","bin":"server.js"}}"#),
    )
    .unwrap();
    std::fs::write(src.join("server.js"), server).unwrap();
    pack(dir, &src, &format!("{name}-1.0.0.tgz"))
}

/// `npm` tarballs published to a real Verdaccio and `wheels` served by a real pypiserver, each
/// fetched back through the crawler's guard with its digest checked, as the sweep fetches;
/// `None` when a registry is not installed (a skip; a failure under CI).
pub async fn published(
    work: &Path,
    npm: &[(&str, PathBuf)],
    wheels: &[(&str, PathBuf)],
) -> Option<Vec<Artifact>> {
    let mut out = Vec::new();
    if !npm.is_empty() {
        let install = registries::installed("TOOLMARK_VERDACCIO", "verdaccio")?;
        let verdaccio = tokio::task::block_in_place(|| {
            let verdaccio = registries::Verdaccio::start(&install, work);
            for (_, tarball) in npm {
                verdaccio.publish(tarball);
            }
            verdaccio
        });
        let registries = toolmark_crawler::packages::Registries {
            npm: verdaccio.url.clone(),
            ..Default::default()
        };
        for (name, _) in npm {
            let dir = work.join("fetched").join(name);
            let tarball = fetched(&dir, &registries, &format!("npm:{name}@1.0.0")).await;
            out.push(Artifact::Npm(tarball));
        }
    }
    if !wheels.is_empty() {
        let venv = registries::installed("TOOLMARK_PYPISERVER", "pypiserver")?;
        let index = work.join("index");
        std::fs::create_dir_all(&index).unwrap();
        for (_, wheel) in wheels {
            std::fs::rename(wheel, index.join(wheel.file_name().unwrap())).unwrap();
        }
        let pypiserver =
            tokio::task::block_in_place(|| registries::PypiServer::start(&venv, &index));
        let registries = toolmark_crawler::packages::Registries {
            pypi: pypiserver.url.clone(),
            ..Default::default()
        };
        for (name, _) in wheels {
            let dir = work.join("fetched").join(name);
            let wheel = fetched(&dir, &registries, &format!("pypi:{name}==1.0")).await;
            out.push(Artifact::Wheel(wheel));
        }
    }
    Some(out)
}

/// The one package in `npm` or `wheels`, [`published`] and fetched back, observed by
/// [`observer`] with its runs under `work` (`None`: a registry is not installed).
pub async fn observed_one(
    runsc: PathBuf,
    work: &Path,
    npm: &[(&str, PathBuf)],
    wheels: &[(&str, PathBuf)],
) -> Option<Report> {
    let fetched = published(work, npm, wheels).await?;
    assert_eq!(fetched.len(), 1, "one package");
    let runs = work.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    Some(
        observer(runsc, &runs)
            .observe(&fetched[0], &toolmark_sandbox::observe::Launch::default())
            .await,
    )
}
