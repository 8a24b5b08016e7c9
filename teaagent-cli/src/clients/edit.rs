//! One entry added, replaced or removed in the text of a client's file, everything else kept as
//! written. Pure: text in, text out; [`super::file`] does the reading and writing.

use std::path::Path;

use super::{Client, ClientError, Entry, Format, json, toml};

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The entry was already there, as given: the text is unchanged.
    Unchanged,
    /// A new entry.
    Added,
    /// An entry of that name was there with other content (as it was, when it was a server
    /// teaagent can read).
    Replaced(Option<Entry>),
    /// The entry was removed (as it was).
    Removed(Option<Entry>),
    /// There was no entry of that name: the text is unchanged.
    Absent,
}

/// `text` (the contents of `path`, empty for a file that does not exist yet) with `entry` in it.
pub(crate) fn install(
    client: &Client,
    path: &Path,
    text: &str,
    entry: &Entry,
) -> Result<(Outcome, String), ClientError> {
    match client.format {
        Format::Json { .. } => json::install(client, path, text, entry),
        Format::CodexToml => toml::install(client, path, text, entry),
    }
}

/// `text` (the contents of `path`) without the entry called `name`.
pub(crate) fn uninstall(
    client: &Client,
    path: &Path,
    text: &str,
    name: &str,
) -> Result<(Outcome, String), ClientError> {
    match client.format {
        Format::Json { .. } => json::remove(client, path, text, name),
        Format::CodexToml => toml::remove(client, path, text, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::find;

    fn entry(env: &[(&str, &str)]) -> Entry {
        Entry {
            name: "teaagent".into(),
            command: "/bin/teaagent".into(),
            args: ["mcp", "serve", "--root", "/p"].map(String::from).to_vec(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    fn add(id: &str, text: &str, e: &Entry) -> (Outcome, String) {
        install(find(id).expect("client"), Path::new("f"), text, e).expect("install")
    }

    #[test]
    fn vscode_keeps_comments_and_trailing_commas() {
        let text = "// mine\n{\n  \"servers\": {\n    \"a\": { \"type\": \"stdio\", \"command\": \"x\" }, // a\n  },\n}\n";
        let (outcome, out) = add("vscode", text, &entry(&[]));
        assert_eq!(outcome, Outcome::Added);
        assert!(
            out.starts_with(
                "// mine\n{\n  \"servers\": {\n    \"a\": { \"type\": \"stdio\", \"command\": \"x\" }, // a\n"
            ),
            "{out}"
        );
        assert!(out.contains("\"type\": \"stdio\",\n      \"command\": \"/bin/teaagent\""), "{out}");
        assert_eq!(add("vscode", &out, &entry(&[])), (Outcome::Unchanged, out.clone()));
        let (removed, back) =
            uninstall(find("vscode").expect("c"), Path::new("f"), &out, "teaagent").expect("rm");
        assert!(matches!(removed, Outcome::Removed(Some(_))));
        assert_eq!(back, text);
    }

    #[test]
    fn replacing_keeps_the_users_other_keys() {
        let text = "{\"mcpServers\": {\"teaagent\": {\"command\": \"old\", \"args\": [], \"timeout\": 5}}}";
        let (outcome, out) = add("gemini-cli", text, &entry(&[("K", "v")]));
        assert!(matches!(outcome, Outcome::Replaced(Some(ref old)) if old.command == "old"), "{outcome:?}");
        let value: serde_json::Value = serde_json::from_str(&out).expect("json");
        let server = &value["mcpServers"]["teaagent"];
        assert_eq!(
            (server["timeout"].as_i64(), server["command"].as_str()),
            (Some(5), Some("/bin/teaagent"))
        );
        assert_eq!(server["env"]["K"], "v");
        let (outcome, out) = add("gemini-cli", &out, &entry(&[]));
        assert!(matches!(outcome, Outcome::Replaced(_)));
        assert!(!out.contains("\"env\""), "{out}");
    }

    #[test]
    fn codex_keeps_comments() {
        let text = "# top\nmodel = \"o3\" # inline\n\n[mcp_servers.other]\ncommand = \"x\" # why\n";
        let (outcome, out) = add("codex", text, &entry(&[("A", "1")]));
        assert_eq!(outcome, Outcome::Added);
        assert!(out.starts_with(text), "{out}");
        assert!(out.contains("[mcp_servers.teaagent]\ncommand = \"/bin/teaagent\"\n"), "{out}");
        assert!(out.contains("env = { A = \"1\" }"), "{out}");
        assert_eq!(add("codex", &out, &entry(&[("A", "1")])).0, Outcome::Unchanged);
        let (removed, back) =
            uninstall(find("codex").expect("c"), Path::new("f"), &out, "teaagent").expect("rm");
        assert!(matches!(removed, Outcome::Removed(Some(_))));
        assert_eq!(back, text);
    }

    #[test]
    fn shapes_and_syntax_are_errors() {
        let code = find("cursor").expect("cursor");
        for bad in ["[]", "{\"mcpServers\": []}", "{\"mcpServers\": {}", "{'a': 1}"] {
            assert!(install(code, Path::new("f"), bad, &entry(&[])).is_err(), "{bad}");
        }
        let twice =
            "{\"mcpServers\": {\"teaagent\": {\"command\": \"a\"}, \"teaagent\": {\"command\": \"b\"}}}";
        assert!(matches!(
            install(code, Path::new("f"), twice, &entry(&[])),
            Err(ClientError::Duplicate { .. })
        ));
        assert!(uninstall(code, Path::new("f"), twice, "teaagent").is_err());
        let codex = find("codex").expect("codex");
        for bad in ["mcp_servers = 1", "[mcp_servers\n"] {
            assert!(install(codex, Path::new("f"), bad, &entry(&[])).is_err(), "{bad}");
        }
    }
}
