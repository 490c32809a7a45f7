//! Fetching package versions from a loopback registry that serves them as a hostile mirror
//! might: the artifact is checked against the registry's digest before anything uses it.
//! (Fetching from real local registries, Verdaccio and pypiserver, is the sandbox tests'.)

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use sha2::{Digest, Sha256, Sha512};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolmark_crawler::mcp::ClientConfig;
use toolmark_crawler::packages::{self, PackageError, Published, Registries, Spec};

/// A loopback HTTP server answering GETs from the table `routes(base)` builds (404 otherwise);
/// its base URL.
async fn serve(routes: impl FnOnce(&str) -> HashMap<String, Vec<u8>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let routes = Arc::new(routes(&base));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let line = String::from_utf8_lossy(&head).into_owned();
                let path = line.split(' ').nth(1).unwrap_or("").to_owned();
                let (status, body) = match routes.get(&path) {
                    Some(body) => ("200 OK", body.clone()),
                    None => ("404 Not Found", b"{}".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
            });
        }
    });
    base
}

fn sri512(bytes: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes))
    )
}

fn hex256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const TARBALL: &[u8] = b"the 1.0.0 tarball";
const WHEEL: &[u8] = b"the 2.0 wheel";

/// An npm registry with `@demo/pkg` 1.0.0 as published and 1.0.1 with its tarball swapped.
fn npm_routes(base: &str) -> HashMap<String, Vec<u8>> {
    let packument = serde_json::json!({
        "name": "@demo/pkg",
        "dist-tags": {"latest": "1.0.1"},
        "versions": {
            "1.0.0": {"name": "@demo/pkg", "version": "1.0.0",
                "dist": {"tarball": format!("{base}/t/pkg-1.0.0.tgz"), "integrity": sri512(TARBALL)},
                "scripts": {"postinstall": "node setup.js"}},
            "1.0.1": {"name": "@demo/pkg", "version": "1.0.1",
                "dist": {"tarball": format!("{base}/t/pkg-1.0.1.tgz"),
                         "integrity": sri512(b"what was published")}},
        }
    });
    HashMap::from([
        (
            "/@demo%2fpkg".to_owned(),
            packument.to_string().into_bytes(),
        ),
        ("/t/pkg-1.0.0.tgz".to_owned(), TARBALL.to_vec()),
        ("/t/pkg-1.0.1.tgz".to_owned(), b"something else".to_vec()),
    ])
    .into_iter()
    .chain([(
        "/@demo%2fmeta".to_owned(),
        serde_json::json!({"versions": {"1.0.0": {"dist": {
            "tarball": "http://169.254.169.254/latest/meta-data/iam",
            "integrity": sri512(b"x")}}}})
        .to_string()
        .into_bytes(),
    )])
    .collect()
}

/// A PyPI index with `demo-pkg` 2.0 (a wheel named relative to the JSON), 2.1 (its wheel
/// swapped) and 3.0 (an sdist only).
fn pypi_routes(_: &str) -> HashMap<String, Vec<u8>> {
    let file = |name: &str, kind: &str, sha: String| {
        serde_json::json!({"filename": name, "packagetype": kind,
            "url": format!("../../files/{name}"), "digests": {"sha256": sha}})
    };
    let project = serde_json::json!({
        "info": {"name": "demo-pkg", "version": "3.0"},
        "releases": {
            "2.0": [file("demo_pkg-2.0-py3-none-any.whl", "bdist_wheel", hex256(WHEEL)),
                    file("demo_pkg-2.0.tar.gz", "sdist", hex256(b"sdist"))],
            "2.1": [file("demo_pkg-2.1-py3-none-any.whl", "bdist_wheel", hex256(b"published"))],
            "3.0": [file("demo_pkg-3.0.tar.gz", "sdist", hex256(b"sdist"))],
        }
    });
    HashMap::from([
        (
            "/pypi/demo-pkg/json".to_owned(),
            project.to_string().into_bytes(),
        ),
        (
            "/files/demo_pkg-2.0-py3-none-any.whl".to_owned(),
            WHEEL.to_vec(),
        ),
        (
            "/files/demo_pkg-2.1-py3-none-any.whl".to_owned(),
            b"swapped".to_vec(),
        ),
        // PEP 691's simple JSON lists 2.0's wheel with a provenance URL, and the integrity API
        // serves a recorded PEP 740 provenance object for it.
        (
            "/simple/demo-pkg/".to_owned(),
            serde_json::json!({"files": [
                {"filename": "demo_pkg-2.0-py3-none-any.whl", "provenance": "https://x/p"}]})
            .to_string()
            .into_bytes(),
        ),
        (
            "/integrity/demo-pkg/2.0/demo_pkg-2.0-py3-none-any.whl/provenance".to_owned(),
            include_bytes!("fixtures/registry/pypi-gcb_attestation_test-0.0.0.provenance.json")
                .to_vec(),
        ),
        // `lost-pkg` 1.0: the simple JSON lists a provenance URL, the integrity API answers 404.
        (
            "/pypi/lost-pkg/json".to_owned(),
            serde_json::json!({"info": {"name": "lost-pkg", "version": "1.0",
                                        "requires_dist": ["demo-pkg>=2"]},
                "releases": {"1.0": [file("lost_pkg-1.0-py3-none-any.whl", "bdist_wheel", hex256(WHEEL))]}})
            .to_string()
            .into_bytes(),
        ),
        (
            "/files/lost_pkg-1.0-py3-none-any.whl".to_owned(),
            WHEEL.to_vec(),
        ),
        (
            "/simple/lost-pkg/".to_owned(),
            serde_json::json!({"files": [
                {"filename": "lost_pkg-1.0-py3-none-any.whl", "provenance": "https://x/q"}]})
            .to_string()
            .into_bytes(),
        ),
    ])
}

