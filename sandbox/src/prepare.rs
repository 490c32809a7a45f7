//! A package's tree, made on the host without running any of its code: npm installs the
//! verified tarball and its dependencies with every lifecycle script disabled; pip installs the
//! verified wheel and its dependencies as wheels only (a wheel is unpacked, never built or run).
//!
//! npm and pip are trusted software here; the packages are not. Each runs with nothing of the
//! host's configuration or credentials (the environment cleared, an empty HOME, npm's user and
//! global config empty files of its own, pip `--isolated` with `PIP_CONFIG_FILE=/dev/null`),
//! against one registry or index, within [`TREE_TIMEOUT`]; a tree larger than
//! [`MAX_TREE_BYTES`] or [`MAX_TREE_FILES`] is refused.
//!
//! - npm: `--ignore-scripts` (no `preinstall`/`install`/`postinstall`/`prepare` of any package
//!   runs), `--omit=dev`; npm checks every dependency's tarball against the integrity its
//!   registry states; the package's own tarball was checked against `dist.integrity` before it
//!   got here. The scripts npm did not run are listed ([`NpmTree::scripts`]): the observer runs
//!   them in the sandbox's install phase (`npm rebuild`), traced.
//! - pip (`/usr/bin/python3 -m pip install --only-binary=:all: --no-compile --target`, [`PYTHON`],
//!   the interpreter the sandbox runs too): a dependency with no wheel fails the install (an
//!   sdist's build would run its code), and pip runs under an audit hook that refuses every
//!   process it would start (`--only-binary` does not stop it building a dependency named by a
//!   direct URL to an sdist); the wheel itself was checked against its index's SHA-256.
//!   What runs at a Python's start — executable lines of the tree's `.pth` files, a
//!   `sitecustomize` — and the
//!   console scripts the tree declares are listed ([`PypiTree::scripts`]); the entry point
//!   (`uvx`'s console script) is read from the package's own `entry_points.txt`.
//!
//! What it does not do: fetch the package's own artifact (the crawler does, verified), or run
//! anything in the tree.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use toolmark_observation::registry::pep503;

/// Longest the host-side install of one package's tree (`npm install`, `pip install`) may take.
pub const TREE_TIMEOUT: Duration = Duration::from_secs(180);

/// Largest tree (bytes of regular files) a package may install.
pub const MAX_TREE_BYTES: u64 = 512 * 1024 * 1024;

/// Most files a package's tree may hold.
pub const MAX_TREE_FILES: u64 = 100_000;

/// Most bytes of the installer's own output kept for the error of a failed install.
const INSTALLER_OUTPUT_KEPT: usize = 4096;

/// Lifecycle scripts that npm runs at install time.
pub const INSTALL_SCRIPTS: [&str; 3] = ["preinstall", "install", "postinstall"];

/// The Python that installs a wheel's tree on the host and runs it in the sandbox (Debian's;
/// the sandbox mounts the host's `/usr`, so it is the same interpreter inside).
pub const PYTHON: &str = "/usr/bin/python3";

/// pip's `__main__` run under an audit hook that refuses every process it would start (a build
/// backend, `setup.py`, a version-control checkout): `--only-binary=:all:` alone does not stop
/// pip building a dependency named by a direct URL to an sdist.
const PIP_NO_PROCESS: &str = include_str!("pip_no_process.py");

/// The public index pip installs dependencies from (its simple API).
pub const PYPI_SIMPLE: &str = "https://pypi.org/simple";

/// Why no tree was made.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// npm or pip could not install it (a dependency that does not resolve or has no wheel, a
    /// broken artifact…): the package's `install-failed`, with the installer's own words.
    #[error("{0}")]
    InstallFailed(String),
    /// It did not finish within [`TREE_TIMEOUT`].
    #[error("installing the tree took longer than {TREE_TIMEOUT:?}")]
    Timeout,
    /// The tree is larger than [`MAX_TREE_BYTES`] or [`MAX_TREE_FILES`].
    #[error("the installed tree is larger than {MAX_TREE_BYTES} bytes or {MAX_TREE_FILES} files")]
    TooLarge,
    /// The package is not what a server needs (no `package.json`, no `bin` to run, no console
    /// script `uvx` would run).
    #[error("{0}")]
    NoEntryPoint(String),
    /// Our side failed (spawning the installer, the work directory).
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

