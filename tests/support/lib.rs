//! Helpers shared by the end-to-end tests: the real binaries (built on demand by the same cargo
//! that runs the tests) and a raw-wire driver that checks every stdout line is JSON-RPC.

pub mod bins;
pub mod snap;
pub mod tree;
pub mod wire;

pub use bins::Bin;
pub use tree::Tree;
pub use wire::RawServer;
