//! Fetching one published version of an npm or PyPI package without running any of its code,
//! verified against what its registry publishes (issue #14, item 1).
//!
//! - **npm**: the packument (`GET {registry}/{name}`, a scoped name's `/` as `%2f`) gives the
//!   version's `dist.tarball` and `dist.integrity` (an SRI string); the tarball is downloaded and
//!   its SHA-512 checked against the integrity before anything else looks at it. A version
//!   without a SHA-512 integrity is refused (`integrity-missing`): the legacy SHA-1 `shasum`
//!   proves nothing against a hostile registry mirror.
//! - **PyPI**: the project's JSON (`GET {index}/pypi/{name}/json`; the mirror reachable here has
//!   no per-version endpoint, and names its files by URLs relative to the JSON's) lists each
//!   release's files; only a wheel is taken ([`wheel_rank`]: pure-Python `py3-none-any` first), never an sdist
//!   (building one runs the package's build backend). A release without a usable wheel is
//!   [`PackageError::NoWheel`]. The wheel's SHA-256 is checked against the JSON's digest.
//!
//! Every request — the registry's metadata and the artifact URL that metadata names — goes
//! through the crawler's SSRF guard ([`crate::guard`]: resolved once, every address checked, the
//! client pinned to them), and every response is read with the crawler's streaming caps
//! ([`crate::body`]): [`MAX_PACKUMENT_BYTES`] for metadata and [`MAX_ARTIFACT_BYTES`] for the
//! artifact, within [`PACKAGE_FETCH_TIMEOUT`] per request; redirects are not followed (the
//! registries' own URLs answer directly).
//!
//! What it does not do: resolve or fetch dependencies (the sandbox does that with scripts off),
//! unpack anything, or run anything.

use std::collections::BTreeMap;

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256, Sha512};

pub use crate::limits::{MAX_ARTIFACT_BYTES, MAX_PACKUMENT_BYTES, PACKAGE_FETCH_TIMEOUT};

use toolmark_observation::registry::Declared;
pub use toolmark_observation::registry::{Ecosystem, pep503};

use crate::guard;
use crate::mcp::ClientConfig;

pub mod facts;
pub use toolmark_observation::registry_facts::RegistryFacts;

/// The public npm registry.
pub const NPM_REGISTRY: &str = "https://registry.npmjs.org";

/// The public Python package index.
pub const PYPI_INDEX: &str = "https://pypi.org";

/// A package version: `npm:<name>@<version>` or `pypi:<name>==<version>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// npm or PyPI.
    pub ecosystem: Ecosystem,
    /// The name as published (PyPI names are compared normalised, [`pep503`]).
    pub name: String,
    /// The exact version.
    pub version: String,
}

impl std::fmt::Display for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ecosystem {
            Ecosystem::Npm => write!(f, "npm:{}@{}", self.name, self.version),
            Ecosystem::Pypi => write!(f, "pypi:{}=={}", self.name, self.version),
            Ecosystem::Other(ref other) => write!(f, "{other}:{}@{}", self.name, self.version),
        }
    }
}

impl Spec {
    /// Parse `npm:<name>@<version>` (a scoped name keeps its leading `@`) or
    /// `pypi:<name>==<version>`.
    pub fn parse(text: &str) -> Result<Spec, PackageError> {
        let bad = |why: &str| PackageError::Spec(format!("{text:?}: {why}"));
        let (ecosystem, rest) = if let Some(rest) = text.strip_prefix("npm:") {
            (Ecosystem::Npm, rest)
        } else if let Some(rest) = text.strip_prefix("pypi:") {
            (Ecosystem::Pypi, rest)
        } else {
            return Err(bad("not npm:<name>@<version> or pypi:<name>==<version>"));
        };
        let (name, version) = match ecosystem {
            Ecosystem::Npm => {
                // The version follows the last `@` that is not the scope's.
                let at = rest[1.min(rest.len())..]
                    .rfind('@')
                    .map(|i| i + 1.min(rest.len()))
                    .ok_or_else(|| bad("no @<version>"))?;
                (&rest[..at], &rest[at + 1..])
            }
            _ => rest.split_once("==").ok_or_else(|| bad("no ==<version>"))?,
        };
        let valid = |s: &str| {
            !s.is_empty()
                && s.len() <= 214
                && s.bytes()
                    .all(|b| b.is_ascii_graphic() && !b"\"\\<>`|".contains(&b))
        };
        if !valid(name) || !valid(version) {
            return Err(bad("empty or invalid name or version"));
        }
        if ecosystem == Ecosystem::Npm && name.starts_with('@') && !name.contains('/') {
            return Err(bad("a scoped npm name is @scope/name"));
        }
        Ok(Spec {
            ecosystem,
            name: name.to_owned(),
            version: version.to_owned(),
        })
    }
}

/// Where packages are fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registries {
    /// The npm registry's base URL.
    pub npm: String,
    /// The Python package index's base URL (its JSON API under `/pypi/`).
    pub pypi: String,
}

impl Default for Registries {
    fn default() -> Self {
        Registries {
            npm: NPM_REGISTRY.into(),
            pypi: PYPI_INDEX.into(),
        }
    }
}