async fn registries() -> Registries {
    Registries {
        npm: serve(npm_routes).await,
        pypi: serve(pypi_routes).await,
    }
}

/// Loopback registries need the guard's private policy (tests and the demo only).
fn lax() -> ClientConfig {
    let mut c = ClientConfig::default();
    c.policy.allow_private = true;
    c
}

async fn fetch(r: &Registries, spec: &str) -> Result<packages::Artifact, PackageError> {
    packages::fetch(&lax(), r, &Spec::parse(spec).unwrap()).await
}

#[tokio::test]
async fn an_npm_version_is_fetched_and_verified() {
    let r = registries().await;
    let a = fetch(&r, "npm:@demo/pkg@1.0.0").await.unwrap();
    assert_eq!(a.bytes, TARBALL);
    let Published::Npm(v) = &a.published else {
        panic!("{:?}", a.published)
    };
    assert_eq!(v.install_scripts["postinstall"], "node setup.js");
    assert!(a.sha256_sri.starts_with("sha256-"));
}

#[tokio::test]
async fn a_swapped_npm_tarball_is_refused() {
    let r = registries().await;
    let e = fetch(&r, "npm:@demo/pkg@1.0.1").await.unwrap_err();
    assert!(matches!(e, PackageError::Integrity { .. }), "{e}");
}

#[tokio::test]
async fn an_unknown_package_or_version_is_not_found() {
    let r = registries().await;
    for spec in [
        "npm:@demo/none@1.0.0",
        "npm:@demo/pkg@9.9.9",
        "pypi:none==1.0",
        "pypi:demo-pkg==9.9",
    ] {
        let e = fetch(&r, spec).await.unwrap_err();
        assert!(matches!(e, PackageError::NotFound(_)), "{spec}: {e}");
    }
}

#[tokio::test]
async fn a_wheel_is_fetched_at_its_relative_url_and_verified() {
    let r = registries().await;
    // The name as a user writes it: normalised for the index.
    let a = fetch(&r, "pypi:Demo_Pkg==2.0").await.unwrap();
    assert_eq!(a.bytes, WHEEL);
    let Published::Pypi(w) = &a.published else {
        panic!("{:?}", a.published)
    };
    assert_eq!(w.filename, "demo_pkg-2.0-py3-none-any.whl");
    assert_eq!(
        a.url,
        format!("{}/files/demo_pkg-2.0-py3-none-any.whl", r.pypi)
    );
}

#[tokio::test]
async fn a_swapped_wheel_is_refused_and_an_sdist_only_release_has_no_wheel() {
    let r = registries().await;
    let e = fetch(&r, "pypi:demo-pkg==2.1").await.unwrap_err();
    assert!(matches!(e, PackageError::Integrity { .. }), "{e}");
    let e = fetch(&r, "pypi:demo-pkg==3.0").await.unwrap_err();
    assert_eq!(e, PackageError::NoWheel(1));
}

#[tokio::test]
async fn an_artifact_url_naming_an_internal_address_is_refused_by_the_guard() {
    let r = registries().await;
    // Even under the private policy, link-local (the cloud metadata service) stays blocked.
    let e = fetch(&r, "npm:@demo/meta@1.0.0").await.unwrap_err();
    assert!(matches!(e, PackageError::Blocked { .. }), "{e}");
}

#[tokio::test]
async fn a_registry_on_a_private_address_is_refused_under_the_default_policy() {
    let r = registries().await;
    let e = packages::fetch(
        &ClientConfig::default(),
        &r,
        &Spec::parse("npm:@demo/pkg@1.0.0").unwrap(),
    )
    .await
    .unwrap_err();
    assert!(matches!(e, PackageError::Blocked { .. }), "{e}");
}

#[tokio::test]
async fn a_fetch_reads_the_versions_registry_signals() {
    let r = registries().await;
    // npm: what the packument serves; without `dist.signatures` (a mirror's entry) provenance
    // and publisher are unknown.
    let a = fetch(&r, "npm:@demo/pkg@1.0.0").await.unwrap();
    assert_eq!(a.registry.ecosystem, "npm");
    assert_eq!(
        a.registry.install_scripts.as_ref().unwrap()["postinstall"],
        "node setup.js"
    );
    assert_eq!(
        (
            a.registry.provenance.as_ref(),
            a.registry.publisher.as_ref()
        ),
        (None, None)
    );
    // PyPI: the integrity API's provenance, asked because the simple JSON lists it.
    let w = fetch(&r, "pypi:demo-pkg==2.0").await.unwrap();
    assert_eq!(w.registry.provenance_present(), Some(true));
    assert_eq!(
        w.registry.publisher_label().as_deref(),
        Some("trusted publisher: Google")
    );
    assert_eq!(w.registry.dependencies, None, "info is 3.0's");
    // Listed, but the integrity API does not answer it (404): unknown, never "absent" (a
    // mirror may pass upstream's listing through without serving the integrity API).
    let l = fetch(&r, "pypi:lost-pkg==1.0").await.unwrap();
    assert_eq!(l.registry.provenance_present(), None);
    assert_eq!(l.registry.publisher, None);
    assert_eq!(l.registry.dependencies.as_ref().unwrap()["demo-pkg"], ">=2");
}
