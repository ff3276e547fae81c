//! The library's face: what a user of the crate calls, and what it gives back.

use agentgate::{translate_bytes, translate_str, Dialect, Error, Options, Stop};

#[test]
fn a_dialect_parses_from_its_name_and_an_unknown_name_says_which_names_there_are() {
    for d in Dialect::targets() {
        assert_eq!(d.name().parse::<Dialect>(), Ok(d));
    }
    let err = "claude".parse::<Dialect>().unwrap_err();
    let Error::UnknownDialect { name, known } = &err else { panic!("{err:?}") };
    assert_eq!(name, "claude");
    assert!(known.contains(&"claude-code") && known.contains(&"otlp"), "{known:?}");
    let text = err.to_string();
    assert!(text.starts_with("unknown dialect \"claude\"") && text.contains("claude-code, codex"), "{text}");
    // It is a std error, for `?` into a Box<dyn Error>.
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().contains("known:"));
}

#[test]
fn translate_str_gives_the_target_lines_or_why_the_stream_was_not_read_to_its_end() {
    let adal = "{\"type\":\"answer\",\"content\":\"Done.\"}\nnot json\n{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s-1\",\"model\":\"m\"}\n";
    let opts = Options::new(Some(Dialect::Adal), Dialect::Localcode);
    let (bytes, _, diagnostics) = translate_bytes(adal.as_bytes(), &opts);
    assert_eq!(diagnostics.len(), 1, "the bad line: {diagnostics:?}");
    // Lenient: the bad line is skipped, the rest translated, as translate_bytes does.
    let text = translate_str(adal, &opts).unwrap();
    assert_eq!(text.as_bytes(), bytes);
    assert!(
        text.ends_with("\"final_text\": \"Done.\", \"tokens\": {\"prompt\": 0, \"completion\": 0, \"total\": 0}}\n"),
        "{text}"
    );
    // Strict: the first bad line stops it, and the error names the line.
    let err = translate_str(adal, &opts.clone().strict(true)).unwrap_err();
    let Error::Stopped(Stop::Strict(d)) = &err else { panic!("{err:?}") };
    assert_eq!(d.line, 2);
    assert!(err.to_string().starts_with("stopped at bad input, line 2: "), "{err}");
    // Input no dialect claims.
    let err = translate_str("{\"hello\":1}\n", &Options::new(None, Dialect::Adal)).unwrap_err();
    assert!(matches!(err, Error::Stopped(Stop::Undetected(_))), "{err:?}");
    assert!(err.to_string().starts_with("cannot tell the input's dialect: "), "{err}");
}

#[test]
fn options_are_built_with_their_defaults_and_changed_one_by_one() {
    let opts = Options::new(None, Dialect::Wuu);
    assert_eq!((opts.from, opts.to, opts.strict, opts.max_line_bytes), (None, Dialect::Wuu, false, 64 * 1024 * 1024));
    let opts = opts.strict(true).max_line_bytes(100);
    assert!(opts.strict);
    // A line past the limit is skipped, with a diagnostic naming it.
    let long = format!("{{\"type\":\"answer\",\"content\":\"{}\"}}\n", "x".repeat(200));
    let (_, _, diagnostics) =
        translate_bytes(long.as_bytes(), &Options::new(Some(Dialect::Adal), Dialect::Wuu).max_line_bytes(100));
    assert_eq!(diagnostics.first().map(|d| d.line), Some(1), "{diagnostics:?}");
}

/// The one wrapping of arguments a target's calls cannot take as they are, and its undoing.
#[test]
fn arguments_that_are_no_object_go_to_an_object_target_as_raw_and_come_back_as_text() {
    use agentgate::model::Arguments;
    use serde_json::json;
    assert_eq!(Arguments::value(json!({"path": "a.rs"})).to_object(), json!({"path": "a.rs"}));
    assert_eq!(Arguments::text("").to_object(), json!({}));
    assert_eq!(Arguments::text("ls -la").to_object(), json!({"raw": "ls -la"}));
    assert_eq!(Arguments::value(json!(["a", 1])).to_object(), json!({"raw": "[\"a\",1]"}));
    // Back to text: the wrapping undone, a JSON string (wuu's arguments are JSON text) too.
    assert_eq!(Arguments::text(r#"{"raw":"ls -la"}"#).unwrapped_text(), "ls -la");
    assert_eq!(Arguments::text(r#""pytest -q""#).unwrapped_text(), "pytest -q");
    // An object with more than `raw` is the source's own object, kept.
    assert_eq!(Arguments::text(r#"{"raw":"x","n":1}"#).unwrapped_text(), r#"{"raw":"x","n":1}"#);
    // Through the targets: localcode's text to adal (an object) and back to localcode; a shell
    // call's text is its command line instead (docs/mapping.md, "Shell calls").
    let through_adal = |name: &str, args: &str| {
        let localcode =
            format!("{{\"type\": \"tool_start\", \"name\": \"{name}\", \"args\": \"{args}\", \"index\": \"0\"}}\n");
        let adal = agentgate::translate_str(
            &localcode,
            &agentgate::Options::new(Some(agentgate::Dialect::Localcode), agentgate::Dialect::Adal),
        )
        .unwrap();
        let back = agentgate::translate_str(
            &adal,
            &agentgate::Options::new(Some(agentgate::Dialect::Adal), agentgate::Dialect::Localcode),
        )
        .unwrap();
        (adal.lines().next().unwrap_or("").to_string(), back)
    };
    let (adal, back) = through_adal("grep", "TODO src/");
    assert_eq!(adal, r#"{"type":"tool_call","id":"call-1","name":"grep","args":{"raw":"TODO src/"}}"#);
    assert!(back.contains("\"args\": \"TODO src/\""), "{back}");
    let (adal, back) = through_adal("bash", "ls -la");
    assert_eq!(adal, r#"{"type":"tool_call","id":"call-1","name":"bash","args":{"command":"ls -la"}}"#);
    assert!(back.contains("\"args\": \"ls -la\""), "{back}");
}