impl NpmOptions {
    /// Debian's npm (`/usr/bin/npm`) against `registry`, its cache at `cache`; `offline`: from
    /// the cache only.
    pub fn new(registry: impl Into<String>, cache: impl Into<PathBuf>, offline: bool) -> Self {
        NpmOptions {
            npm: "/usr/bin/npm".into(),
            registry: registry.into(),
            cache: cache.into(),
            offline,
        }
    }
}

/// How pip is run (always by [`PYTHON`]: the tree is made for the interpreter that runs it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipOptions {
    /// The index dependencies come from (its simple API, e.g. [`PYPI_SIMPLE`]).
    pub index: String,
    /// pip's cache (shared between runs; pip checks what it takes from it by hash).
    pub cache: PathBuf,
    /// Install from the wheels in this directory only (`--no-index --find-links`): no request
    /// to the index.
    pub find_links: Option<PathBuf>,
}

impl PipOptions {
    /// pip against `index` (a simple API), its cache at `cache`.
    pub fn new(index: impl Into<String>, cache: impl Into<PathBuf>) -> Self {
        PipOptions {
            index: index.into(),
            cache: cache.into(),
            find_links: None,
        }
    }

    /// The same, installing from the wheels in `dir` only.
    pub fn offline(mut self, dir: impl Into<PathBuf>) -> Self {
        self.find_links = Some(dir.into());
        self
    }
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
    cmd.arg(&tarball);
    install(cmd, "npm install").await?;
    let modules = dir.join("node_modules");
    bounded(&modules)?;
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

/// Run the installer `cmd` (`what`, for its errors) to its end within [`TREE_TIMEOUT`]; its
/// output is the error of a failed install.
async fn install(mut cmd: tokio::process::Command, what: &str) -> Result<(), PrepareError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn()?;
    let out = tokio::time::timeout(TREE_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| PrepareError::Timeout)??;
    if !out.status.success() {
        let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        return Err(PrepareError::InstallFailed(format!(
            "{what} failed: {}",
            tail(&text, INSTALLER_OUTPUT_KEPT)
        )));
    }
    Ok(())
}

/// The tree under `dir` within [`MAX_TREE_BYTES`] and [`MAX_TREE_FILES`].
fn bounded(dir: &Path) -> Result<(), PrepareError> {
    let (bytes, files) = size_of(dir)?;
    if bytes > MAX_TREE_BYTES || files > MAX_TREE_FILES {
        return Err(PrepareError::TooLarge);
    }
    Ok(())
}

/// A wheel installed with its dependencies (wheels only), nothing of it run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PypiTree {
    /// The site directory pip installed into (mounted as the sandbox's package tree).
    pub dir: PathBuf,
    /// The project's name, from its `METADATA`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The console script `uvx` would run.
    pub entry: EntryPoint,
    /// Install-time code and shims: every executable line of a `.pth` file in the site
    /// directory (file, `pth`, the line), a `sitecustomize` module there (its file,
    /// `sitecustomize`, `import sitecustomize`) and every console script a distribution
    /// declares (its `.dist-info`, `console_scripts`, `name = module:attr`).
    pub scripts: Vec<(String, String, String)>,
    /// Code a Python runs at its start with the tree installed (a `.pth` line, a
    /// `sitecustomize`): the install phase runs.
    pub start_code: bool,
    /// The tree has a `sitecustomize` module: a Python's start imports it.
    pub sitecustomize: bool,
}

/// The Python code that starts an interpreter with the tree at `site` as a virtual
/// environment's start would: the site directory added (its `.pth` files processed), then its
/// `sitecustomize` imported when it has one. `site` is the observer's own path (`/pkg`).
pub fn site_start(site: &str, sitecustomize: bool) -> String {
    let custom = if sitecustomize {
        "import sitecustomize; "
    } else {
        ""
    };
    format!("import site, sys; site.addsitedir({site:?}); {custom}")
}

