//! A package's tree, made on the host without running any of its code: npm installs the
//! verified tarball and its dependencies with every lifecycle script disabled.
//!
//! npm is trusted software here; the packages are not. It runs with nothing of the host's
//! configuration or credentials (an empty HOME and user/global config of its own, the
//! environment cleared), `--ignore-scripts` (no `preinstall`/`install`/`postinstall`/`prepare`
//! of any package runs), `--omit=dev`, against one registry, within [`NPM_INSTALL_TIMEOUT`]; a
//! tree larger than [`MAX_TREE_BYTES`] or [`MAX_TREE_FILES`] is refused. npm checks every
//! dependency's tarball against the integrity its registry states; the package's own tarball
//! was checked against `dist.integrity` before it got here.
//!
//! The scripts npm did not run are listed ([`NpmTree::scripts`]): the observer runs them in
//! the sandbox's install phase (`npm rebuild`), traced.
//!
//! What it does not do: fetch the package's own tarball (the crawler does, verified), or run
//! anything in the tree.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

/// Longest an `npm install` of one package's tree may take.
pub const NPM_INSTALL_TIMEOUT: Duration = Duration::from_secs(180);

/// Largest tree (bytes of regular files) a package may install.
pub const MAX_TREE_BYTES: u64 = 512 * 1024 * 1024;

/// Most files a package's tree may hold.
pub const MAX_TREE_FILES: u64 = 100_000;

/// Most bytes of npm's own output kept for the error of a failed install.
const NPM_OUTPUT_KEPT: usize = 4096;

/// Lifecycle scripts that npm runs at install time.
pub const INSTALL_SCRIPTS: [&str; 3] = ["preinstall", "install", "postinstall"];

/// Why no tree was made.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// npm could not install it (a dependency that does not resolve, a broken tarball…): the
    /// package's `install-failed`.
    #[error("npm install failed: {0}")]
    InstallFailed(String),
    /// It did not finish within [`NPM_INSTALL_TIMEOUT`].
    #[error("npm install took longer than {NPM_INSTALL_TIMEOUT:?}")]
    Timeout,
    /// The tree is larger than [`MAX_TREE_BYTES`] or [`MAX_TREE_FILES`].
    #[error("the installed tree is larger than {MAX_TREE_BYTES} bytes or {MAX_TREE_FILES} files")]
    TooLarge,
    /// The package is not what a server needs (no `package.json`, no `bin` to run).
    #[error("{0}")]
    NoEntryPoint(String),
    /// Our side failed (spawning npm, the work directory).
    #[error("preparing the tree: {0}")]
    Io(#[from] std::io::Error),
}

/// How npm is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmOptions {
    /// The `npm` program.
    pub npm: PathBuf,
    /// The registry dependencies come from.
    pub registry: String,
    /// npm's cache (content-addressed, integrity-checked; shared between runs).
    pub cache: PathBuf,
    /// Install from the cache only (no request to the registry).
    pub offline: bool,
}

/// A package installed with its dependencies, scripts not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmTree {
    /// The directory holding `node_modules` (mounted as the sandbox's package tree).
    pub dir: PathBuf,
    /// The package's name, from its `package.json`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The file `npx` would run, relative to the package's directory.
    pub bin: String,
    /// Every install-time script npm did not run: (package directory relative to `dir`,
    /// script name, its text).
    pub scripts: Vec<(String, String, String)>,
    /// Manifests (`package.json`) in the tree that could not be read: npm may still run
    /// scripts they declare, so the install phase runs whenever there is one.
    pub unreadable: Vec<String>,
    /// How `bin` is started: `node` for JavaScript, else the file itself (its own `#!`). Read
    /// here, before any package code could replace the file.
    pub interpreter: Option<String>,
}

