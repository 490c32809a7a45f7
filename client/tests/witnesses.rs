//! A client requiring a witness policy: the cosignatures on the checkpoint an answer is proved
//! against, checked with real keys (`cosignature/v1` by `CosignerKey`, the log's signature by
//! `LogKey`): a quorum met, not met, met only by cosignatures too old, a forged line, and the
//! golden answers (no witness) refused under a policy that needs one.

use serde_json::Value;
use toolmark_client::{
    VerifyError, WitnessPolicy, WitnessRequirement, check_witnesses, verify_answer,
    verify_answer_with,
};
use toolmark_log::cosignature::{CosignerKey, add_signature_lines};
use toolmark_log::note::LogKey;
use toolmark_log::policy::Witness;

const TEXT: &str = "toolmark.test/log\n7\nSxW8F837m/62CCoS0C+o01aQWMa9xVArUXLHuPzoa+A=\n";
const NOW: u64 = 1_800_000_000;

fn cosigner(i: u8) -> CosignerKey {
    CosignerKey::from_seed(&format!("witness{i}.example/w"), &[i; 32]).unwrap()
}

/// 2 of the witnesses 1, 2 and 3.
fn two_of_three() -> WitnessPolicy {
    let ws = (1..=3)
        .map(|i| Witness {
            name: format!("w{i}"),
            key: cosigner(i).witness_key(),
            url: None,
        })
        .collect();
    WitnessPolicy::k_of(ws, 2).unwrap()
}

/// The checkpoint signed by the log and cosigned by witness `i` at time `t` for each pair.
fn note(cosigs: &[(u8, u64)]) -> Vec<u8> {
    let log = LogKey::from_seed("toolmark.test/log", &[11; 32]).unwrap();
    let lines: Vec<String> = cosigs
        .iter()
        .map(|&(i, t)| cosigner(i).cosign(TEXT, t).unwrap().to_line())
        .collect();
    add_signature_lines(&log.sign_note(TEXT).unwrap(), &lines)
}

fn req(policy: &WitnessPolicy, max_age: Option<u64>) -> WitnessRequirement<'_> {
    WitnessRequirement {
        policy,
        now: NOW,
        max_age,
    }
}

#[test]
fn a_met_quorum_reports_which_witnesses_signed_when() {
    let p = two_of_three();
    let w = check_witnesses(
        &note(&[(3, NOW - 100), (1, NOW - 40)]),
        &req(&p, Some(3600)),
    )
    .unwrap();
    assert!(w.satisfied);
    let who: Vec<(&str, u64)> = w
        .cosigned
        .iter()
        .map(|c| (c.witness.as_str(), c.timestamp))
        .collect();
    assert_eq!(who, [("w1", NOW - 40), ("w3", NOW - 100)]);
    assert_eq!(w.newest, Some(NOW - 40));
}

#[test]
fn one_cosignature_of_two_needed_is_refused_naming_the_quorum() {
    let p = two_of_three();
    match check_witnesses(&note(&[(2, NOW)]), &req(&p, None)) {
        Err(VerifyError::NotWitnessed { quorum, cosigned }) => {
            assert_eq!(quorum, "2 of 3 witnesses");
            assert_eq!(cosigned, ["w2"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cosignatures_older_than_the_maximum_age_are_refused_as_too_old() {
    let p = two_of_three();
    let old = note(&[(1, NOW - 7200), (2, NOW - 30)]);
    match check_witnesses(&old, &req(&p, Some(3600))) {
        Err(VerifyError::CosignaturesTooOld {
            max_age, newest, ..
        }) => {
            assert_eq!((max_age, newest), (3600, NOW - 30));
        }
        other => panic!("{other:?}"),
    }
    // Without a maximum age the same note meets the quorum.
    assert!(check_witnesses(&old, &req(&p, None)).unwrap().satisfied);
}

#[test]
fn a_forged_cosignature_by_a_policy_witness_is_refused() {
    let p = two_of_three();
    // Witness 2's line moved to another time: its signature no longer covers the message.
    let mut forged = cosigner(2).cosign(TEXT, NOW).unwrap();
    forged.timestamp -= 1;
    let log = LogKey::from_seed("toolmark.test/log", &[11; 32]).unwrap();
    let n = add_signature_lines(
        &log.sign_note(TEXT).unwrap(),
        &[
            cosigner(1).cosign(TEXT, NOW).unwrap().to_line(),
            cosigner(3).cosign(TEXT, NOW).unwrap().to_line(),
            forged.to_line(),
        ],
    );
    assert!(matches!(
        check_witnesses(&n, &req(&p, None)),
        Err(VerifyError::Cosignature(_))
    ));
}

#[test]
fn cosignatures_by_keys_outside_the_policy_are_ignored() {
    let p = two_of_three();
    // Witnesses 4 and 5 are not in the policy: their valid lines count for nothing.
    match check_witnesses(&note(&[(4, NOW), (5, NOW), (1, NOW)]), &req(&p, None)) {
        Err(VerifyError::NotWitnessed { cosigned, .. }) => assert_eq!(cosigned, ["w1"]),
        other => panic!("{other:?}"),
    }
}

const GOLDEN: &str = include_str!("../../api/tests/fixtures/check-golden.json");

/// The golden file's first `same` answer (its checkpoint carries no cosignature), with the
/// fixture's keys.
fn golden_same() -> (Value, String, String) {
    let cases: Vec<Value> = serde_json::from_str(GOLDEN).unwrap();
    let body = cases
        .iter()
        .filter(|c| c["status"] == 200)
        .map(|c| serde_json::from_str::<Value>(c["body"].as_str().unwrap()).unwrap())
        .find(|a| a["match"] == "same")
        .unwrap();
    let key = body["signature"]["publicKeyHex"]
        .as_str()
        .unwrap()
        .to_owned();
    let vkey = body["log"]["vkey"].as_str().unwrap().to_owned();
    (body, key, vkey)
}

#[test]
fn an_unwitnessed_answer_verifies_without_a_policy_and_is_refused_with_one() {
    let (answer, key, vkey) = golden_same();
    let plain = verify_answer(&answer, &key, &vkey, None).unwrap();
    assert!(plain.witnessed.is_none());
    let none = WitnessPolicy::none();
    let v = verify_answer_with(&answer, &key, &vkey, None, &req(&none, Some(60))).unwrap();
    assert!(v.witnessed.unwrap().satisfied);
    let p = two_of_three();
    assert!(matches!(
        verify_answer_with(&answer, &key, &vkey, None, &req(&p, None)),
        Err(VerifyError::NotWitnessed { .. })
    ));
}
