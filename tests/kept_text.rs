//! Tool output is kept in the escaped form it was read in, and copied to the output where the
//! target escapes alike. These check that what comes out is still exactly what the target's
//! writer makes of the characters, whatever escapes the source used.

mod common;

use agentgate::Dialect;
use serde_json::{json, Value};

/// An adal run whose one tool result has `output` written as the literal `literal` (the inside
/// of a JSON string, escapes as given).
fn adal_run(literal: &str) -> Vec<u8> {
    format!(
        "{{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"sh\",\"args\":{{}}}}\n\
         {{\"type\":\"tool_result\",\"id\":\"c1\",\"name\":\"sh\",\"status\":\"completed\",\"output\":\"{literal}\"}}\n\
         {{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}}\n"
    )
    .into_bytes()
}

fn result_line(out: &str, kind: &str) -> String {
    out.lines().find(|l| l.contains(kind)).unwrap_or_else(|| panic!("no {kind} line in {out}")).to_string()
}

#[test]
fn escapes_the_target_would_not_write_are_rewritten_as_it_writes_them() {
    // ensure_ascii-style escapes, an escaped slash, upper-case hex, and Go's specials raw.
    let literal = r#"caf\u00e9 \/ \u001F a<b>&c \"q\"\n\ud83d\ude42"#;
    let chars: String = serde_json::from_str(&format!("\"{literal}\"")).unwrap();
    // adal to adal copies the valid line as it was read: the same value, the same bytes.
    let out = common::translate(&adal_run(literal), Dialect::Adal, Dialect::Adal);
    assert!(result_line(&out, "tool_result").contains(literal), "{out}");
    // Written anew by adal's encoder (through canonical, without the line it carries).
    let canonical: String = common::values(&common::translate(&adal_run(literal), Dialect::Adal, Dialect::Canonical))
        .into_iter()
        .map(|mut l| {
            l.as_object_mut().unwrap().shift_remove("line");
            format!("{l}\n")
        })
        .collect();
    let out = common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Adal);
    let line = result_line(&out, "tool_result");
    // serde_json's own escapes for the same characters, byte for byte.
    let want = serde_json::to_string(&chars).unwrap();
    assert!(line.contains(&format!("\"output\":{want}")), "{line}");
    assert!(line.contains("café / \\u001f a<b>&c \\\"q\\\"\\n🙂"), "{line}");
    // Python's json.dumps(ensure_ascii=False) writes the same escapes, with its spacing.
    let out = common::translate(&adal_run(literal), Dialect::Adal, Dialect::Localcode);
    let line = result_line(&out, "tool_result");
    assert!(line.contains(&format!("\"result\": {want}")), "{line}");
}

#[test]
fn escapes_already_the_targets_are_kept_byte_for_byte() {
    let literal = r#"line one\nline \"two\"\t\u0001\\ end"#;
    for to in [Dialect::Adal, Dialect::Localcode] {
        let out = common::translate(&adal_run(literal), Dialect::Adal, to);
        assert!(result_line(&out, "tool_result").contains(literal), "{to:?}: {out}");
    }
}

#[test]
fn a_kept_output_is_cut_by_characters_not_by_the_bytes_it_was_read_as() {
    // 3000 characters, 6000 bytes as read: within localcode's 4000-character limit.
    let short = "a\\n".repeat(1500);
    let out = common::translate(&adal_run(&short), Dialect::Adal, Dialect::Localcode);
    let lines = common::values(&out);
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["result"], Value::String("a\n".repeat(1500)));
    // 5000 characters: cut to 4000, on a character boundary.
    let long = "\\u00e9\\n".repeat(2500);
    let out = common::translate(&adal_run(&long), Dialect::Adal, Dialect::Localcode);
    let lines = common::values(&out);
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["result"], Value::String("é\n".repeat(2000)));
}

#[test]
fn a_kept_output_reads_as_its_characters_in_the_canonical_stream() {
    let out = common::translate(&adal_run(r#"x\u0041\ny"#), Dialect::Adal, Dialect::Canonical);
    let lines = common::values(&out);
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["output"], json!("xA\ny"));
}

#[test]
fn output_deltas_and_canonical_output_are_rewritten_for_each_target() {
    // wuu writes Go's escapes; other targets write `<`, `>`, `&` as they are.
    let wuu = concat!(
        r#"{"type":"thread_started","thread_id":"t","model":"m","provider":"p","cwd":"/"}"#,
        "\n",
        r#"{"type":"turn_started","thread_id":"t","turn_id":"u"}"#,
        "\n",
        r#"{"type":"tool_started","thread_id":"t","turn_id":"u","item_id":"i","name":"sh","arguments":"{}"}"#,
        "\n",
        r#"{"type":"tool_output_delta","thread_id":"t","turn_id":"u","item_id":"i","delta":"a\u003cb\u0026\n"}"#,
        "\n",
        r#"{"type":"tool_output_delta","thread_id":"t","turn_id":"u","item_id":"i","delta":"c\u003e"}"#,
        "\n",
        r#"{"type":"tool_completed","thread_id":"t","turn_id":"u","item_id":"i","name":"sh","status":"completed","error":""}"#,
        "\n",
    );
    let canonical = common::translate(wuu.as_bytes(), Dialect::Wuu, Dialect::Canonical);
    let deltas: Vec<Value> = common::values(&canonical)
        .into_iter()
        .filter(|l| l["type"] == "tool_output")
        .map(|l| l["text"].clone())
        .collect();
    assert_eq!(deltas, [json!("a<b&\n"), json!("c>")]);
    assert!(canonical.contains(r#""text":"a<b&\n""#), "{canonical}");
    // The deltas gathered are the result's output where the result has none of its own.
    let adal = common::translate(wuu.as_bytes(), Dialect::Wuu, Dialect::Adal);
    assert!(adal.contains(r#""output":"a<b&\nc>""#), "{adal}");
    // Back to wuu from canonical: Go's escapes again.
    let back = common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Wuu);
    assert!(back.contains(r#""delta":"a\u003cb\u0026\n""#), "{back}");
    // Canonical read with other escapes writes canonical's own.
    let odd = canonical.replace(r#""text":"c>""#, r#""text":"\u0063\u003E\/""#);
    let again = common::translate(odd.as_bytes(), Dialect::Canonical, Dialect::Canonical);
    assert!(again.contains(r#""text":"c>/""#), "{again}");
}
