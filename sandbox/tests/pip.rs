//! The host-side pip install runs no code of the package: a dependency pip would build (a direct
//! URL to an sdist, which `--only-binary=:all:` does not stop) is refused before its `setup.py`
//! runs. Needs Debian's python3 and pip (no gVisor: nothing runs in a sandbox here).
#![allow(
    clippy::disallowed_methods,
    reason = "makes the sdist and the wheel with Python"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use toolmark_sandbox::prepare::{PYPI_SIMPLE, PipOptions, PrepareError, pypi_tree};

fn python(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new("/usr/bin/python3")
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

#[tokio::test]
async fn a_dependency_pip_would_build_is_refused_before_its_code_runs() {
    let dir = std::env::temp_dir().join(format!("toolmark-pip-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ran = dir.join("ran");
    // An sdist whose setup.py leaves a mark on the host when it runs.
    let sdist_src = dir.join("sdist/evil-1.0");
    std::fs::create_dir_all(&sdist_src).unwrap();
    std::fs::write(
        sdist_src.join("setup.py"),
        format!(
            "open({:?}, 'w').write('ran')\nfrom setuptools import setup\nsetup(name='evil', version='1.0')\n",
            ran.display().to_string()
        ),
    )
    .unwrap();
    let sdist = dir.join("evil-1.0.tar.gz");
    python(&[
        "-c".as_ref(),
        "import sys, tarfile\nwith tarfile.open(sys.argv[1], 'w:gz') as t: t.add(sys.argv[2], arcname='evil-1.0')"
            .as_ref(),
        sdist.as_os_str(),
        sdist_src.as_os_str(),
    ]);
    // A wheel that depends on it by URL.
    let src = dir.join("wheel/needs_evil");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("__init__.py"), "def main():\n    return 0\n").unwrap();
    let requires = format!("Requires-Dist: evil @ file://{}", sdist.display());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wheel.py");
    let wheel = PathBuf::from(
        python(&[
            fixture.as_os_str(),
            dir.join("wheel").as_os_str(),
            dir.as_os_str(),
            "needs-evil".as_ref(),
            "1.0".as_ref(),
            "needs-evil = needs_evil:main".as_ref(),
            requires.as_ref(),
        ])
        .trim(),
    );
    let options = PipOptions::new(PYPI_SIMPLE, dir.join("cache")).offline(dir.join("empty"));
    let err = pypi_tree(&options, &wheel, &dir.join("tree"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, PrepareError::InstallFailed(m) if m.contains("pip may not start a process")),
        "{err}"
    );
    assert!(!ran.exists(), "the sdist's setup.py ran on the host");
    let _ = std::fs::remove_dir_all(&dir);
}
