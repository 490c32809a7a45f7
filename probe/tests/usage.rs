//! The probe refuses to run without its arguments, or to start a program as root (exit 125,
//! the probe's own failure, never the package's). Also: this test makes cargo build the probe's
//! binary with the workspace's tests, which the sandbox's real tests run.
#![allow(clippy::disallowed_methods, reason = "runs the probe binary")]

use std::process::Command;

fn probe(args: &[&str]) -> Option<i32> {
    Command::new(env!("CARGO_BIN_EXE_toolmark-probe"))
        .args(args)
        .output()
        .unwrap()
        .status
        .code()
}

#[test]
fn without_its_arguments_the_probe_does_not_start() {
    assert_eq!(probe(&[]), Some(125));
    assert_eq!(probe(&["/tmp", "1000", "/bin/true"]), Some(125), "no `--`");
    assert_eq!(probe(&["/tmp", "1000", "--"]), Some(125), "no program");
}

#[test]
fn the_probe_never_starts_a_program_as_root() {
    assert_eq!(probe(&["/tmp", "0", "--", "/bin/true"]), Some(125));
}
