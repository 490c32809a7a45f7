//! The demo's npm registry and PyPI index stand-in serves the real files scripts/mcp-servers
//! downloaded so that the crawler's own package fetch (the one the sweep uses, through the SSRF
//! guard) takes them: packument → tarball checked against the SHA-512 integrity, simple index →
//! wheel checked against the SHA-256, each digest computed from the file. Needs
//! scripts/mcp-servers; skipped without it, except under CI.

use std::path::{Path, PathBuf};

use toolmark_crawler::mcp::ClientConfig;
use toolmark_crawler::packages::{self, Ecosystem, Published, Registries, Spec};
use toolmark_demo::packages::{PACKAGES, installed};
use toolmark_standins::packages::{PackageFile, PackagesStandIn};

fn mcp_servers() -> Option<PathBuf> {
    let dir = std::env::var_os("TOOLMARK_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/mcp-servers"));
    if dir.join("packages").is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "scripts/mcp-servers is needed under CI"
    );
    eprintln!("skipped: scripts/mcp-servers has not run");
    None
}

#[tokio::test(flavor = "multi_thread")]
async fn the_crawlers_fetch_takes_each_real_file_verified_from_the_stand_in() {
    let Some(servers) = mcp_servers() else {
        return;
    };
    let local = installed(&servers);
    assert_eq!(
        local.len(),
        PACKAGES.len(),
        "every demo package is installed"
    );
    let files: Vec<PackageFile> = local.iter().map(|(_, f)| f.clone()).collect();
    let stand_in = PackagesStandIn::start(&files).await.unwrap();
    let mut client = ClientConfig::default();
    client.policy.allow_private = true;
    let registries = Registries {
        npm: stand_in.url(),
        pypi: stand_in.url(),
    };
    for ((package, file), served) in local.iter().zip(stand_in.served()) {
        assert_eq!(served.ecosystem, package.ecosystem);
        let spec = Spec {
            ecosystem: Ecosystem::parse(package.ecosystem),
            name: package.identifier.to_owned(),
            version: served.version.clone(),
        };
        let fetched = packages::fetch(&client, &registries, &spec)
            .await
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        let path = match file {
            PackageFile::Npm(path) | PackageFile::Wheel { path, .. } => path,
        };
        assert_eq!(fetched.bytes, std::fs::read(path).unwrap(), "{spec}");
        match &fetched.published {
            // The packument's version entry is the tarball's own package.json.
            Published::Npm(version) => {
                assert!(version.integrity.starts_with("sha512-"), "{version:?}");
                assert!(!version.bin.is_empty(), "{version:?}");
                assert!(version.install_scripts.is_empty(), "{version:?}");
            }
            Published::Pypi(wheel) => {
                assert!(wheel.filename.ends_with(".whl"), "{wheel:?}");
                assert_eq!(wheel.filename, path.file_name().unwrap().to_str().unwrap());
            }
        }
        // The version the replica lists is the one served as latest.
        if spec.ecosystem == Ecosystem::Npm {
            let latest = packages::latest(&client, &registries, &spec.ecosystem, &spec.name);
            assert_eq!(latest.await.unwrap(), served.version);
        }
    }
    stand_in.shutdown().await;
}
