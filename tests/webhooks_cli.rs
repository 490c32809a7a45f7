//! `toolmark webhooks deliver` and `toolmark run` read the `[[webhooks]]` subscriptions: an
//! `http://` URL or a short secret is refused at start with the key named; no subscription is
//! not an error. (Delivery itself is tested against a real HTTPS receiver in
//! `webhooks/tests/delivery.rs`.)
// Tests run real binaries (clippy.toml keeps spawning out of the libraries).
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn toolmark(args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolmark"));
    c.args(args);
    for var in [
        "TOOLMARK_CONFIG",
        "TOOLMARK_DATA",
        "TOOLMARK_WEBHOOKS_SCHEDULE",
    ] {
        c.env_remove(var);
    }
    c.output().unwrap()
}

fn config(name: &str, text: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("toolmark-webhooks-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("toolmark.toml");
    std::fs::write(
        &file,
        format!("data = \"{}\"\n{text}", dir.join("data").display()),
    )
    .unwrap();
    (dir, file)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_http_webhook_url_is_refused_at_start_naming_the_key() {
    let (dir, file) = config(
        "http",
        &format!(
            "[[webhooks]]\nid = \"soc\"\nurl = \"http://hooks.example.com/t\"\nsecret = \"{}\"\n",
            "k".repeat(32)
        ),
    );
    let file = file.to_str().unwrap();
    let o = toolmark(&["webhooks", "deliver", "--config", file]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("webhooks[0].url") && err.contains("https"),
        "{err}"
    );
    let o = toolmark(&["run", "--print-config", "--config", file]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("webhooks[0].url"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_short_webhook_secret_is_refused_at_start_naming_the_key() {
    let (dir, file) = config(
        "short",
        "[[webhooks]]\nid = \"soc\"\nurl = \"https://hooks.example.com/t\"\nsecret = \"short\"\n",
    );
    let o = toolmark(&["webhooks", "deliver", "--config", file.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("webhooks[0].secret") && err.contains("32"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn delivering_without_subscriptions_says_so_and_succeeds() {
    let (dir, file) = config("none", "");
    let o = toolmark(&["webhooks", "deliver", "--config", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("no [[webhooks]]"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