/// Why a package version could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// Not a package spec.
    #[error("package spec {0}")]
    Spec(String),
    /// The registry does not have the package or the version (`not-found`).
    #[error("not found: {0}")]
    NotFound(String),
    /// The PyPI release has no wheel toolmark can install without building (`no-wheel`).
    #[error("no installable wheel among {0} file(s) (an sdist would run the package's build code)")]
    NoWheel(usize),
    /// The npm version publishes no SHA-512 integrity, or the wheel no SHA-256.
    #[error("the registry publishes no {0} digest for the artifact")]
    IntegrityMissing(&'static str),
    /// The artifact is not what the registry says it is.
    #[error("integrity mismatch: the registry says {expected}, the download is {actual}")]
    Integrity {
        /// The digest the registry publishes.
        expected: String,
        /// The downloaded bytes' digest.
        actual: String,
    },
    /// The metadata is not what the registry's API serves.
    #[error("registry metadata: {0}")]
    Metadata(String),
    /// The registry answered with another status.
    #[error("{url}: HTTP {status}")]
    Http {
        /// The URL asked.
        url: String,
        /// Its status.
        status: u16,
    },
    /// The SSRF guard refused the URL (a registry's metadata may name any address).
    #[error("{url}: refused: {reason}")]
    Blocked {
        /// The URL.
        url: String,
        /// Why the guard refused it.
        reason: String,
    },
    /// The request failed or its body could not be read within the caps.
    #[error("{url}: {reason}")]
    Fetch {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: String,
    },
}

// ---- npm ----

/// What one npm version's packument entry says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmVersion {
    /// `dist.tarball`.
    pub tarball: String,
    /// `dist.integrity` (SRI; the SHA-512 one is checked).
    pub integrity: String,
    /// The lifecycle scripts npm runs at install (`preinstall`, `install`, `postinstall`), by
    /// name; `install: node-gyp rebuild` is implied by `gypfile` when none is given.
    pub install_scripts: BTreeMap<String, String>,
    /// `bin`, as a map (a string `bin` is the package's own name).
    pub bin: BTreeMap<String, String>,
    /// `dependencies`.
    pub dependencies: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Packument {
    #[serde(default, rename = "dist-tags")]
    dist_tags: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    versions: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    maintainers: Option<serde_json::Value>,
    #[serde(default)]
    repository: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct RawNpmVersion {
    #[serde(default)]
    name: Option<String>,
    dist: RawDist,
    #[serde(default)]
    scripts: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    bin: Option<serde_json::Value>,
    #[serde(default)]
    dependencies: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    gypfile: Option<bool>,
}

#[derive(Deserialize)]
struct RawDist {
    tarball: String,
    #[serde(default)]
    integrity: Option<String>,
}

/// The npm lifecycle scripts that run at install time.
pub const NPM_INSTALL_SCRIPTS: [&str; 3] = ["preinstall", "install", "postinstall"];

/// The packument URL of `name` under `registry` (`@scope/name` → `@scope%2fname`).
pub fn npm_packument_url(registry: &str, name: &str) -> String {
    format!(
        "{}/{}",
        registry.trim_end_matches('/'),
        name.replacen('/', "%2f", 1)
    )
}

fn text_map(map: BTreeMap<String, serde_json::Value>) -> BTreeMap<String, String> {
    map.into_iter()
        .filter_map(|(k, v)| Some((k, v.as_str()?.to_owned())))
        .collect()
}

/// The `dist-tags.latest` version of a packument.
pub fn npm_latest(packument: &[u8]) -> Result<String, PackageError> {
    let p: Packument = serde_json::from_slice(packument)
        .map_err(|e| PackageError::Metadata(format!("packument: {e}")))?;
    p.dist_tags
        .get("latest")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .ok_or_else(|| PackageError::NotFound("no dist-tags.latest".into()))
}

/// What `packument` says of `version`.
pub fn npm_version(packument: &[u8], version: &str) -> Result<NpmVersion, PackageError> {
    npm_entry(packument, version).map(|(v, _)| v)
}

/// What `packument` says of `version`, and the version's registry signals ([`facts`]).
pub fn npm_entry(
    packument: &[u8],
    version: &str,
) -> Result<(NpmVersion, RegistryFacts), PackageError> {
    let p: Packument = serde_json::from_slice(packument)
        .map_err(|e| PackageError::Metadata(format!("packument: {e}")))?;
    let raw = p
        .versions
        .get(version)
        .ok_or_else(|| PackageError::NotFound(format!("version {version}")))?;
    let entry = raw;
    let raw = RawNpmVersion::deserialize(raw)
        .map_err(|e| PackageError::Metadata(format!("version {version}: {e}")))?;
    let integrity = raw
        .dist
        .integrity
        .ok_or(PackageError::IntegrityMissing("SHA-512"))?;
    let scripts = text_map(raw.scripts);
    let mut install_scripts: BTreeMap<String, String> = scripts
        .into_iter()
        .filter(|(k, _)| NPM_INSTALL_SCRIPTS.contains(&k.as_str()))
        .collect();
    if raw.gypfile == Some(true) && install_scripts.is_empty() {
        install_scripts.insert("install".into(), "node-gyp rebuild".into());
    }
    let bin = match raw.bin {
        Some(serde_json::Value::String(path)) => {
            let own = raw.name.unwrap_or_default();
            let own = own.rsplit('/').next().unwrap_or("").to_owned();
            BTreeMap::from([(own, path)])
        }
        Some(serde_json::Value::Object(map)) => text_map(map.into_iter().collect()),
        _ => BTreeMap::new(),
    };
    let dependencies = text_map(raw.dependencies);
    let top = serde_json::json!({"maintainers": p.maintainers, "repository": p.repository});
    let facts = facts::npm_facts(entry, &top, &install_scripts, &dependencies, &bin);
    Ok((
        NpmVersion {
            tarball: raw.dist.tarball,
            integrity,
            install_scripts,
            bin,
            dependencies,
        },
        facts,
    ))
}

/// Check `bytes` against an npm SRI `integrity` string: its SHA-512 member must match (other
/// algorithms in the string are ignored; a string without SHA-512 is refused).
pub fn verify_npm_integrity(bytes: &[u8], integrity: &str) -> Result<(), PackageError> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let expected: Vec<&str> = integrity
        .split_ascii_whitespace()
        .filter_map(|member| member.strip_prefix("sha512-"))
        .map(|v| v.split('?').next().unwrap_or(v))
        .collect();
    if expected.is_empty() {
        return Err(PackageError::IntegrityMissing("SHA-512"));
    }
    let actual = b64.encode(Sha512::digest(bytes));
    if expected.contains(&actual.as_str()) {
        Ok(())
    } else {
        Err(PackageError::Integrity {
            expected: integrity.to_owned(),
            actual: format!("sha512-{actual}"),
        })
    }
}