/// Install `tarball` into `dir` (created) with npm, scripts disabled.
pub async fn npm_tree(
    options: &NpmOptions,
    tarball: &Path,
    dir: &Path,
) -> Result<NpmTree, PrepareError> {
    std::fs::create_dir_all(dir)?;
    // npm runs in `dir`: every path it is given is made absolute first.
    let tarball = std::path::absolute(tarball)?;
    let cache = std::path::absolute(&options.cache)?;
    let home = dir.join(".npm-home");
    std::fs::create_dir_all(&home)?;
    let (user, global) = (home.join("npmrc"), home.join("global-npmrc"));
    std::fs::write(&user, "")?;
    std::fs::write(&global, "")?;
    std::fs::write(
        dir.join("package.json"),
        r#"{"name":"toolmark-observed","private":true}"#,
    )?;
    let mut cmd = tokio::process::Command::new(&options.npm);
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .env("npm_config_userconfig", &user)
        .env("npm_config_globalconfig", &global)
        .env("npm_config_update_notifier", "false")
        // A git dependency would be cloned and its `prepare` script run by npm on the host,
        // --ignore-scripts or not: there is no git for npm to run.
        .env("npm_config_git", "/nonexistent/git")
        .current_dir(dir)
        .args([
            "install",
            "--ignore-scripts",
            "--omit=dev",
            "--no-audit",
            "--no-fund",
            "--no-package-lock",
            "--install-links",
            "--loglevel=error",
        ])
        .arg(format!("--registry={}", options.registry))
        .arg(format!("--cache={}", cache.display()))
        .arg(format!("--prefix={}", dir.display()));
    if options.offline {
        cmd.arg("--offline");
    }
    cmd.arg(&tarball)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn()?;
    let out = tokio::time::timeout(NPM_INSTALL_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| PrepareError::Timeout)??;
    if !out.status.success() {
        let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        return Err(PrepareError::InstallFailed(tail(&text, NPM_OUTPUT_KEPT)));
    }
    let modules = dir.join("node_modules");
    let (bytes, files) = size_of(&modules)?;
    if bytes > MAX_TREE_BYTES || files > MAX_TREE_FILES {
        return Err(PrepareError::TooLarge);
    }
    let manifest: Value = read_json(&dir.join("package.json"))?;
    let name = manifest
        .get("dependencies")
        .and_then(Value::as_object)
        .and_then(|d| d.keys().next().cloned())
        .ok_or_else(|| PrepareError::NoEntryPoint("npm installed no package".into()))?;
    let package: Value = read_json(&modules.join(&name).join("package.json"))?;
    let version = package
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let bin = bin_of(&name, &package).ok_or_else(|| {
        PrepareError::NoEntryPoint(format!("{name} has no `bin` that npx would run"))
    })?;
    let mut scripts = Vec::new();
    let mut unreadable = Vec::new();
    scripts_in(&modules, dir, &mut scripts, &mut unreadable)?;
    scripts.sort();
    let interpreter = interpreter(&modules.join(&name).join(&bin))?;
    Ok(NpmTree {
        dir: dir.to_owned(),
        name,
        version,
        bin,
        scripts,
        unreadable,
        interpreter,
    })
}

/// The file `npx <name>` runs: the only `bin`, or the one named after the package (without
/// its scope).
pub fn bin_of(name: &str, package: &Value) -> Option<String> {
    let short = name.rsplit('/').next().unwrap_or(name);
    let path = match package.get("bin")? {
        Value::String(s) => s.clone(),
        Value::Object(m) if m.len() == 1 => m.values().next()?.as_str()?.to_owned(),
        Value::Object(m) => m.get(short)?.as_str()?.to_owned(),
        _ => return None,
    };
    // A path that climbs out of the package is not an entry point of it.
    let clean = path.trim_start_matches("./");
    (!clean.is_empty() && !clean.starts_with('/') && !clean.split('/').any(|c| c == ".."))
        .then(|| clean.to_owned())
}

fn read_json(path: &Path) -> Result<Value, PrepareError> {
    let bytes = std::fs::read(path)
        .map_err(|e| PrepareError::NoEntryPoint(format!("{}: {e}", path.display())))?;
    manifest(&bytes).map_err(|e| PrepareError::NoEntryPoint(format!("{}: {e}", path.display())))
}

/// A `package.json` as npm reads it (a leading byte-order mark is dropped).
fn manifest(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes))
}

/// `node` for a JavaScript entry point, `None` for a file with a `#!` line of its own that is
/// not node's. The entry must be a regular file (not a link or a FIFO).
fn interpreter(entry: &Path) -> Result<Option<String>, PrepareError> {
    let meta = std::fs::symlink_metadata(entry)
        .map_err(|e| PrepareError::NoEntryPoint(format!("{}: {e}", entry.display())))?;
    if !meta.file_type().is_file() {
        return Err(PrepareError::NoEntryPoint(format!(
            "{} is not a regular file",
            entry.display()
        )));
    }
    let mut head = [0u8; 128];
    let n = std::io::Read::read(&mut std::fs::File::open(entry)?, &mut head)?;
    let first = head[..n].split(|b| *b == b'\n').next().unwrap_or_default();
    let own = first.starts_with(b"#!") && !first.windows(4).any(|w| w == b"node");
    Ok((!own).then(|| "/usr/bin/node".to_owned()))
}

