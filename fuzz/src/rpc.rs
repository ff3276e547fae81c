//! The ACP server's message reader: any bytes, as a client's lines, framed and read as `agentgate
//! acp` reads them ([`agentgate::dialect::acp::rpc`]), each request's params read as the server
//! reads them.

use agentgate::dialect::acp::protocol;
use agentgate::dialect::acp::rpc::{self, ClientMessage};
use agentgate::dialect::acp::schema::{PromptRequest, RequestId};
use agentgate::io::framing::Lines;

/// Asserts: no panic; a refused message is answered with one of the protocol's error codes for
/// it (parse error, invalid request), to the id it gave where that id is usable; a prompt's text
/// is never empty.
pub fn check(data: &[u8]) {
    let p = protocol();
    let max = 4096;
    let mut lines = Lines::new(data, max);
    lines.stop_hashing();
    while let Some((_, frame)) = lines.next_frame().expect("reading memory cannot fail") {
        let Some(read) = rpc::client_line(frame, max) else { continue };
        let Ok(v) = read else { continue };
        let id_given = v.get("id").cloned();
        match rpc::read_client(v) {
            Ok(ClientMessage::Request { id, method, params }) => {
                assert!(id_given.is_some(), "a request without an id");
                match method.as_str() {
                    "initialize" => drop(rpc::initialize(params)),
                    "session/new" => {
                        if let Ok((req, _)) = rpc::new_session(params) {
                            assert!(req.cwd.is_absolute());
                        }
                    }
                    "session/prompt" => {
                        if let Ok(req) = serde_json::from_value::<PromptRequest>(params) {
                            if let Ok(text) = rpc::prompt_text(&req.prompt) {
                                assert!(!text.trim().is_empty());
                            }
                        }
                    }
                    _ => {}
                }
                let _ = serde_json::to_string(&id).expect("an id is written back");
            }
            Ok(ClientMessage::Notification { .. }) => assert!(id_given.is_none()),
            Ok(ClientMessage::Response) => assert!(id_given.is_some()),
            Err(r) => {
                assert_eq!(r.code, p.code("invalid_request"), "{r:?}");
                if r.id != RequestId::Null {
                    assert!(id_given.is_some(), "{r:?}");
                }
                assert!(!r.said.is_empty());
            }
        }
    }
    for uri in std::str::from_utf8(data).unwrap_or("").split_whitespace().take(4) {
        let _ = rpc::link_path(uri);
    }
}
