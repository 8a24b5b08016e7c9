//! `serve_stdio()` without `.await`: the server never runs and `main` returns at once, exit code
//! 0. That is a warning (`unused_must_use`); trybuild's `compile_fail` cases need an error, so
//! this one denies the lint, which changes the level and nothing of the message.
#![deny(unused_must_use)]

use teaagent_core::{Registry, Server};

#[tokio::main]
async fn main() {
    let registry = Registry::builder().registered().build().expect("valid tools");
    Server::new(registry).serve_stdio();
}
