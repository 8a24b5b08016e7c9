//! Setup shared by several test files: each module is named after what it sets up.

pub(crate) mod client;
pub(crate) mod fleet;
pub(crate) mod gateway_setup;
pub(crate) mod http;
pub(crate) mod install_setup;
pub(crate) mod oauth;
pub(crate) mod policy_setup;
pub(crate) mod processes;
pub(crate) mod shell_setup;
pub(crate) mod state_setup;
