//! What agentgate says is written for people: values quoted from the input as JSON writes
//! them (`"\u001b"`), never Rust's forms (`"\u{1b}"`, `Some(6000)`, `expected Digits`,
//! `expected one of [0]`), and lines after the terminal record named in the input's words.

mod common;

use agentgate::{translate_bytes, validate, Dialect, Options};
use serde_json::{Map, Value};

/// The marks of Rust's `Debug` output in a message meant for a person.
fn debug_form(message: &str) -> Option<&'static str> {
    const MARKS: [&str; 7] = ["Some(", "None", "\\u{", "Ok(", "Err(", "one of [", "out of order: ["];
    if let Some(mark) = MARKS.iter().find(|m| message.contains(**m)) {
        return Some(mark);
    }
    // A type's variant name where words belong: "expected Digits", "expected Integer".
    let after = message.split("expected ").skip(1);
    after.into_iter().find(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase())).map(|_| "expected Variant")
}

/// Values no member of any record takes as it should, each with a control character or a
/// type of its own.
fn spoilers() -> Vec<Value> {
    vec![
        Value::from(7),
        Value::from("\u{1b}[2Jx"),
        Value::Null,
        serde_json::json!([0]),
        serde_json::json!({"k": "\u{7}"}),
        Value::from(-1),
        Value::from(1.5),
        Value::from(true),
    ]
}

/// Every fixture with one member of one line (at the top or one level down) spoiled at a time.
fn spoiled() -> Vec<(Dialect, String, Vec<u8>)> {
    let mut out = Vec::new();
    for case in common::cases() {
        let text = String::from_utf8(case.input.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else { continue };
            let mut paths: Vec<Vec<String>> = Vec::new();
            for (k, v) in &m {
                paths.push(vec![k.clone()]);
                if let Value::Object(inner) = v {
                    paths.extend(inner.keys().map(|k2| vec![k.clone(), k2.clone()]));
                }
            }
            for (p, path) in paths.iter().enumerate() {
                // One spoiler a member, turn about, keeps the sweep small and each spoiler used.
                let spoiler = spoilers()[(i + p) % spoilers().len()].clone();
                let mut m: Map<String, Value> = m.clone();
                match path.as_slice() {
                    [k] => {
                        m.insert(k.clone(), spoiler);
                    }
                    [k, k2] => {
                        if let Some(Value::Object(inner)) = m.get_mut(k) {
                            inner.insert(k2.clone(), spoiler);
                        }
                    }
                    _ => unreachable!(),
                }
                let mut spoiled: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                spoiled[i] = Value::Object(m).to_string();
                out.push((
                    case.dialect,
                    format!("{}/{} line {} {}", case.dialect, case.name, i + 1, path.join(".")),
                    {
                        let mut s = spoiled.join("\n");
                        s.push('\n');
                        s.into_bytes()
                    },
                ));
            }
        }
    }
    out
}

#[test]
fn no_message_about_bad_input_is_in_rusts_debug_notation() {
    let mut said = 0;
    let mut wrong = Vec::new();
    for (dialect, what, input) in spoiled() {
        let (_, _, diags) = translate_bytes(&input, &Options::new(Some(dialect), Dialect::Canonical));
        let mut messages: Vec<String> = diags.into_iter().map(|d| d.message).collect();
        let _ = validate(&input[..], Some(dialect), &mut |f| messages.push(f.message));
        for m in messages {
            said += 1;
            if let Some(mark) = debug_form(&m) {
                wrong.push(format!("{what}: {mark}: {m}"));
            }
        }
    }
    assert!(said > 1000, "the sweep said too little to hold: {said} messages");
    assert!(
        wrong.is_empty(),
        "{} messages in Rust's notation, such as:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
fn the_debug_marks_are_found_where_they_are() {
    // The check above would pass on anything were its marks wrong.
    for leak in [
        "result.status Some(\"x\") is not success or error",
        "tool_result has status \"\\u{1b}\"",
        "Terminal.steps: expected Integer, got \"1.5\"",
        "exit_code 3 does not go with status ok (expected one of [0])",
        "tokens.total is Some(6000), but the turn_tokens written add up to 5",
        "members out of order: [\"b\", \"a\"]",
    ] {
        assert!(debug_form(leak).is_some(), "{leak}");
    }
    for fine in
        ["expected an integer, got \"1.5\"", "status \"\\u001b\" is not one the spec lists (\"ok\", \"incomplete\")"]
    {
        assert_eq!(debug_form(fine), None, "{fine}");
    }
}

#[test]
fn a_value_quoted_from_the_input_is_written_with_json_escapes() {
    let line = "{\"type\":\"tool_result\",\"id\":\"c1\",\"status\":\"\\u001b[31mbad\"}\n";
    let input = format!("{{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"bash\",\"args\":{{}}}}\n{line}");
    let (_, _, diags) = translate_bytes(input.as_bytes(), &Options::new(Some(Dialect::Adal), Dialect::Localcode));
    let said: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(said, ["tool_result has status \"\\u001b[31mbad\", which adal does not list; read as failed"]);
}

#[test]
fn a_type_the_contract_wants_is_said_in_words() {
    let wuu = "{\"type\":\"run_started\",\"protocol_version\":\"1\",\"run_id\":\"r\",\"thread_id\":\"t\",\"cwd\":\"/\",\"model\":\"m\"}\n\
               {\"type\":\"result\",\"status\":\"completed\",\"thread_id\":\"t\",\"turn_id\":\"u\",\"run_id\":\"r\",\"final_message\":\"ok\",\"trace_path\":7}\n";
    let mut found = Vec::new();
    validate(wuu.as_bytes(), Some(Dialect::Wuu), &mut |f| found.push(f.message)).unwrap();
    assert!(found.iter().any(|m| m.ends_with("expected a string, got 7")), "{found:?}");
}

#[test]
fn a_line_after_the_terminal_record_is_named_as_the_input_names_it() {
    // adal's `answer` after its `complete`: the line is an answer, not agentgate's final_answer.
    let adal = "{\"type\":\"answer\",\"content\":\"Done.\"}\n{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n{\"type\":\"answer\",\"content\":\"More.\"}\n{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n";
    let (_, _, diags) = translate_bytes(adal.as_bytes(), &Options::new(Some(Dialect::Adal), Dialect::Localcode));
    let said: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(
        said,
        [
            "line 3: an \"answer\" line after the terminal record; dropped",
            "line 4: a second terminal record (a \"complete\" line); the first one stands and this one is dropped",
        ]
    );
}
