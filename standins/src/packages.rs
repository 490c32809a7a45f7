//! A loopback stand-in of the npm registry and of a PyPI simple index, serving real package
//! files found on this machine (for `toolmark demo`: the tarballs and wheels
//! `scripts/mcp-servers` downloads).
//!
//! [`PackagesStandIn::start`] reads each file once, computes its digests from its bytes and
//! serves, on `127.0.0.1:<ephemeral port>`, what `toolmark_crawler::packages` reads:
//!
//! | path | what |
//! | --- | --- |
//! | `/<name>` (`@scope%2fname` for a scoped name) | the packument: `dist-tags.latest` (the newest version served) and, per version, the tarball's own `package.json` plus `dist: {tarball, integrity}` (SHA-512 of the file, as npm's SRI) |
//! | `/<name>/-/<file>` | the tarball |
//! | `/simple/<project>/` | a PEP 503 page: one anchor per wheel, its SHA-256 in the `href`'s `#sha256=` fragment |
//! | `/packages/<file>` | the wheel |
//!
//! Anything else, the PyPI JSON API (`/pypi/<project>/json`) included, is a 404, as pypiserver
//! answers: a client falls back to the simple index. Nothing is re-shaped from the files but the
//! `dist` member npm's registry adds to each version.
//!
//! What it reads is bounded: a file at most [`MAX_FILE_BYTES`], a tarball's unpacked bytes read
//! while looking for its `package.json` at most [`MAX_UNPACKED_BYTES`], the `package.json` at
//! most [`MAX_MANIFEST_BYTES`]. Files are local and trusted (this project downloaded them), but a
//! truncated or swapped one must fail with a reason, not exhaust memory.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256, Sha512};

/// Largest package file read (the crawler's own cap on an artifact is lower; a larger file is
/// refused here rather than served).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Unpacked tarball bytes read at most while looking for `package/package.json`.
pub const MAX_UNPACKED_BYTES: u64 = 256 * 1024 * 1024;

/// Largest `package.json` read from a tarball.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// One file to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageFile {
    /// An npm tarball as `npm pack` makes it (its `package/package.json` names the package and
    /// version).
    Npm(PathBuf),
    /// A wheel under its published file name, listed under `project` (PEP 503-normalised by the
    /// caller: the index's page name).
    Wheel {
        /// The project's normalised name.
        project: String,
        /// The wheel.
        path: PathBuf,
    },
}

/// What was served for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// `npm` or `pypi`.
    pub ecosystem: &'static str,
    /// The package's name (npm: from its `package.json`; PyPI: the project).
    pub name: String,
    /// Its version (npm: from its `package.json`; PyPI: from the wheel's file name).
    pub version: String,
}

struct Body {
    content_type: &'static str,
    bytes: Arc<Vec<u8>>,
}

/// A running stand-in. Stops when dropped.
pub struct PackagesStandIn {
    addr: SocketAddr,
    served: Vec<Served>,
    serving: crate::serving::Serving,
}

impl std::fmt::Debug for PackagesStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackagesStandIn")
            .field("addr", &self.addr)
            .field("served", &self.served)
            .finish_non_exhaustive()
    }
}

fn invalid(path: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {why}", path.display()),
    )
}

/// The whole file, at most [`MAX_FILE_BYTES`].
fn read_bounded(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(invalid(path, format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    Ok(bytes)
}

/// The `package/package.json` of a gzipped tarball (ustar, as `npm pack` writes it), as a JSON
/// object.
pub fn npm_manifest(tarball: &[u8]) -> io::Result<Map<String, Value>> {
    let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_owned());
    let unpacked = flate2::read::GzDecoder::new(tarball).take(MAX_UNPACKED_BYTES);
    let mut archive = tar::Archive::new(unpacked);
    for entry in archive.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file()
            || entry.path()?.as_ref() != Path::new("package/package.json")
        {
            continue;
        }
        let size = entry.header().size()?;
        if size > MAX_MANIFEST_BYTES {
            return Err(bad(&format!(
                "package.json is larger than {MAX_MANIFEST_BYTES} bytes"
            )));
        }
        let mut text = Vec::with_capacity(size as usize);
        entry.read_to_end(&mut text)?;
        return match serde_json::from_slice(&text) {
            Ok(Value::Object(manifest)) => Ok(manifest),
            _ => Err(bad("package.json is not a JSON object")),
        };
    }
    Err(bad("no package/package.json in the tarball"))
}