/// A console script: `name = module:attr`, both checked to be dotted ASCII identifiers (they are
/// put into the code that starts it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPoint {
    /// The script's name.
    pub script: String,
    /// The module imported.
    pub module: String,
    /// The callable in it (dotted: attributes of attributes).
    pub attr: String,
}

impl EntryPoint {
    /// `name = module:attr [extras]` as a console script, or why it is not one.
    pub fn parse(script: &str, value: &str) -> Result<EntryPoint, PrepareError> {
        let target = value.split('[').next().unwrap_or_default().trim();
        let bad = || {
            PrepareError::NoEntryPoint(format!(
                "console script {script:?} = {value:?} is not module:attr of identifiers"
            ))
        };
        let (module, attr) = target.split_once(':').ok_or_else(bad)?;
        let (module, attr) = (module.trim(), attr.trim());
        if !dotted_identifiers(module) || !dotted_identifiers(attr) {
            return Err(bad());
        }
        Ok(EntryPoint {
            script: script.to_owned(),
            module: module.to_owned(),
            attr: attr.to_owned(),
        })
    }

    /// The Python code (`python3 -I -S -c CODE`) that starts it: `start` (a Python's start
    /// with the tree, [`site_start`]), then what a console-script shim does — import the
    /// module, exit with the callable's result.
    pub fn shim(&self, start: &str) -> String {
        let plain = self
            .script
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        // Only a plain token is put into the code as the program's name.
        let argv0 = if plain {
            format!("sys.argv[0] = {:?}; ", self.script)
        } else {
            String::new()
        };
        format!(
            "{start}{argv0}import {} as _entry; sys.exit(_entry.{}())",
            self.module, self.attr
        )
    }
}

/// `a`, `a.b_c`: dotted ASCII identifiers (no keyword check: a keyword fails to import, in the
/// sandbox, as the package's own error).
pub fn dotted_identifiers(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|part| {
            let mut bytes = part.bytes();
            bytes
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// The `[console_scripts]` of an `entry_points.txt`: (name, value), in order.
pub fn console_scripts(entry_points: &str) -> Vec<(String, String)> {
    let mut section = "";
    let mut out = Vec::new();
    for line in entry_points.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.trim();
            continue;
        }
        if section == "console_scripts"
            && let Some((name, value)) = line.split_once('=')
        {
            out.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    out
}

/// The console script `uvx <project>` runs: the one named after the project (names compared
/// PEP 503-normalised), else the only one.
pub fn console_script<'a>(
    project: &str,
    scripts: &'a [(String, String)],
) -> Option<&'a (String, String)> {
    let wanted = pep503(project);
    scripts
        .iter()
        .find(|(name, _)| pep503(name) == wanted)
        .or_else(|| (scripts.len() == 1).then(|| &scripts[0]))
}

/// The lines of a `.pth` file a Python executes when it adds the directory holding it (those
/// starting `import ` or `import<TAB>`, as `site` reads them).
pub fn pth_code(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == b'\n' || *b == b'\r')
        .filter(|l| l.starts_with(b"import ") || l.starts_with(b"import\t"))
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

