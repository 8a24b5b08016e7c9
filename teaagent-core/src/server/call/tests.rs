//! The call pipeline's own wording: the JSON type a message names.

use serde_json::json;

use super::json_type;

/// Every number is `a number`, an integer too (unlike the schema reports' `an integer`).
#[test]
fn json_type_names_every_number_a_number() {
    let cases = [
        (json!(null), "null"),
        (json!(true), "a boolean"),
        (json!(1), "a number"),
        (json!(-1), "a number"),
        (json!(u64::MAX), "a number"),
        (json!(1.5), "a number"),
        (json!(1.0), "a number"),
        (json!("x"), "a string"),
        (json!([1]), "an array"),
        (json!({}), "an object"),
    ];
    for (value, name) in cases {
        assert_eq!(json_type(&value), name, "{value}");
    }
}

/// A call's future is one allocation (`router.rs` boxes it), made and freed for every call: it
/// must stay within the sizes glibc's allocator keeps at hand per thread (chunks of up to 1,032
/// bytes), or every call takes the allocator's slow path. Rare parts are boxed to keep it so
/// (the admission's future, a modern retry's earlier state, a task's start).
#[test]
fn a_calls_future_fits_the_allocators_quick_sizes() {
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use crate::jsonrpc::RequestId;
    use crate::mcp::tools::CallRequest;
    use crate::server::Server;
    use crate::server::shared::Shared;
    use crate::session::{Caller, Peer};

    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let peer = Peer::new(tx);
    let shared = Arc::new(Shared::new(
        Server::new(crate::Registry::builder().build().expect("a registry")),
        peer.clone(),
    ));
    let caller = Caller::process(&peer);
    let id = RequestId::from_text("1").expect("an id");
    let params: Box<CallRequest> =
        serde_json::from_value(json!({"name": "echo", "arguments": {}})).expect("call params");
    let call = super::call_tool(&shared, &id, params, CancellationToken::new(), None, &caller);
    let size = std::mem::size_of_val(&call);
    assert!(size <= 1032, "a call's future is {size} bytes");
}
