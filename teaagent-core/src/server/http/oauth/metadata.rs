//! Protected Resource Metadata: the document that tells clients which authorization server
//! issues tokens for this server and with which scopes, and the paths it is served at.

use super::config::OAuthConfig;

/// The well-known path of Protected Resource Metadata.
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

impl OAuthConfig {
    /// The Protected Resource Metadata document (the `oauth` module docs).
    pub fn metadata(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({
            "resource": self.resource.as_str(),
            "authorization_servers": [self.issuer.as_str()],
        });
        let supported = self.scopes_supported();
        if !supported.is_empty() {
            doc["scopes_supported"] = serde_json::json!(supported);
        }
        doc["bearer_methods_supported"] = serde_json::json!(["header"]);
        doc["resource_name"] = serde_json::json!(self.resource_name);
        doc
    }

    /// Where the metadata is served: the path form for the resource URL (RFC 9728 §3.1), then
    /// the root form (the same when the resource URL has no path).
    pub fn metadata_paths(&self) -> [String; 2] {
        [format!("{METADATA_PATH}{}", self.resource.path()), METADATA_PATH.to_owned()]
    }

    /// The metadata's URL, as challenges name it: the resource's origin and the path form.
    pub fn metadata_url(&self) -> String {
        format!("{}{METADATA_PATH}{}", self.resource.origin(), self.resource.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tier;

    #[test]
    fn the_metadata_and_where_it_is() {
        let c = OAuthConfig::new("https://mcp.example.com/mcp", "https://auth.example.com")
            .and_then(|c| c.required_scope("mcp:tools"))
            .and_then(|c| c.tier_scope(Tier::Medium, "mcp:write"))
            .and_then(|c| c.tier_scope(Tier::High, "mcp:exec"))
            .expect("valid");
        assert_eq!(
            c.metadata().to_string(),
            r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["mcp:tools","mcp:write","mcp:exec"],"bearer_methods_supported":["header"],"resource_name":"teaagent"}"#
        );
        assert_eq!(
            c.metadata_paths(),
            ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
        );
        assert_eq!(c.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        let bare = OAuthConfig::new("https://mcp.example.com", "https://auth.example.com").expect("valid");
        assert_eq!(bare.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource");
        assert!(bare.metadata().get("scopes_supported").is_none(), "no empty list");
    }
}