/// Install `wheel` (a file with its published name) and its dependencies, wheels only, into
/// `dir/site` with pip; its project, entry point and install-time code read from the tree.
pub async fn pypi_tree(
    options: &PipOptions,
    wheel: &Path,
    dir: &Path,
) -> Result<PypiTree, PrepareError> {
    let wheel = std::path::absolute(wheel)?;
    let cache = std::path::absolute(&options.cache)?;
    let dir = std::path::absolute(dir)?;
    let (site, home, tmp) = (
        dir.join("site"),
        dir.join(".pip-home"),
        dir.join(".pip-tmp"),
    );
    for d in [&site, &home, &tmp] {
        std::fs::create_dir_all(d)?;
    }
    let mut cmd = tokio::process::Command::new(PYTHON);
    cmd.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        // No configuration file at all (global, user or site), whatever --isolated leaves.
        .env("PIP_CONFIG_FILE", "/dev/null")
        .current_dir(&dir)
        // pip under an audit hook that refuses to start any process (a build, a checkout).
        .args(["-I", "-c", PIP_NO_PROCESS, "install", "--isolated"])
        .args(["--only-binary=:all:", "--no-compile", "--no-input"])
        .args(["--disable-pip-version-check", "--no-warn-script-location"])
        .args(["--root-user-action=ignore", "--progress-bar=off", "--quiet"])
        .arg("--target")
        .arg(&site)
        .arg("--cache-dir")
        .arg(&cache);
    match &options.find_links {
        Some(links) => cmd
            .args(["--no-index", "--find-links"])
            .arg(std::path::absolute(links)?),
        None => cmd.arg(format!("--index-url={}", options.index)),
    };
    cmd.arg(&wheel);
    install(cmd, "pip install").await?;
    bounded(&site)?;
    let file = wheel.file_name().unwrap_or_default().to_string_lossy();
    let distribution = file.split('-').next().unwrap_or_default();
    let (dist_info, name, version) = own_dist_info(&site, distribution)?;
    let entry_points =
        std::fs::read_to_string(site.join(&dist_info).join("entry_points.txt")).unwrap_or_default();
    let declared = console_scripts(&entry_points);
    let (script, value) = console_script(&name, &declared).ok_or_else(|| {
        PrepareError::NoEntryPoint(format!("{name} has no console script uvx would run"))
    })?;
    let entry = EntryPoint::parse(script, value)?;
    let code = install_time_code(&site)?;
    Ok(PypiTree {
        dir: site,
        name,
        version,
        entry,
        scripts: code.scripts,
        start_code: code.start_code,
        sitecustomize: code.sitecustomize,
    })
}

/// What of a wheel tree is code that runs without being called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallTimeCode {
    /// [`PypiTree::scripts`], sorted.
    pub scripts: Vec<(String, String, String)>,
    /// [`PypiTree::start_code`].
    pub start_code: bool,
    /// [`PypiTree::sitecustomize`].
    pub sitecustomize: bool,
}

/// What of the tree at `site` runs at a Python's start — executable `.pth` lines, a
/// `sitecustomize` module (a file, a package or an extension) — and the console scripts its
/// distributions declare.
pub fn install_time_code(site: &Path) -> Result<InstallTimeCode, PrepareError> {
    let mut scripts = Vec::new();
    let (mut pth, mut custom) = (false, false);
    for e in std::fs::read_dir(site)? {
        let e = e?;
        let file = e.file_name().to_string_lossy().into_owned();
        if file.ends_with(".pth") && e.file_type()?.is_file() {
            for line in pth_code(&std::fs::read(e.path())?) {
                pth = true;
                scripts.push((file.clone(), "pth".to_owned(), line));
            }
        } else if file == "sitecustomize" || file.starts_with("sitecustomize.") {
            custom = true;
            let code = "import sitecustomize".to_owned();
            scripts.push((file.clone(), "sitecustomize".to_owned(), code));
        } else if file.ends_with(".dist-info") {
            let text =
                std::fs::read_to_string(e.path().join("entry_points.txt")).unwrap_or_default();
            for (n, v) in console_scripts(&text) {
                let line = format!("{n} = {v}");
                scripts.push((file.clone(), "console_scripts".to_owned(), line));
            }
        }
    }
    scripts.sort();
    Ok(InstallTimeCode {
        scripts,
        start_code: pth || custom,
        sitecustomize: custom,
    })
}

