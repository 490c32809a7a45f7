//! The client against real answers: the `/check` golden file the api's test pins
//! (`api/tests/fixtures/check-golden.json`, made by the server from a fixed log with fixed
//! keys). Every answer reads into [`Answer`] and writes back to the same bytes (one definition
//! for both sides), and every proved answer verifies offline while other answers do not.

use serde_json::Value;
use toolmark_client::{Answer, Match, VerifyError, verify_answer};
use toolmark_toolset::Sri;

const GOLDEN: &str = include_str!("../../api/tests/fixtures/check-golden.json");

/// The name and body of every answer (status 200) in the golden file.
fn answers() -> Vec<(String, String)> {
    let cases: Vec<Value> = serde_json::from_str(GOLDEN).unwrap();
    let answers: Vec<(String, String)> = cases
        .iter()
        .filter(|c| c["status"] == 200)
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["body"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(answers.len() >= 20, "{}", answers.len());
    answers
}

/// The answer of the case `name`, and the fixture's keys.
fn answer_named(name: &str) -> (Value, String, String) {
    let (_, body) = answers().into_iter().find(|(n, _)| n == name).unwrap();
    let value: Value = serde_json::from_str(&body).unwrap();
    let (key, vkey) = keys(&value);
    (value, key, vkey)
}

/// The fixture's keys, as a client would have fetched them from `/api/v1/issuer` and
/// `/api/v1/log/vkey` (every answer of the fixture carries the same ones).
fn keys(answer: &Value) -> (String, String) {
    (
        answer["signature"]["publicKeyHex"]
            .as_str()
            .unwrap()
            .to_owned(),
        answer["log"]["vkey"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn every_answer_reads_and_writes_back_byte_for_byte() {
    for (name, body) in answers() {
        let answer: Answer = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(serde_json::to_string(&answer).unwrap(), body, "{name}");
    }
}

#[test]
fn proved_answers_verify_and_the_others_have_no_proof() {
    let mut proved = 0;
    for (name, body) in answers() {
        let value: Value = serde_json::from_str(&body).unwrap();
        let (key, vkey) = keys(&value);
        let answer: Answer = serde_json::from_value(value.clone()).unwrap();
        match verify_answer(&value, &key, &vkey, None) {
            Ok(verified) => {
                assert!(answer.verdict.is_proved(), "{name}");
                assert_eq!(verified.answer, answer, "{name}");
                assert_eq!(
                    Some(verified.index),
                    answer.proof.as_ref().map(|p| p.entry_index)
                );
                assert_eq!(verified.checkpoint.size, answer.log.tree_size, "{name}");
                proved += 1;
            }
            Err(VerifyError::NoProof) => assert!(!answer.verdict.is_proved(), "{name}"),
            Err(e) => panic!("{name}: {e}"),
        }
    }
    assert!(proved >= 10, "{proved}");
}

#[test]
fn the_compared_digest_must_be_the_entrys() {
    let (value, key, vkey) = answer_named("same-by-full-digest");
    let sent: Sri = value["query"]["fullDigest"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let verified = verify_answer(&value, &key, &vkey, Some(&sent)).unwrap();
    assert_eq!(verified.answer.verdict, Match::Same);
    assert_eq!(verified.entry.full, Some(sent));
    let other = Sri::of(b"another set");
    assert!(matches!(
        verify_answer(&value, &key, &vkey, Some(&other)),
        Err(VerifyError::NotCompared)
    ));
}

#[test]
fn a_changed_answer_or_a_wrong_key_does_not_verify() {
    let (value, key, vkey) = answer_named("previously-observed-by-tools");
    let mut forged = value.clone();
    forged["match"] = "same".into();
    assert!(matches!(
        verify_answer(&forged, &key, &vkey, None),
        Err(VerifyError::BadSignature)
    ));
    let mut unsigned = value.clone();
    unsigned.as_object_mut().unwrap().remove("signature");
    assert!(matches!(
        verify_answer(&unsigned, &key, &vkey, None),
        Err(VerifyError::NoSignature)
    ));
    assert!(matches!(
        verify_answer(&value, &key[..62], &vkey, None),
        Err(VerifyError::AnswerKeyHex)
    ));
    let other_log = toolmark_log::note::LogKey::from_seed("toolmark.test/log", &[12; 32]).unwrap();
    assert!(matches!(
        verify_answer(&value, &key, &other_log.vkey(), None),
        Err(VerifyError::Inclusion(_))
    ));
}
