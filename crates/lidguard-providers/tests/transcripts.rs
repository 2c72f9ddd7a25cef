//! The transcript detectors against real transcripts captured from Claude Code 2.1.332, Codex
//! 0.171.0 and Copilot CLI 1.0.102 (`tests/fixtures/transcripts/`, see its README): what the
//! whole file says must match the fixture's `.expect.json`, and a file that ends in an
//! interrupt must also stop a session that follows it line by line.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::path::PathBuf;

use lidguard_core::provider::Provider;
use lidguard_providers::agents::codex::USER_INPUT_PENDING as CODEX_USER_INPUT_PENDING;
use lidguard_providers::transcript::{Detector, Signal};
use serde_json::Value;

fn fixtures() -> Vec<(PathBuf, Value)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/transcripts");
    let mut out = Vec::new();
    for provider in ["claude", "codex", "copilot"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(provider))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let expect = file.with_extension("expect.json");
            let expect: Value =
                serde_json::from_str(&std::fs::read_to_string(&expect).unwrap()).unwrap();
            out.push((file, expect));
        }
    }
    out
}

fn lines(file: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_captured_transcript_gives_the_expected_signal() {
    let all = fixtures();
    assert!(all.len() >= 21, "{} fixtures", all.len());
    for (file, expect) in all {
        let provider: Provider = expect["provider"].as_str().unwrap().parse().unwrap();
        let lines = lines(&file);
        let name = file.display().to_string();

        let whole = Detector::new(provider)
            .feed(&lines)
            .expect("the file has records");
        match expect["last_signal"].as_str().unwrap() {
            "stop" => assert!(matches!(whole, Signal::Stop { .. }), "{name}: {whole:?}"),
            "soft_lock" => assert_eq!(
                whole,
                Signal::SoftLock {
                    reason: CODEX_USER_INPUT_PENDING
                },
                "{name}"
            ),
            "activity" => assert!(
                matches!(
                    whole,
                    Signal::Activity { .. } | Signal::WorkDelivered { .. }
                ),
                "{name}: {whole:?}"
            ),
            other => panic!("{name}: unknown expectation {other}"),
        }

        // Background work the file shows finished is reported as such, by the hooks' ids.
        if let Some(done) = expect["background_completed"]
            .as_array()
            .filter(|d| !d.is_empty())
        {
            let Signal::WorkDelivered { work_ids } = &whole else {
                panic!("{name}: {whole:?}");
            };
            for id in done {
                assert!(
                    work_ids.contains(&id.as_str().unwrap().to_owned()),
                    "{name}: {work_ids:?}"
                );
            }
        }
        if expect["background_running"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
        {
            assert!(
                matches!(whole, Signal::Activity { .. }),
                "{name}: still running: {whole:?}"
            );
        }

        // Followed as it was written, one line at a time: an interrupt stops the session.
        let mut d = Detector::new(provider);
        let signals: Vec<Signal> = lines
            .iter()
            .filter_map(|l| d.feed(std::slice::from_ref(l)))
            .collect();
        if expect["last_signal"] == "stop" {
            assert!(
                signals.iter().any(|s| matches!(s, Signal::Stop { .. })),
                "{name}: no stop line by line"
            );
        }
        if expect["last_signal"] == "soft_lock" {
            assert_eq!(
                signals.last(),
                Some(&Signal::SoftLock {
                    reason: CODEX_USER_INPUT_PENDING
                }),
                "{name}"
            );
        }
    }
}

#[test]
fn a_delivered_task_notification_finishes_the_task_and_a_queued_one_does_not() {
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/transcripts/claude");
    let delivered = lines(&root.join("background-notification.jsonl"));
    assert_eq!(
        Detector::new(Provider::Claude).feed(&delivered),
        Some(Signal::WorkDelivered {
            work_ids: vec!["b4w1wriod".into()]
        })
    );
    let pending = lines(&root.join("background-pending.jsonl"));
    assert!(matches!(
        Detector::new(Provider::Claude).feed(&pending),
        Some(Signal::Activity { .. })
    ));
    // The queued copy alone (enqueue/dequeue) delivers nothing.
    let queued: Vec<String> = delivered
        .iter()
        .filter(|l| l.contains("\"queue-operation\""))
        .cloned()
        .collect();
    assert!(!queued.is_empty());
    assert!(matches!(
        Detector::new(Provider::Claude).feed(&queued),
        Some(Signal::Activity { .. })
    ));
}