// ---- PyPI ----

/// A wheel chosen from a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wheel {
    /// Its file name.
    pub filename: String,
    /// Where it is downloaded from.
    pub url: String,
    /// The SHA-256 the index publishes (lower-case hex).
    pub sha256: String,
    /// Its size as published.
    pub size: Option<u64>,
}

#[derive(Deserialize)]
struct Project {
    #[serde(default)]
    info: ProjectInfo,
    #[serde(default)]
    releases: BTreeMap<String, Vec<ReleaseFile>>,
}

#[derive(Deserialize, Default)]
struct ProjectInfo {
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize)]
struct ReleaseFile {
    filename: String,
    url: String,
    #[serde(default)]
    packagetype: String,
    #[serde(default)]
    digests: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    yanked: bool,
}

/// The project JSON URL of `name` under `index`.
pub fn pypi_project_url(index: &str, name: &str) -> String {
    format!("{}/pypi/{}/json", index.trim_end_matches('/'), pep503(name))
}

fn project(json: &[u8]) -> Result<Project, PackageError> {
    serde_json::from_slice(json).map_err(|e| PackageError::Metadata(format!("project JSON: {e}")))
}

/// The latest version a project JSON names (`info.version`).
pub fn pypi_latest(project_json: &[u8]) -> Result<String, PackageError> {
    project(project_json)?
        .info
        .version
        .ok_or_else(|| PackageError::NotFound("no info.version".into()))
}

/// How much a wheel file name suits the sandbox (CPython 3 on Linux x86-64), best first:
/// 0 pure Python for Python 3 (`py3-none-any`, `py2.py3-none-any`), 1 any other `none-any`,
/// 2 a stable-ABI (`abi3`) or CPython 3.11 `manylinux` x86-64 wheel; `None` for anything else
/// (other platforms, or not a wheel).
pub fn wheel_rank(filename: &str) -> Option<u8> {
    let stem = filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 5 {
        return None;
    }
    let (python, abi, platform) = (
        parts[parts.len() - 3],
        parts[parts.len() - 2],
        parts[parts.len() - 1],
    );
    let pythons: Vec<&str> = python.split('.').collect();
    if abi == "none" && platform == "any" {
        return Some(if pythons.contains(&"py3") { 0 } else { 1 });
    }
    let linux = platform.split('.').any(|p| {
        (p.starts_with("manylinux") || p.starts_with("musllinux")) && p.ends_with("_x86_64")
    });
    let cpython = pythons.contains(&"cp311")
        || (abi == "abi3" && pythons.iter().any(|p| p.starts_with("cp3")));
    (linux && cpython && !platform.contains("musllinux")).then_some(2)
}

/// One file a Python package index lists for a version: from the JSON API or the simple index.
struct IndexFile {
    filename: String,
    /// As listed (resolved against the page it came from by [`best_wheel`]).
    url: String,
    /// The SHA-256 the index states, as given.
    sha256: Option<String>,
    size: Option<u64>,
}

