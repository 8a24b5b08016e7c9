//! One server entry as every client spells it: a name, a command, its arguments, its environment.

use serde_json::{Map, Value, json};

/// A stdio server entry of a client's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its key (`teaagent` unless `--name` said otherwise).
    pub(crate) name: String,
    /// The program the client starts.
    pub(crate) command: String,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// Variables set for it, in the order written.
    pub(crate) env: Vec<(String, String)>,
}

impl Entry {
    /// The value after `--root` (or in `--root=DIR`) in the arguments.
    pub(crate) fn root(&self) -> Option<&str> {
        let mut args = self.args.iter();
        while let Some(arg) = args.next() {
            if arg == "--root" {
                return args.next().map(String::as_str);
            }
            if let Some(dir) = arg.strip_prefix("--root=") {
                return Some(dir);
            }
        }
        None
    }

    /// Whether the entry starts teaagent: its command is a file called `teaagent`, or its
    /// arguments start with `mcp serve` (a renamed copy).
    pub(crate) fn is_teaagent(&self) -> bool {
        let program = self.command.rsplit(['/', '\\']).next().unwrap_or_default();
        program == "teaagent"
            || program == "teaagent.exe"
            || self.args.iter().take(2).map(String::as_str).eq(["mcp", "serve"])
    }

    /// The entry as a JSON object: `command`, `args`, `env` when there is one, preceded by
    /// `"type": "stdio"` when `stdio_type`.
    pub(crate) fn to_json(&self, stdio_type: bool) -> Value {
        let mut object = Map::new();
        if stdio_type {
            object.insert("type".into(), json!("stdio"));
        }
        object.insert("command".into(), json!(self.command));
        object.insert("args".into(), json!(self.args));
        if !self.env.is_empty() {
            let env: Map<String, Value> =
                self.env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            object.insert("env".into(), Value::Object(env));
        }
        Value::Object(object)
    }

    /// The entry a JSON object describes (`None` when it is not a stdio server with a command).
    pub(crate) fn from_json(name: &str, value: &Value) -> Option<Self> {
        let object = value.as_object()?;
        let command = object.get("command")?.as_str()?.to_owned();
        let args = match object.get("args") {
            None => Vec::new(),
            Some(args) => {
                args.as_array()?.iter().map(|a| a.as_str().map(str::to_owned)).collect::<Option<_>>()?
            }
        };
        let env = match object.get("env").and_then(Value::as_object) {
            None => Vec::new(),
            Some(env) => env.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect(),
        };
        Some(Self { name: name.to_owned(), command, args, env })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(command: &str, args: &[&str]) -> Entry {
        Entry {
            name: "t".into(),
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
        }
    }

    #[test]
    fn root_and_teaagent() {
        assert_eq!(entry("/bin/teaagent", &["mcp", "serve", "--root", "/p"]).root(), Some("/p"));
        assert_eq!(entry("x", &["--root=/q"]).root(), Some("/q"));
        assert_eq!(entry("x", &["--root"]).root(), None);
        assert!(entry("/usr/local/bin/teaagent", &[]).is_teaagent());
        assert!(entry("C:\\bin\\teaagent.exe", &[]).is_teaagent());
        assert!(entry("/opt/ta", &["mcp", "serve"]).is_teaagent());
        assert!(!entry("npx", &["-y", "server"]).is_teaagent());
    }

    #[test]
    fn json_round_trip() {
        let mut e = entry("/bin/teaagent", &["mcp", "serve"]);
        e.env.push(("A".into(), "1".into()));
        let value = e.to_json(true);
        assert_eq!(value["type"], "stdio");
        assert_eq!(Entry::from_json("t", &value), Some(e));
        assert_eq!(Entry::from_json("t", &json!({"url": "https://x"})), None);
    }
}
