//! Golden outputs: every fixture transcript translated to every dialect, compared byte for byte
//! with `tests/fixtures/<dialect>/expected/<case>.<target>.jsonl`.
//!
//! `UPDATE_GOLDEN=1 cargo test --test golden` rewrites the expectations; review that diff as the
//! changelog of the mappings.

mod common;

use std::fs;

use agentgate::Dialect;

#[test]
fn every_fixture_translates_to_every_dialect_as_its_golden_output_says() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in common::cases() {
        for target in Dialect::all() {
            let got = common::translate(&case.input, case.dialect, target);
            let path = common::fixtures().join(case.dialect.name()).join("expected").join(format!(
                "{}.{}.jsonl",
                case.name,
                target.name()
            ));
            if update {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, &got).unwrap();
                continue;
            }
            match fs::read_to_string(&path) {
                Ok(want) if want == got => compared += 1,
                Ok(want) => failures.push(format!("{}: differs\n--- want\n{want}--- got\n{got}", path.display())),
                Err(e) => failures.push(format!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{} golden outputs differ:\n{}", failures.len(), failures.join("\n"));
    assert!(update || compared > 60, "only {compared} golden outputs compared");
}

#[test]
fn translation_is_deterministic() {
    for case in common::cases() {
        for target in Dialect::all() {
            let a = common::translate(&case.input, case.dialect, target);
            let b = common::translate(&case.input, case.dialect, target);
            assert_eq!(a, b, "{} to {target}", case.path.display());
        }
    }
}