/// The best wheel among `files` of one version ([`wheel_rank`], then by name), its URL resolved
/// against `page_url` and its SHA-256 required; `listed` is how many files the version has.
fn best_wheel(files: Vec<IndexFile>, listed: usize, page_url: &str) -> Result<Wheel, PackageError> {
    let best = files
        .into_iter()
        .filter_map(|f| Some((wheel_rank(&f.filename)?, f)))
        .min_by(|(a, fa), (b, fb)| a.cmp(b).then_with(|| fa.filename.cmp(&fb.filename)))
        .map(|(_, f)| f)
        .ok_or(PackageError::NoWheel(listed))?;
    let sha256 = best
        .sha256
        .as_deref()
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_ascii_lowercase)
        .ok_or(PackageError::IntegrityMissing("SHA-256"))?;
    let url = url::Url::parse(page_url)
        .and_then(|base| base.join(&best.url))
        .map_err(|e| PackageError::Metadata(format!("wheel URL {:?}: {e}", best.url)))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(PackageError::Metadata(format!(
            "wheel URL {url} is not HTTP"
        )));
    }
    let mut url = url;
    // The digest travels in the fragment on a simple index; it is not part of the file's URL.
    url.set_fragment(None);
    Ok(Wheel {
        filename: best.filename,
        url: url.into(),
        sha256,
        size: best.size,
    })
}

/// The best wheel of `version` in a project JSON fetched from `json_url` (file URLs are
/// resolved against it), yanked files excluded.
pub fn pypi_wheel(
    project_json: &[u8],
    version: &str,
    json_url: &str,
) -> Result<Wheel, PackageError> {
    let mut p = project(project_json)?;
    let files = p
        .releases
        .remove(version)
        .ok_or_else(|| PackageError::NotFound(format!("version {version}")))?;
    let count = files.len();
    let files = files
        .into_iter()
        .filter(|f| !f.yanked && (f.packagetype == "bdist_wheel" || f.packagetype.is_empty()))
        .map(|f| IndexFile {
            sha256: f
                .digests
                .get("sha256")
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            filename: f.filename,
            url: f.url,
            size: f.size,
        })
        .collect();
    best_wheel(files, count, json_url)
}

/// Most links read from one simple-index page (a project with thousands of files has some
/// thousands; the page itself is bounded by [`MAX_PACKUMENT_BYTES`]).
pub const MAX_SIMPLE_LINKS: usize = 100_000;

/// The simple-index page (PEP 503) of `name` under `index`.
pub fn pypi_simple_url(index: &str, name: &str) -> String {
    format!("{}/simple/{}/", index.trim_end_matches('/'), pep503(name))
}

/// One link of a simple-index page: its `href` (entities decoded), its text, and whether it
/// is marked `data-yanked`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleLink {
    /// The `href` attribute, entities decoded.
    pub href: String,
    /// The text inside the anchor (the file name), entities decoded, trimmed.
    pub text: String,
    /// `data-yanked` is present.
    pub yanked: bool,
}

/// HTML character references decoded (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`, `&#NN;`,
/// `&#xHH;`); anything else is left as written.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest.find(';').filter(|&end| end <= 10).and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    let n = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok()
                    } else {
                        name.strip_prefix('#').and_then(|d| d.parse().ok())
                    };
                    n.and_then(char::from_u32)
                }
            }?;
            Some((c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A tag's attributes: name, and value (quoted or not) when it has one.
fn attributes_of(text: &str) -> Vec<(&str, Option<&str>)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' {
            i += 1;
        }
        if start == i {
            i += 1;
            continue;
        }
        let name = &text[start..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = None;
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let quote = b[i];
                let from = i + 1;
                let to = b[from..]
                    .iter()
                    .position(|&c| c == quote)
                    .map_or(b.len(), |p| from + p);
                value = Some(&text[from..to]);
                i = to + 1;
            } else {
                let from = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = Some(&text[from..i]);
            }
        }
        out.push((name, value));
    }
    out
}

/// The anchors of a simple-index page (PEP 503), at most [`MAX_SIMPLE_LINKS`]: a small scanner
/// for what the PEP specifies (`<a href="…" data-…>file name</a>`), not an HTML parser; an
/// anchor it cannot read is passed over.
pub fn simple_links(html: &str) -> Vec<SimpleLink> {
    let mut out = Vec::new();
    let lower = html.to_ascii_lowercase();
    let mut at = 0;
    while out.len() < MAX_SIMPLE_LINKS {
        let Some(open) = lower[at..].find("<a").map(|i| at + i) else {
            break;
        };
        at = open + 2;
        // `<a` must end the tag name.
        if !lower[at..].starts_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let Some(close) = lower[at..].find('>').map(|i| at + i) else {
            break;
        };
        let attributes = &html[at..close];
        let Some(end) = lower[close..].find("</a").map(|i| close + i) else {
            break;
        };
        let text = unescape(html[close + 1..end].trim());
        at = end;
        let mut href = None;
        let mut yanked = false;
        for (name, value) in attributes_of(attributes) {
            match name.to_ascii_lowercase().as_str() {
                "href" => href = value.map(unescape),
                "data-yanked" => yanked = true,
                _ => {}
            }
        }
        if let Some(href) = href {
            out.push(SimpleLink { href, text, yanked });
        }
    }
    out
}