/// The version of a wheel's file name (`{name}-{version}-…​.whl`).
fn wheel_version(file: &str) -> Option<&str> {
    let stem = file.strip_suffix(".whl")?;
    let mut parts = stem.split('-');
    parts.next()?;
    parts.next().filter(|v| !v.is_empty())
}

/// Everything served, by path.
fn build(base: &str, files: &[PackageFile]) -> io::Result<(BTreeMap<String, Body>, Vec<Served>)> {
    let mut routes = BTreeMap::new();
    let mut served = Vec::new();
    // name → (version → entry); project → [(file, sha256)].
    let mut packuments: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
    let mut projects: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for file in files {
        match file {
            PackageFile::Npm(path) => {
                let bytes = read_bounded(path)?;
                let mut manifest = npm_manifest(&bytes).map_err(|e| invalid(path, e))?;
                let text = |k: &str| manifest.get(k).and_then(Value::as_str).map(str::to_owned);
                let (Some(name), Some(version)) = (text("name"), text("version")) else {
                    return Err(invalid(path, "package.json names no name and version"));
                };
                let basename = name.rsplit('/').next().unwrap_or(&name).to_owned();
                let tarball_path = format!("/{name}/-/{basename}-{version}.tgz");
                let integrity = format!(
                    "sha512-{}",
                    base64::engine::general_purpose::STANDARD.encode(Sha512::digest(&bytes))
                );
                manifest.insert(
                    "dist".into(),
                    json!({"tarball": format!("{base}{tarball_path}"), "integrity": integrity}),
                );
                packuments
                    .entry(name.clone())
                    .or_default()
                    .insert(version.clone(), Value::Object(manifest));
                routes.insert(
                    tarball_path,
                    Body {
                        content_type: "application/octet-stream",
                        bytes: Arc::new(bytes),
                    },
                );
                served.push(Served {
                    ecosystem: "npm",
                    name,
                    version,
                });
            }
            PackageFile::Wheel { project, path } => {
                let file = path
                    .file_name()
                    .and_then(|f| f.to_str())
                    // A wheel's name (PEP 427) needs nothing else, and nothing else needs
                    // escaping in the simple index's HTML.
                    .filter(|f| {
                        f.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"._+!-".contains(&b))
                    })
                    .ok_or_else(|| invalid(path, "not a wheel's file name"))?
                    .to_owned();
                let version = wheel_version(&file)
                    .ok_or_else(|| invalid(path, "not a wheel's file name"))?
                    .to_owned();
                let bytes = read_bounded(path)?;
                let sha256: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                projects
                    .entry(project.clone())
                    .or_default()
                    .push((file.clone(), sha256));
                routes.insert(
                    format!("/packages/{file}"),
                    Body {
                        content_type: "application/octet-stream",
                        bytes: Arc::new(bytes),
                    },
                );
                served.push(Served {
                    ecosystem: "pypi",
                    name: project.clone(),
                    version,
                });
            }
        }
    }
    for (name, versions) in packuments {
        // The newest version served is `latest` (versions compared as npm's registry would
        // publish them in order: numerically, part by part).
        let latest = versions
            .keys()
            .max_by_key(|v| {
                v.split(['.', '-'])
                    .map(|p| p.parse::<u64>().unwrap_or(0))
                    .collect::<Vec<_>>()
            })
            .cloned()
            .unwrap_or_default();
        let packument = json!({
            "name": name,
            "dist-tags": {"latest": latest},
            "versions": versions,
        });
        routes.insert(
            format!("/{}", name.replacen('/', "%2f", 1)),
            Body {
                content_type: "application/json",
                bytes: Arc::new(packument.to_string().into_bytes()),
            },
        );
    }
    for (project, wheels) in projects {
        let mut page = String::from("<!DOCTYPE html>\n<html><body>\n");
        for (file, sha256) in wheels {
            page.push_str(&format!(
                "<a href=\"/packages/{file}#sha256={sha256}\">{file}</a><br>\n"
            ));
        }
        page.push_str("</body></html>\n");
        routes.insert(
            format!("/simple/{project}/"),
            Body {
                content_type: "text/html",
                bytes: Arc::new(page.into_bytes()),
            },
        );
    }
    Ok((routes, served))
}