/// The `.dist-info` directory of `distribution` (the wheel file name's first part) in `site`,
/// and the project's name and version from its `METADATA`.
fn own_dist_info(
    site: &Path,
    distribution: &str,
) -> Result<(String, String, String), PrepareError> {
    let wanted = pep503(distribution);
    for e in std::fs::read_dir(site)? {
        let file = e?.file_name().to_string_lossy().into_owned();
        let Some((n, _)) = file
            .strip_suffix(".dist-info")
            .and_then(|s| s.rsplit_once('-'))
        else {
            continue;
        };
        if pep503(n) != wanted {
            continue;
        }
        let metadata = std::fs::read_to_string(site.join(&file).join("METADATA"))
            .map_err(|e| PrepareError::NoEntryPoint(format!("{file}/METADATA: {e}")))?;
        let header = |key: &str| {
            metadata
                .lines()
                .take_while(|l| !l.is_empty())
                .find_map(|l| {
                    l.strip_prefix(key)?
                        .strip_prefix(':')
                        .map(|v| v.trim().to_owned())
                })
        };
        let (Some(name), Some(version)) = (header("Name"), header("Version")) else {
            return Err(PrepareError::NoEntryPoint(format!(
                "{file}/METADATA names no Name and Version"
            )));
        };
        return Ok((file, name, version));
    }
    Err(PrepareError::NoEntryPoint(format!(
        "pip installed no {distribution}"
    )))
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

/// Most directory levels [`trust_trap_ca`] walks down a tree.
pub const MAX_CA_SEARCH_DEPTH: usize = 8;

/// Replace every CA bundle a tree carries for its own HTTPS — certifi's `cacert.pem` (what
/// `certifi.where()` names, and httpx, aiohttp users and others load instead of the system
/// store), wherever a `certifi` directory is, within [`MAX_CA_SEARCH_DEPTH`] levels — by a
/// link to `ca` (the run's trap CA inside the sandbox), so a package checking certificates
/// against its own bundle trusts the traps as the system store does. Links are not followed.
/// The number replaced.
pub fn trust_trap_ca(tree: &Path, ca: &str) -> std::io::Result<usize> {
    fn walk(dir: &Path, ca: &str, depth: usize, replaced: &mut usize) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() && depth < MAX_CA_SEARCH_DEPTH {
                walk(&path, ca, depth + 1, replaced)?;
            } else if kind.is_file()
                && entry.file_name() == "cacert.pem"
                && dir.file_name().is_some_and(|n| n == "certifi")
            {
                std::fs::remove_file(&path)?;
                std::os::unix::fs::symlink(ca, &path)?;
                *replaced += 1;
            }
        }
        Ok(())
    }
    let mut replaced = 0;
    walk(tree, ca, 0, &mut replaced)?;
    Ok(replaced)
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

    #[test]
    fn console_scripts_are_read_from_their_section_only() {
        let text = "# generated\n[gui_scripts]\ngui = a:b\n\n[console_scripts]\n\
                    mcp-server-time = mcp_server_time:main\n; a comment\nother=pkg.cli:run [extra]\n\
                    [other]\nx = y:z\n";
        assert_eq!(
            console_scripts(text),
            [
                ("mcp-server-time".into(), "mcp_server_time:main".into()),
                ("other".into(), "pkg.cli:run [extra]".into())
            ]
        );
        assert!(console_scripts("").is_empty());
    }

    #[test]
    fn the_console_script_uvx_would_run_is_named_after_the_project_or_the_only_one() {
        let s = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let two = s(&[("other", "o:main"), ("MCP_Server.Time", "t:main")]);
        assert_eq!(
            console_script("mcp-server-time", &two).map(|p| p.1.as_str()),
            Some("t:main"),
            "PEP 503 names compare equal"
        );
        let one = s(&[("whatever", "w:main")]);
        assert_eq!(
            console_script("mcp-server-time", &one).map(|p| p.1.as_str()),
            Some("w:main")
        );
        assert_eq!(
            console_script("mcp-server-time", &s(&[("a", "a:m"), ("b", "b:m")])),
            None
        );
        assert_eq!(console_script("x", &[]), None);
    }

    #[test]
    fn an_entry_point_is_module_and_attribute_of_identifiers_or_none() {
        let e = EntryPoint::parse("t", "pkg.cli:main.run [extra]").unwrap();
        assert_eq!(
            (e.module.as_str(), e.attr.as_str()),
            ("pkg.cli", "main.run")
        );
        for bad in [
            "pkg",
            "pkg:",
            ":main",
            "pkg:main()",
            "os; import x:main",
            "pkg:main\nimport os",
            "1pkg:main",
            "pkg..a:main",
            "pkg:ma in",
            "pkg:mäin",
        ] {
            assert!(
                matches!(
                    EntryPoint::parse("t", bad),
                    Err(PrepareError::NoEntryPoint(_))
                ),
                "{bad:?}"
            );
        }
        assert!(dotted_identifiers("_a.b2"));
        assert!(!dotted_identifiers("a-b"));
    }

    #[test]
    fn the_shim_adds_the_site_and_exits_with_the_callables_result() {
        let e = EntryPoint::parse("mcp-server-time", "mcp_server_time:main").unwrap();
        assert_eq!(
            e.shim(&site_start("/pkg", false)),
            "import site, sys; site.addsitedir(\"/pkg\"); sys.argv[0] = \"mcp-server-time\"; \
             import mcp_server_time as _entry; sys.exit(_entry.main())"
        );
        let odd = EntryPoint::parse("a'b", "m:f").unwrap();
        assert!(
            !odd.shim("").contains("argv"),
            "a name that is not a plain token is not put in code"
        );
    }

    #[test]
    fn only_pth_lines_starting_with_import_are_code() {
        let pth = b"# comment\n/some/dir\nimport os; os.system('id')\r\n import x\nimport\tsys\nimportlib\n";
        assert_eq!(pth_code(pth), ["import os; os.system('id')", "import\tsys"]);
        assert!(pth_code(b"../lib\n").is_empty());
    }

    #[test]
    fn a_sitecustomize_and_pth_lines_are_start_code_and_console_scripts_are_listed() {
        let dir = std::env::temp_dir().join(format!("toolmark-start-code-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let write = |rel: &str, text: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("a.pth", "/some/dir\nimport os\n");
        write("only-paths.pth", "lib\n");
        write(
            "x-1.0.dist-info/entry_points.txt",
            "[console_scripts]\nx = x:main\n",
        );
        write("x/__init__.py", "");
        let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
        let code = install_time_code(&dir).unwrap();
        assert_eq!(
            code.scripts,
            [
                s("a.pth", "pth", "import os"),
                s("x-1.0.dist-info", "console_scripts", "x = x:main")
            ]
        );
        assert!(code.start_code && !code.sitecustomize);
        write("sitecustomize/__init__.py", "");
        let code = install_time_code(&dir).unwrap();
        assert!(code.scripts.contains(&s(
            "sitecustomize",
            "sitecustomize",
            "import sitecustomize"
        )));
        assert!(code.start_code && code.sitecustomize);
        std::fs::remove_file(dir.join("a.pth")).unwrap();
        assert!(
            install_time_code(&dir).unwrap().start_code,
            "a sitecustomize alone is start code"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_python_start_adds_the_site_then_imports_its_sitecustomize() {
        assert_eq!(
            site_start("/pkg", true),
            "import site, sys; site.addsitedir(\"/pkg\"); import sitecustomize; "
        );
        assert!(!site_start("/pkg", false).contains("sitecustomize"));
    }

    #[test]
    fn certifis_bundles_in_a_tree_become_links_to_the_trap_ca() {
        let dir = std::env::temp_dir().join(format!("toolmark-certifi-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["certifi", "pip/_vendor/certifi", "other"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
            std::fs::write(dir.join(d).join("cacert.pem"), "real roots").unwrap();
        }
        assert_eq!(trust_trap_ca(&dir, "/out/ca.pem").unwrap(), 2);
        for d in ["certifi", "pip/_vendor/certifi"] {
            let link = std::fs::read_link(dir.join(d).join("cacert.pem")).unwrap();
            assert_eq!(link, Path::new("/out/ca.pem"), "{d}");
        }
        assert_eq!(
            std::fs::read_to_string(dir.join("other/cacert.pem")).unwrap(),
            "real roots",
            "only certifi's"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