/// The best wheel of `version` of project `name` on a simple-index page fetched from
/// `page_url` (PEP 503: file names in the anchors' text, the SHA-256 in the `href`'s
/// `#sha256=` fragment), yanked files excluded. The version is read from each wheel's file name
/// (`{name}-{version}-…whl`, the name compared PEP 503-normalised).
pub fn pypi_simple_wheel(
    html: &[u8],
    name: &str,
    version: &str,
    page_url: &str,
) -> Result<Wheel, PackageError> {
    let html = std::str::from_utf8(html)
        .map_err(|_| PackageError::Metadata("simple index page: not UTF-8".into()))?;
    let project = pep503(name);
    let of_version: Vec<SimpleLink> = simple_links(html)
        .into_iter()
        .filter(|l| {
            let file = l.text.as_str();
            let stem = file
                .strip_suffix(".whl")
                .or_else(|| file.strip_suffix(".tar.gz"))
                .or_else(|| file.strip_suffix(".zip"))
                .unwrap_or(file);
            let mut parts = stem.splitn(3, '-');
            let (Some(n), Some(v)) = (parts.next(), parts.next()) else {
                return false;
            };
            pep503(n) == project && v == version
        })
        .collect();
    if of_version.is_empty() {
        return Err(PackageError::NotFound(format!("version {version}")));
    }
    let listed = of_version.len();
    let files = of_version
        .into_iter()
        .filter(|l| !l.yanked)
        .map(|l| IndexFile {
            sha256: l
                .href
                .split_once('#')
                .and_then(|(_, f)| f.strip_prefix("sha256="))
                .map(str::to_owned),
            filename: l.text,
            url: l.href,
            size: None,
        })
        .collect();
    best_wheel(files, listed, page_url)
}

/// Check `bytes` against a lower-case hex SHA-256.
pub fn verify_sha256(bytes: &[u8], expected: &str) -> Result<(), PackageError> {
    let actual: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if actual == expected {
        Ok(())
    } else {
        Err(PackageError::Integrity {
            expected: format!("sha256:{expected}"),
            actual: format!("sha256:{actual}"),
        })
    }
}

// ---- fetching ----

/// What the registry publishes about the fetched artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Published {
    /// An npm version's packument entry.
    Npm(NpmVersion),
    /// The chosen wheel.
    Pypi(Wheel),
}

/// One verified package artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// The version fetched.
    pub spec: Spec,
    /// Where it came from.
    pub url: String,
    /// Its bytes, checked against the registry's digest.
    pub bytes: Vec<u8>,
    /// Its SHA-256, as the log's artifact digest (`sha256-<base64>`).
    pub sha256_sri: String,
    /// What the registry says of it.
    pub published: Published,
    /// The version's registry signals ([`facts`]): fields the registry does not serve are
    /// unknown; reading them never fails the fetch.
    pub registry: RegistryFacts,
}