/// Every package directly under `modules` (and `@scope/` directories), recursively through
/// nested `node_modules`: its install-time scripts.
fn scripts_in(
    modules: &Path,
    root: &Path,
    out: &mut Vec<(String, String, String)>,
    unreadable: &mut Vec<String>,
) -> Result<(), PrepareError> {
    let Ok(entries) = std::fs::read_dir(modules) else {
        return Ok(());
    };
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('@') {
            scripts_in(&path, root, out, unreadable)?;
            continue;
        }
        let Ok(bytes) = std::fs::read(path.join("package.json")) else {
            continue;
        };
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let Ok(package) = manifest(&bytes) else {
            unreadable.push(rel);
            continue;
        };
        let declared = package.get("scripts").and_then(Value::as_object);
        for script in INSTALL_SCRIPTS {
            if let Some(text) = declared.and_then(|s| s.get(script)).and_then(Value::as_str) {
                out.push((rel.clone(), script.to_owned(), text.to_owned()));
            }
        }
        // npm runs `node-gyp rebuild` for a package with a binding.gyp and no install script.
        let has_install = declared.is_some_and(|s| s.contains_key("install"));
        if !has_install && path.join("binding.gyp").is_file() {
            out.push((rel.clone(), "install".into(), "node-gyp rebuild".into()));
        }
        scripts_in(&path.join("node_modules"), root, out, unreadable)?;
    }
    Ok(())
}

/// Bytes of regular files and the number of entries under `dir` (symlinks not followed).
fn size_of(dir: &Path) -> std::io::Result<(u64, u64)> {
    let (mut bytes, mut files) = (0, 0);
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            files += 1;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                todo.push(entry.path());
            } else if kind.is_file() {
                bytes += entry.metadata()?.len();
            }
            if files > MAX_TREE_FILES {
                return Ok((bytes, files));
            }
        }
    }
    Ok((bytes, files))
}

/// The last `n` bytes of `text` (at a character boundary).
pub(crate) fn tail(text: &str, n: usize) -> String {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_bin_npx_would_run_is_the_only_one_or_the_one_named_after_the_package() {
        assert_eq!(
            bin_of("x", &json!({"bin": "./dist/index.js"})).as_deref(),
            Some("dist/index.js")
        );
        assert_eq!(
            bin_of("@s/server-a", &json!({"bin": {"whatever": "a.js"}})).as_deref(),
            Some("a.js")
        );
        assert_eq!(
            bin_of(
                "@s/server-a",
                &json!({"bin": {"server-a": "a.js", "other": "b.js"}})
            )
            .as_deref(),
            Some("a.js")
        );
        assert_eq!(
            bin_of("@s/x", &json!({"bin": {"a": "a.js", "b": "b.js"}})),
            None
        );
        assert_eq!(bin_of("x", &json!({"main": "index.js"})), None);
        assert_eq!(bin_of("x", &json!({"bin": "../../etc/passwd"})), None);
        assert_eq!(bin_of("x", &json!({"bin": "/usr/bin/sh"})), None);
    }

    #[test]
    fn install_scripts_of_every_package_in_the_tree_are_listed_with_implied_gyp_builds() {
        let dir = std::env::temp_dir().join(format!("toolmark-prepare-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |rel: &str, text: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "node_modules/a/package.json",
            r#"{"scripts":{"postinstall":"node steal.js","test":"x"}}"#,
        );
        write("node_modules/@s/b/package.json", r#"{"scripts":{}}"#);
        write("node_modules/@s/b/binding.gyp", "{}");
        write(
            "node_modules/a/node_modules/c/package.json",
            r#"{"scripts":{"preinstall":"sh -c id"}}"#,
        );
        write("node_modules/d/package.json", "not json");
        write(
            "node_modules/e/package.json",
            "\u{feff}{\"scripts\":{\"install\":\"node e.js\"}}",
        );
        let mut found = Vec::new();
        let mut unreadable = Vec::new();
        scripts_in(&dir.join("node_modules"), &dir, &mut found, &mut unreadable).unwrap();
        assert_eq!(
            unreadable,
            ["node_modules/d"],
            "counted, so the install phase runs"
        );
        found.sort();
        let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
        assert_eq!(
            found,
            [
                s("node_modules/@s/b", "install", "node-gyp rebuild"),
                s("node_modules/a", "postinstall", "node steal.js"),
                s("node_modules/a/node_modules/c", "preinstall", "sh -c id"),
                s("node_modules/e", "install", "node e.js"),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
