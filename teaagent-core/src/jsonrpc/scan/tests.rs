use super::*;

/// Messages of every kind, with whitespace, escapes and nesting (the differential test in
/// `message/envelope_tests.rs` mangles them).
pub(crate) const MESSAGES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#,
    r#"{ "jsonrpc" : "2.0" , "id" : "caf\u00e9" , "method" : "ping" }"#,
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\",\"params\":null}\r",
    r#"{"jsonrpc":"2.0","id":-0,"result":{"a":[1,-2.5e+3,0.0E-1,true,false,null,{"b\"c":"\\\/\b\f\n\r\t\u12aF"}]}}"#,
    r#"{"id":"x","error":{"code":-32601,"message":"é ∑ 😀"},"jsonrpc":"2.0","extra":[[],{}]}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":null,"params":[],"x":{"jsonrpc":1}}"#,
    r#"{"jsonrpc":null,"id":2,"error":null,"result":null}"#,
    r#"{}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"x":1},"name":"a","arguments":{"name":"b"},"x":[{"x":2}]}}"#,
];

#[test]
fn common_messages_are_read_without_serde_json() {
    for text in MESSAGES {
        let ours = members(text);
        assert!(ours.is_some(), "{text:?} should be read by the scanner");
    }
    let call = members(MESSAGES[0]).expect("read");
    assert_eq!(call.params, Some(r#"{"name":"echo","arguments":{"text":"hello"}}"#));
    assert_eq!((call.id, call.method), (Some("1"), Some(r#""tools/call""#)));
    let nulls = members(MESSAGES[5]).expect("read");
    assert_eq!((nulls.id, nulls.method, nulls.jsonrpc), (Some("null"), None, Some(r#""2.0""#)));
}

#[test]
fn doubtful_lines_are_left_to_serde_json() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, // a member twice
        r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"x"}"#,   // an escaped top-level key
        r#"{"jsonrpc":"2.0","id":1,"method":"x",}"#,       // a trailing comma
        r#"{"jsonrpc":"2.0","id":01,"method":"x"}"#,       // a leading zero
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}", // a control character
        r#"{"jsonrpc":"2.0","id":1,"method":"x"} x"#,      // trailing characters
        r#"{"jsonrpc":"2.0","id":1,"method":"\x"}"#,       // an invalid escape
        r#"{"jsonrpc":"2.0","id":1,"params":[1.]}"#,       // a number without digits
        r#"{"jsonrpc":"2.0","id":1,"params":{"a":tru}}"#,  // a broken literal
        r#"["2.0",1,"ping"]"#,                             // not an object
        "\u{feff}{}",                                      // a byte order mark
    ] {
        assert_eq!(members(text), None, "{text:?} is serde_json's to read");
    }
    let deep = format!(r#"{{"params":{}1{}}}"#, "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(members(&deep), None, "nesting near serde_json's limit");
    let shallow = format!(r#"{{"params":{}1{}}}"#, "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
    assert!(members(&shallow).is_some());
}