/// One GET through the crawler's SSRF guard (resolved once, every address checked, the
/// client pinned to them; no redirects, no proxy, `config`'s trust), within
/// [`PACKAGE_FETCH_TIMEOUT`] for headers and body, the body under `max`.
pub(crate) async fn get(
    config: &ClientConfig,
    url: &str,
    accept: &str,
    max: usize,
) -> Result<Vec<u8>, PackageError> {
    let failed = |reason: String| PackageError::Fetch {
        url: url.to_owned(),
        reason,
    };
    let pinned = guard::check(url, config.policy, config.resolver.as_ref())
        .await
        .map_err(|e| PackageError::Blocked {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
    let client = crate::mcp::build_client(config, &pinned, &Declared::default()).map_err(failed)?;
    let exchange = async {
        let response = client
            .get(pinned.url.clone())
            .header(reqwest::header::ACCEPT, accept)
            .send()
            .await
            .map_err(|e| failed(crate::error_chain(&e)))?;
        match response.status().as_u16() {
            200 => {}
            404 | 410 => return Err(PackageError::NotFound(url.to_owned())),
            status => {
                return Err(PackageError::Http {
                    url: url.to_owned(),
                    status,
                });
            }
        }
        crate::body::read_capped(response, max)
            .await
            .map_err(|e| failed(e.to_string()))
    };
    tokio::time::timeout(PACKAGE_FETCH_TIMEOUT, exchange)
        .await
        .map_err(|_| failed(format!("no answer within {PACKAGE_FETCH_TIMEOUT:?}")))?
}

/// The latest version of `name` in `ecosystem` (npm's `dist-tags.latest`, PyPI's
/// `info.version`), read through the SSRF guard like [`fetch`]: for a registry entry that names
/// no version.
pub async fn latest(
    config: &ClientConfig,
    registries: &Registries,
    ecosystem: &Ecosystem,
    name: &str,
) -> Result<String, PackageError> {
    match ecosystem {
        Ecosystem::Npm => npm_latest(
            &get(
                config,
                &npm_packument_url(&registries.npm, name),
                "application/json",
                MAX_PACKUMENT_BYTES,
            )
            .await?,
        ),
        Ecosystem::Pypi => pypi_latest(
            &get(
                config,
                &pypi_project_url(&registries.pypi, name),
                "application/json",
                MAX_PACKUMENT_BYTES,
            )
            .await?,
        ),
        Ecosystem::Other(other) => Err(PackageError::Spec(format!(
            "unsupported registry {other:?}"
        ))),
    }
}

/// Fetch `spec` from `registries` and verify it; every request (the metadata and the artifact
/// URL it names) goes through the SSRF guard under `config`'s policy.
pub async fn fetch(
    config: &ClientConfig,
    registries: &Registries,
    spec: &Spec,
) -> Result<Artifact, PackageError> {
    let (url, bytes, published, registry) = match spec.ecosystem {
        Ecosystem::Npm => {
            let packument = get(
                config,
                &npm_packument_url(&registries.npm, &spec.name),
                "application/json",
                MAX_PACKUMENT_BYTES,
            )
            .await?;
            let (version, registry) = npm_entry(&packument, &spec.version)?;
            let bytes = get(
                config,
                &version.tarball,
                "application/octet-stream",
                MAX_ARTIFACT_BYTES,
            )
            .await?;
            verify_npm_integrity(&bytes, &version.integrity)?;
            (
                version.tarball.clone(),
                bytes,
                Published::Npm(version),
                registry,
            )
        }
        Ecosystem::Pypi => {
            // The JSON API where the index has one (pypi.org); its simple index (PEP 503:
            // pypiserver, mirrors) where it has none.
            let json_url = pypi_project_url(&registries.pypi, &spec.name);
            let (wheel, mut registry) =
                match get(config, &json_url, "application/json", MAX_PACKUMENT_BYTES).await {
                    Ok(project) => (
                        pypi_wheel(&project, &spec.version, &json_url)?,
                        facts::pypi_facts(&project, &spec.version)?,
                    ),
                    Err(PackageError::NotFound(_))
                    | Err(PackageError::Http {
                        status: 300..=399, ..
                    }) => {
                        let page_url = pypi_simple_url(&registries.pypi, &spec.name);
                        let page = get(config, &page_url, "text/html", MAX_PACKUMENT_BYTES).await?;
                        let wheel = pypi_simple_wheel(&page, &spec.name, &spec.version, &page_url)?;
                        let registry = RegistryFacts {
                            ecosystem: "pypi".into(),
                            install_scripts: Some(BTreeMap::new()),
                            ..RegistryFacts::default()
                        };
                        (wheel, registry)
                    }
                    Err(e) => return Err(e),
                };
            let bytes = get(
                config,
                &wheel.url,
                "application/octet-stream",
                MAX_ARTIFACT_BYTES,
            )
            .await?;
            verify_sha256(&bytes, &wheel.sha256)?;
            pypi_provenance_facts(config, registries, spec, &wheel.filename, &mut registry).await;
            (wheel.url.clone(), bytes, Published::Pypi(wheel), registry)
        }
        Ecosystem::Other(ref other) => {
            return Err(PackageError::Spec(format!(
                "unsupported registry {other:?}"
            )));
        }
    };
    let sha256_sri = format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(&bytes))
    );
    Ok(Artifact {
        spec: spec.clone(),
        url,
        bytes,
        sha256_sri,
        published,
        registry,
    })
}