async fn answer(State(routes): State<Arc<BTreeMap<String, Body>>>, uri: Uri) -> Response {
    // npm clients may send a scoped name's slash encoded in either case.
    let path = uri.path().replace("%2F", "%2f");
    match routes.get(&path) {
        Some(body) => (
            [(header::CONTENT_TYPE, body.content_type)],
            body.bytes.as_ref().clone(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

impl PackagesStandIn {
    /// Read `files`, bind `127.0.0.1:0` and serve them. Must be called within a Tokio runtime,
    /// which runs the server. A file that cannot be read or is not what it says is an error
    /// naming it.
    pub async fn start(files: &[PackageFile]) -> io::Result<PackagesStandIn> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let base = format!("http://{addr}");
        let files = files.to_vec();
        let (routes, served) = tokio::task::spawn_blocking(move || build(&base, &files)).await??;
        let app = Router::new().fallback(answer).with_state(Arc::new(routes));
        Ok(PackagesStandIn {
            addr,
            served,
            serving: crate::serving::Serving::start(listener, app),
        })
    }

    /// The base URL, `http://127.0.0.1:<port>` (no trailing slash): the npm registry and the
    /// Python index both.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// What is served, one per file, in the order given.
    pub fn served(&self) -> &[Served] {
        &self.served
    }

    /// Stop accepting connections, let open ones finish (at most the registry replica's
    /// [`SHUTDOWN_GRACE`](crate::registry::SHUTDOWN_GRACE)), and return.
    pub async fn shutdown(mut self) {
        self.serving.shutdown(crate::registry::SHUTDOWN_GRACE).await;
    }
}

// The tests ask the stand-in with a plain client (only the crawler builds clients in code).
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn a_wheels_version_is_read_from_its_file_name() {
        assert_eq!(
            wheel_version("mcp_server_time-2026.10.19-py3-none-any.whl"),
            Some("2026.10.19")
        );
        assert_eq!(wheel_version("mcp_server_time.tar.gz"), None);
        assert_eq!(wheel_version("nameonly.whl"), None);
    }

    #[test]
    fn a_file_that_is_not_a_gzipped_tarball_is_refused_with_a_reason() {
        assert!(npm_manifest(b"not gzip").is_err());
        // A gzipped empty archive (two zero blocks): no package.json.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &[0u8; 1024]).unwrap();
        let e = npm_manifest(&gz.finish().unwrap()).unwrap_err();
        assert!(e.to_string().contains("no package/package.json"), "{e}");
    }

    #[tokio::test]
    async fn what_is_not_served_is_a_404_the_json_api_included() {
        let stand_in = PackagesStandIn::start(&[]).await.unwrap();
        let client = reqwest::Client::new();
        for path in ["/pypi/mcp-server-time/json", "/simple/x/", "/left-pad"] {
            let r = client
                .get(format!("{}{path}", stand_in.url()))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 404, "{path}");
        }
        stand_in.shutdown().await;
    }
}
