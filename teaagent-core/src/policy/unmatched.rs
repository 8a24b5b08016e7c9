//! Grants and deny rules that name no tool the server serves: almost always a typo
//! (`delete_notes` for `delete_note`) that leaves the call refused (a grant) or allowed (a deny
//! rule) against what the user meant. A library server warns at start; the `teaagent` command
//! refuses to start, as it does for an unknown configuration key.

use super::Policy;
use crate::Registry;
use crate::visible::shown;

/// A rule whose tool pattern names no tool of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedRule {
    /// `"grant"` or `"deny rule"`.
    pub kind: &'static str,
    /// The rule as written.
    pub rule: String,
    /// The tool name closest to the rule's pattern, when one is close.
    pub suggestion: Option<String>,
}

impl std::fmt::Display for UnmatchedRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the {} `{}` names no tool of this server", self.kind, shown(&self.rule))?;
        match &self.suggestion {
            Some(name) => write!(f, "; did you mean `{}`?", shown(name)),
            None => Ok(()),
        }
    }
}

impl Policy {
    /// The grants and deny rules whose tool pattern matches no tool of `registry` (module docs),
    /// each with the closest tool name.
    pub fn rules_naming_no_tool(&self, registry: &Registry) -> Vec<UnmatchedRule> {
        let names: Vec<&str> = registry.iter().map(|t| t.name()).collect();
        let kinds =
            self.grants.iter().map(|g| ("grant", &**g)).chain(self.denies.iter().map(|d| ("deny rule", d)));
        kinds
            .filter(|(_, rule)| !names.iter().any(|name| rule.names_tool(name)))
            .map(|(kind, rule)| {
                let pattern = rule.tool_pattern();
                UnmatchedRule {
                    kind,
                    rule: rule.to_string(),
                    suggestion: closest(pattern, &names).map(str::to_owned),
                }
            })
            .collect()
    }
}

/// The name closest to `pattern` (edit distance, at most a third of its length and at most 3).
fn closest<'a>(pattern: &str, names: &[&'a str]) -> Option<&'a str> {
    let limit = (pattern.chars().count() / 3).clamp(1, 3);
    names
        .iter()
        .map(|name| (distance(pattern, name), *name))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb)).min(row[j] + 1).min(here + 1);
            previous = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{Handler, ToolDef};
    use crate::{CallToolResult, PermissionMode};

    fn registry(names: &[&str]) -> Registry {
        let mut builder = Registry::builder();
        for name in names {
            builder = builder.tool(
                ToolDef::builder(name.to_string())
                    .description("d")
                    .input_schema(serde_json::json!({"type": "object", "properties": {}}))
                    .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
                    .build(),
            );
        }
        builder.build().expect("tools")
    }

    #[test]
    fn a_rule_that_names_no_tool_is_found_with_the_closest_name() {
        let policy = Policy::new(PermissionMode::WorkspaceWrite)
            .grant("delete_notes")
            .and_then(|p| p.grant("read_*"))
            .and_then(|p| p.deny("add_note:path=x"))
            .and_then(|p| p.deny("frobnicate"))
            .expect("rules");
        let found = policy.rules_naming_no_tool(&registry(&["delete_note", "add_note", "read_note"]));
        let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "the grant `delete_notes` names no tool of this server; did you mean `delete_note`?",
                "the deny rule `frobnicate` names no tool of this server",
            ]
        );
    }
}