/// Fill `registry`'s provenance and publisher for PyPI file `filename` (see [`facts`]): the
/// PEP 691 simple JSON says whether the index serves PEP 740 for the file at all; only then is
/// the integrity API asked. Any failure leaves both unknown.
async fn pypi_provenance_facts(
    config: &ClientConfig,
    registries: &Registries,
    spec: &Spec,
    filename: &str,
    registry: &mut RegistryFacts,
) {
    let simple_url = pypi_simple_url(&registries.pypi, &spec.name);
    let Ok(page) = get(config, &simple_url, facts::SIMPLE_JSON, MAX_PACKUMENT_BYTES).await else {
        return;
    };
    match facts::pypi_provenance_listing(&page, filename) {
        facts::ProvenanceListing::NotServed => {}
        facts::ProvenanceListing::None => {
            registry.provenance = Some(toolmark_observation::registry_facts::Provenance {
                present: false,
                kind: None,
            });
            registry.publisher = Some(None);
        }
        facts::ProvenanceListing::Listed => {
            let url =
                facts::pypi_provenance_url(&registries.pypi, &spec.name, &spec.version, filename);
            // The index listed provenance for the file: an integrity API that does not answer
            // it (a mirror that passes upstream's listing through, a 404, a fault) leaves it
            // unknown, never "absent" (only `provenance: null` in the listing says absent).
            if let Ok(body) = get(config, &url, facts::INTEGRITY_JSON, MAX_PACKUMENT_BYTES).await
                && let Ok((provenance, publisher)) = facts::pypi_provenance(&body)
            {
                registry.provenance = Some(provenance);
                registry.publisher = Some(publisher);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACKUMENT: &[u8] =
        include_bytes!("../tests/fixtures/packages/server-memory.packument.json");
    const PROJECT: &[u8] =
        include_bytes!("../tests/fixtures/packages/mcp-server-time.project.json");
    const PROJECT_URL: &str = "https://pypi.org/pypi/mcp-server-time/json";

    const SIMPLE: &[u8] = include_bytes!("../tests/fixtures/packages/mcp-server-time.simple.html");
    const SIMPLE_URL: &str = "https://pypi.org/simple/mcp-server-time/";

    #[test]
    fn a_simple_index_page_gives_the_versions_wheel_with_its_digest_from_the_fragment() {
        let w = pypi_simple_wheel(SIMPLE, "mcp_server_time", "2026.10.19", SIMPLE_URL).unwrap();
        assert_eq!(w.filename, "mcp_server_time-2026.10.19-py3-none-any.whl");
        assert!(
            !w.url.contains('#') && w.url.ends_with(&w.filename),
            "{}",
            w.url
        );
        assert_eq!(w.sha256.len(), 64);
        // The same wheel as the JSON API names.
        let json = pypi_wheel(PROJECT, "2026.10.19", PROJECT_URL).unwrap();
        assert_eq!((json.filename, json.sha256), (w.filename, w.sha256));
        assert!(matches!(
            pypi_simple_wheel(SIMPLE, "mcp-server-time", "9.9.9", SIMPLE_URL),
            Err(PackageError::NotFound(_))
        ));
    }

    #[test]
    fn simple_index_links_are_read_as_pep_503_writes_them_and_nothing_else() {
        let page = "<a href='../../packages/demo-1.0-py3-none-any.whl#sha256=AB&amp;x' data-yanked>demo-1.0-py3-none-any.whl</a>\
                    <abbr href=\"x\">no</abbr><A HREF=other.tar.gz>other &amp; more</A><a data-x>no href</a><a href=\"unterminated";
        let links = simple_links(page);
        assert_eq!(
            links,
            [
                SimpleLink {
                    href: "../../packages/demo-1.0-py3-none-any.whl#sha256=AB&x".into(),
                    text: "demo-1.0-py3-none-any.whl".into(),
                    yanked: true
                },
                SimpleLink {
                    href: "other.tar.gz".into(),
                    text: "other & more".into(),
                    yanked: false
                },
            ]
        );
        assert_eq!(
            unescape("&gt;=3.10 &#65;&#x42; &bogus; &"),
            ">=3.10 AB &bogus; &"
        );
    }

    #[test]
    fn a_simple_index_wheel_without_a_digest_or_only_yanked_is_refused() {
        let url = "http://127.0.0.1:1/simple/demo/";
        let no_digest =
            b"<a href=\"../../packages/demo-1.0-py3-none-any.whl\">demo-1.0-py3-none-any.whl</a>";
        assert!(matches!(
            pypi_simple_wheel(no_digest, "demo", "1.0", url),
            Err(PackageError::IntegrityMissing(_))
        ));
        let yanked = format!(
            "<a href=\"demo-1.0-py3-none-any.whl#sha256={}\" data-yanked=\"\">demo-1.0-py3-none-any.whl</a><a href=\"demo-1.0.tar.gz#sha256={}\">demo-1.0.tar.gz</a>",
            "a".repeat(64),
            "b".repeat(64)
        );
        assert!(matches!(
            pypi_simple_wheel(yanked.as_bytes(), "demo", "1.0", url),
            Err(PackageError::NoWheel(2))
        ));
    }

    #[test]
    fn specs_parse_scoped_npm_names_and_pypi_pins() {
        let s = Spec::parse("npm:@modelcontextprotocol/server-memory@2026.8.31").unwrap();
        assert_eq!(s.name, "@modelcontextprotocol/server-memory");
        assert_eq!(s.version, "2026.8.31");
        assert_eq!(
            s.to_string(),
            "npm:@modelcontextprotocol/server-memory@2026.8.31"
        );
        let s = Spec::parse("npm:left-pad@1.3.0").unwrap();
        assert_eq!((s.name.as_str(), s.version.as_str()), ("left-pad", "1.3.0"));
        let s = Spec::parse("pypi:mcp-server-time==2026.10.19").unwrap();
        assert_eq!(s.ecosystem, Ecosystem::Pypi);
        assert_eq!(s.to_string(), "pypi:mcp-server-time==2026.10.19");
    }

    #[test]
    fn malformed_specs_are_refused() {
        for bad in [
            "left-pad@1.3.0",
            "npm:left-pad",
            "npm:@scope@1.0.0",
            "npm:@1.0.0",
            "npm:left-pad@",
            "pypi:mcp-server-time",
            "pypi:==1.0",
            "npm:a b@1",
            "cargo:serde@1",
        ] {
            assert!(Spec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_scoped_packument_url_encodes_the_slash() {
        assert_eq!(
            npm_packument_url(
                "https://registry.npmjs.org/",
                "@modelcontextprotocol/server-memory"
            ),
            "https://registry.npmjs.org/@modelcontextprotocol%2fserver-memory"
        );
    }

    #[test]
    fn a_recorded_packument_gives_the_version_its_tarball_and_integrity() {
        assert_eq!(npm_latest(PACKUMENT).unwrap(), "2026.8.31");
        let v = npm_version(PACKUMENT, "2026.8.31").unwrap();
        assert!(
            v.tarball.ends_with("/server-memory-2026.8.31.tgz"),
            "{}",
            v.tarball
        );
        assert!(v.integrity.starts_with("sha512-"));
        assert!(
            v.install_scripts.is_empty(),
            "build and prepare are not install scripts"
        );
        assert_eq!(v.bin["mcp-server-memory"], "dist/index.js");
        assert!(matches!(
            npm_version(PACKUMENT, "0.0.0-none"),
            Err(PackageError::NotFound(_))
        ));
    }

    #[test]
    fn install_scripts_and_an_implied_gyp_build_are_named() {
        let p = br#"{"versions":{"1.0.0":{"name":"x","dist":{"tarball":"t","integrity":"sha512-x"},
            "scripts":{"postinstall":"node steal.js","test":"jest"},"bin":"cli.js"},
            "2.0.0":{"name":"@s/x","dist":{"tarball":"t","integrity":"sha512-x"},"gypfile":true}}}"#;
        let one = npm_version(p, "1.0.0").unwrap();
        assert_eq!(
            one.install_scripts.keys().collect::<Vec<_>>(),
            ["postinstall"]
        );
        assert_eq!(one.bin["x"], "cli.js");
        let two = npm_version(p, "2.0.0").unwrap();
        assert_eq!(two.install_scripts["install"], "node-gyp rebuild");
    }

    #[test]
    fn a_version_without_integrity_is_refused() {
        let p = br#"{"versions":{"1.0.0":{"dist":{"tarball":"t","shasum":"abc"}}}}"#;
        assert_eq!(
            npm_version(p, "1.0.0"),
            Err(PackageError::IntegrityMissing("SHA-512"))
        );
    }

    #[test]
    fn npm_integrity_is_checked_by_sha512() {
        let bytes = b"package bytes";
        let good = format!(
            "sha1-ignored sha512-{}",
            base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes))
        );
        assert_eq!(verify_npm_integrity(bytes, &good), Ok(()));
        assert!(matches!(
            verify_npm_integrity(b"other bytes", &good),
            Err(PackageError::Integrity { .. })
        ));
        assert_eq!(
            verify_npm_integrity(bytes, "sha1-abc"),
            Err(PackageError::IntegrityMissing("SHA-512"))
        );
    }

    #[test]
    fn a_recorded_project_gives_a_versions_pure_python_wheel_at_its_resolved_url() {
        assert_eq!(pypi_latest(PROJECT).unwrap(), "2026.10.19");
        let w = pypi_wheel(PROJECT, "2026.10.19", PROJECT_URL).unwrap();
        assert_eq!(w.filename, "mcp_server_time-2026.10.19-py3-none-any.whl");
        assert_eq!(
            w.sha256,
            "5c099a001c6ca78260bda419f2e9b2aabee1adc4fe6ca56d8959871ad8da58a1"
        );
        // The mirror names files relative to the JSON.
        assert!(w.url.starts_with("https://pypi.org/packages/"), "{}", w.url);
        assert!(matches!(
            pypi_wheel(PROJECT, "0.0.0", PROJECT_URL),
            Err(PackageError::NotFound(_))
        ));
    }

    #[test]
    fn a_release_with_only_an_sdist_has_no_wheel() {
        let r = br#"{"releases":{"1.0":[{"filename":"x-1.0.tar.gz","url":"u","packagetype":"sdist","digests":{"sha256":"00"}}]}}"#;
        assert_eq!(
            pypi_wheel(r, "1.0", PROJECT_URL),
            Err(PackageError::NoWheel(1))
        );
    }

    #[test]
    fn wheels_rank_pure_python_first_and_refuse_other_platforms() {
        assert_eq!(wheel_rank("a-1-py3-none-any.whl"), Some(0));
        assert_eq!(wheel_rank("a-1-py2.py3-none-any.whl"), Some(0));
        assert_eq!(wheel_rank("a-1-py2-none-any.whl"), Some(1));
        assert_eq!(
            wheel_rank("a-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
            Some(2)
        );
        assert_eq!(
            wheel_rank("a-1-cp38-abi3-manylinux_2_28_x86_64.whl"),
            Some(2)
        );
        assert_eq!(
            wheel_rank("a-1-cp312-cp312-manylinux_2_17_x86_64.whl"),
            None
        );
        assert_eq!(wheel_rank("a-1-cp311-cp311-win_amd64.whl"), None);
        assert_eq!(wheel_rank("a-1-cp311-cp311-macosx_11_0_arm64.whl"), None);
        assert_eq!(wheel_rank("a-1.tar.gz"), None);
    }

    #[test]
    fn pypi_names_are_normalised() {
        assert_eq!(pep503("MCP_Server.time"), "mcp-server-time");
        assert_eq!(pep503("a--_b"), "a-b");
        assert_eq!(
            pypi_project_url("https://pypi.org/", "MCP_Server_Time"),
            "https://pypi.org/pypi/mcp-server-time/json"
        );
    }

    #[test]
    fn a_wheel_is_checked_by_sha256() {
        let hex: String = Sha256::digest(b"w")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(verify_sha256(b"w", &hex), Ok(()));
        assert!(verify_sha256(b"x", &hex).is_err());
    }
}
