//! Round trips: a valid, complete stream translated to its own dialect, or to canonical and
//! back, gives the same JSON values line for line.

mod common;

use agentgate::Dialect;

/// Fixtures that are not valid, complete streams of their dialect, and why.
const NOT_ROUND_TRIPPABLE: &[(&str, &str)] = &[
    ("malformed-line", "a line that is not JSON (gemini's stdout noise) is said and skipped"),
    ("signal", "cut off (gemini's signal path): the output gains a terminal record"),
    ("tolerated", "a tool result with no call, a result without stats: written anew"),
    ("truncated", "cut off: the output gains a terminal record"),
    ("no-result", "cut off: the output gains a terminal record"),
    (
        "cut",
        "cut off: the output gains a terminal record (claude-code's result; codex's own test covers its cut stream)",
    ),
];

fn skip(name: &str) -> bool {
    NOT_ROUND_TRIPPABLE.iter().any(|(n, _)| *n == name)
}

#[test]
fn same_dialect_translation_gives_back_the_same_values() {
    let mut checked = 0;
    for case in common::cases().iter().filter(|c| !skip(&c.name)) {
        let input = std::str::from_utf8(&case.input).unwrap();
        let out = common::translate_in_own_form(&case.input, case.dialect, case.dialect);
        assert_eq!(common::values(&out), common::values(input), "{} to itself", case.path.display());
        checked += 1;
    }
    assert!(checked >= 40, "{checked}");
}

#[test]
fn through_canonical_and_back_gives_the_same_values() {
    for case in common::cases().iter().filter(|c| !skip(&c.name) && c.dialect != Dialect::Canonical) {
        let input = std::str::from_utf8(&case.input).unwrap();
        let canonical = common::translate(&case.input, case.dialect, Dialect::Canonical);
        let back = common::translate_in_own_form(canonical.as_bytes(), Dialect::Canonical, case.dialect);
        assert_eq!(common::values(&back), common::values(input), "{} through canonical", case.path.display());
    }
}

#[test]
fn canonical_output_is_a_fixed_point() {
    for case in common::cases() {
        for target in Dialect::all() {
            let once = common::translate(&case.input, case.dialect, target);
            let canonical = common::translate(once.as_bytes(), target, Dialect::Canonical);
            let again = common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Canonical);
            assert_eq!(
                common::values(&again),
                common::values(&canonical),
                "{} to {target} to canonical",
                case.path.display()
            );
        }
    }
}

#[test]
fn through_canonical_to_another_dialect_gives_what_the_direct_translation_gives() {
    for case in common::cases().iter().filter(|c| c.dialect != Dialect::Canonical) {
        let canonical = common::translate(&case.input, case.dialect, Dialect::Canonical);
        for target in Dialect::targets().filter(|t| *t != Dialect::Canonical) {
            let direct = common::translate(&case.input, case.dialect, target);
            let through = common::translate(canonical.as_bytes(), Dialect::Canonical, target);
            // Bytes, ids derived from the input included: canonical states the digests they
            // are made from (its first line's input_digest, its terminal's whole_input).
            assert_eq!(through, direct, "{} to {target} through canonical", case.path.display());
        }
    }
}

#[test]
fn canonical_states_the_digests_of_the_whole_source_on_its_terminal_record() {
    use sha2::Digest;
    for case in common::cases().iter().filter(|c| c.dialect != Dialect::Canonical) {
        let canonical = common::translate(&case.input, case.dialect, Dialect::Canonical);
        let last = common::values(&canonical).pop().unwrap();
        assert_eq!(last["type"], "terminal", "{}", case.path.display());
        let sha256: String = sha2::Sha256::digest(&case.input).iter().map(|b| format!("{b:02x}")).collect();
        let xxh3 = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&case.input));
        assert_eq!(
            last["whole_input"],
            serde_json::json!({ "sha256": sha256, "xxh3": xxh3 }),
            "{}",
            case.path.display()
        );
    }
}

#[test]
fn what_a_target_derives_from_the_whole_input_comes_from_the_digests_canonical_states() {
    let sha256 = "a".repeat(64);
    let canonical = format!(
        "{}\n{}{sha256}{}\n",
        r#"{"v":1,"type":"final_answer","text":"done"}"#,
        r#"{"v":1,"type":"terminal","outcome":"completed","exit_code":0,"final_text":"done","whole_input":{"sha256":""#,
        r#"","xxh3":"0123456789abcdef0123456789abcdef"}}"#,
    );
    // loom's Session line: "transcript_digest ... the lowercase hex SHA-256".
    let loom = common::values(&common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Loom));
    let session = loom.iter().find(|l| l["kind"] == "Session").expect("a Session line");
    assert_eq!(session["transcript_digest"], sha256.as_str());
    // adal's complete needs a session id and the stream names none: a UUID (version 8) made from
    // the XXH3 digest, as a direct translation makes it from the input's.
    let adal = common::values(&common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Adal));
    let complete = adal.last().unwrap();
    assert_eq!(complete["type"], "complete");
    assert_eq!(complete["session_id"], "01234567-89ab-8def-8123-456789abcdef");
    // Canonical to canonical passes the stated digests on.
    let again = common::values(&common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Canonical));
    assert_eq!(again.last().unwrap()["whole_input"]["sha256"], sha256.as_str());
}

#[test]
fn the_report_through_canonical_names_the_fields_the_direct_translation_drops() {
    use agentgate::{translate_bytes, Options};
    for case in common::cases().iter().filter(|c| c.dialect != Dialect::Canonical) {
        let (canonical, _, _) = translate_bytes(&case.input, &Options::new(Some(case.dialect), Dialect::Canonical));
        for target in Dialect::all().filter(|t| *t != Dialect::Canonical && *t != case.dialect) {
            let (_, direct, _) = translate_bytes(&case.input, &Options::new(Some(case.dialect), target));
            let (_, through, _) = translate_bytes(&canonical, &Options::new(Some(Dialect::Canonical), target));
            // The lines a dialect carries through canonical for itself (`line`) are no field of
            // the source lost.
            assert_eq!(
                through.report.dropped_fields,
                direct.report.dropped_fields,
                "{} to {target} through canonical",
                case.path.display()
            );
        }
    }
}
