//! The status file `DATA/witnessing.json` has one type (`toolmark_log::witnessing::Status`) and
//! two sides: `toolmark-cosign` writes it after each round (as pretty JSON), the API reads it for
//! `/health` and `/metrics` (`toolmark_api::witnesses::parse_status`, which treats it as
//! untrusted). What one writes the other must read, member for member.

use toolmark_cosign::{STATUS_VERSION, Status, WitnessStatus};

fn round(published: Option<u64>) -> Status {
    Status {
        v: STATUS_VERSION.into(),
        policy: "2 of 3 witnesses".into(),
        quorum_met: false,
        signed_size: 120,
        published_size: published,
        round_at: "2026-12-02T19:00:00Z".into(),
        error: Some("quorum not met: 1 of 2 witnesses cosigned".into()),
        witnesses: vec![
            WitnessStatus {
                name: "w1".into(),
                vkey: "w1.example/w+01020304+BAAA".into(),
                url: Some("https://w1.example/".into()),
                size: Some(120),
                cosigned_at: Some("2026-12-02T19:00:00Z".into()),
                error: None,
                error_at: None,
            },
            WitnessStatus {
                name: "w2".into(),
                vkey: "w2.example/w+05060708+BAAA".into(),
                url: None,
                size: None,
                cosigned_at: None,
                error: Some("timed out after 10 s".into()),
                error_at: Some("2026-12-02T19:00:10Z".into()),
            },
        ],
    }
}

#[test]
fn what_the_cosigner_writes_the_api_reads() {
    for published in [Some(118), None] {
        let written = round(published);
        let bytes = serde_json::to_vec_pretty(&written).unwrap();
        let read = toolmark_api::witnesses::parse_status(&bytes).unwrap();
        assert_eq!(
            (read.signed_size, read.published_size, read.quorum_met),
            (120, published, false)
        );
        assert_eq!(read.policy, written.policy);
        assert_eq!(read.round_at, written.round_at);
        assert_eq!(read.error, written.error);
        assert_eq!(read.witnesses.len(), 2);
        for (r, w) in read.witnesses.iter().zip(&written.witnesses) {
            assert_eq!(r.name, w.name);
            assert_eq!(r.vkey, w.vkey);
            assert_eq!((&r.url, r.size), (&w.url, w.size));
            assert_eq!(
                (&r.cosigned_at, &r.error, &r.error_at),
                (&w.cosigned_at, &w.error, &w.error_at)
            );
        }
    }
}
