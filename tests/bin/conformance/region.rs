//! The tool of the suite's `http-custom-header-server-validation` scenario: arguments mirrored
//! into headers (`#[header("Region")]`, so `"x-mcp-header": "Region"` in its schema), a string,
//! an integer and a boolean. The scenario calls the first listed tool with such an argument; this
//! is the only one, and named to sort before any other there will be (the registry lists by
//! name). tests/http_param_headers.rs calls it over HTTP too.

use teaagent_core::tool;

/// Echoes the region the call is routed to, and what else it was told.
#[tool(read_only)]
pub(crate) fn echo_region(
    /// The region, also sent as the `Mcp-Param-Region` header.
    #[header("Region")]
    region: String,
    /// How many days ahead, also sent as `Mcp-Param-Days`.
    #[header("Days")]
    days: Option<u32>,
    /// Whether in metric units, also sent as `Mcp-Param-Metric`.
    #[header("Metric")]
    metric: Option<bool>,
) -> String {
    let mut text = format!("Region: {region}");
    if let Some(days) = days {
        text.push_str(&format!(", days: {days}"));
    }
    if let Some(metric) = metric {
        text.push_str(&format!(", metric: {metric}"));
    }
    text
}
