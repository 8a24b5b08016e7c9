//! Build time of a crate with 100 `#[tool]` functions, next to the same crate without the
//! attribute (the same 100 plain functions): the difference is the attribute's whole cost
//! (expansion plus compiling the generated definitions).
//!
//! ```sh
//! cargo bench -p teaagent-core --bench macro_build
//! ```
//!
//! Both crates are generated under `target/macro-build-bench/` and built in the dev profile
//! with a shared target directory, so dependencies are compiled once (a warm-up build) and the
//! figures are the crates' own: a clean build (`cargo clean -p` first) and an incremental build
//! after editing one function's body. Each figure is the median of several runs.

#![allow(clippy::print_stdout)] // the report is this program's output

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const TOOLS: usize = 100;
const RUNS: usize = 3;

fn main() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let workspace = core.parent().expect("workspace").to_path_buf();
    let root = workspace.join("target/macro-build-bench");
    let target = root.join("target");
    let attr = generate(&root, &core, &workspace, true);
    let plain = generate(&root, &core, &workspace, false);
    for dir in [&attr, &plain] {
        build(dir, &target); // warm-up: dependencies
    }
    let mut rows = Vec::new();
    for (label, dir, package) in
        [("with #[tool]", &attr, "tools_attr"), ("plain functions", &plain, "tools_plain")]
    {
        let mut clean = Vec::new();
        let mut incremental = Vec::new();
        for run in 0..RUNS {
            let status = cargo(dir, &target).args(["clean", "-p", package]).status().expect("cargo clean");
            assert!(status.success());
            clean.push(build(dir, &target));
            touch_one(dir, run);
            incremental.push(build(dir, &target));
        }
        rows.push((label, median(clean), median(incremental)));
    }
    println!();
    println!("| crate ({TOOLS} tools) | clean build | incremental (one body edited) |");
    println!("|---|---|---|");
    for (label, clean, incremental) in &rows {
        println!("| {label} | {:.2} s | {:.2} s |", clean.as_secs_f64(), incremental.as_secs_f64());
    }
    let (with, without) = (&rows[0], &rows[1]);
    println!(
        "| attribute's cost | +{:.2} s ({:.1} ms per tool) | +{:.2} s |",
        with.1.as_secs_f64() - without.1.as_secs_f64(),
        (with.1.as_secs_f64() - without.1.as_secs_f64()) * 1000.0 / TOOLS as f64,
        with.2.as_secs_f64() - without.2.as_secs_f64()
    );
}

fn cargo(dir: &Path, target: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(dir).env("CARGO_TARGET_DIR", target).env_remove("RUSTFLAGS");
    cmd
}

fn build(dir: &Path, target: &Path) -> Duration {
    let t = Instant::now();
    let out = cargo(dir, target).args(["build", "--quiet"]).output().expect("cargo build");
    assert!(
        out.status.success(),
        "build of {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Edits one function body so the next build is incremental.
fn touch_one(dir: &Path, run: usize) {
    let file = dir.join("src/m0.rs");
    let text = std::fs::read_to_string(&file).expect("read");
    let text = text.replacen("\"t0\"", &format!("\"t0 edit {run}\""), 1);
    std::fs::write(&file, text).expect("write");
}

fn generate(root: &Path, core: &Path, workspace: &Path, with_attr: bool) -> PathBuf {
    let package = if with_attr { "tools_attr" } else { "tools_plain" };
    let dir = root.join(package);
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    let manifest = format!(
        "[package]\nname = \"{package}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nteaagent-core = {{ path = {core:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\
         schemars = {{ version = \"1\", default-features = false, features = [\"derive\", \"std\"] }}\n\n[workspace]\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
    // The workspace's lock file, so both crates build the same dependency versions.
    let _ = std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock"));
    let modules = TOOLS / 10;
    let mut main = String::from("#![allow(dead_code, unused_variables)]\n");
    for m in 0..modules {
        let _ = writeln!(main, "mod m{m};");
        std::fs::write(dir.join(format!("src/m{m}.rs")), module(m, with_attr)).expect("module");
    }
    main.push_str("\nfn main() {\n");
    if with_attr {
        main.push_str("    let registry = teaagent_core::Registry::builder().registered().build().expect(\"registry\");\n");
        let _ = writeln!(main, "    assert_eq!(registry.len(), {TOOLS});");
    } else {
        for m in 0..modules {
            let _ = writeln!(main, "    m{m}::touch();");
        }
    }
    main.push_str("}\n");
    std::fs::write(dir.join("src/main.rs"), main).expect("main");
    dir
}

/// Ten tools of varied shapes; without the attribute, the same functions (no parameter docs,
/// which only the attribute may consume) plus a function that uses them.
fn module(m: usize, with_attr: bool) -> String {
    let doc = |text: &str| if with_attr { format!("        /// {text}\n") } else { String::new() };
    let mut s = String::from(
        "use schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\nuse teaagent_core::{Json, ToolContext, ToolError, tool};\n\n\
         #[derive(Deserialize, Serialize, JsonSchema)]\npub struct Item {\n    /// A name.\n    pub name: String,\n    /// A count.\n    pub count: u32,\n}\n\n",
    );
    if !with_attr {
        s = s.replace("tool};", "};");
    }
    let mut names = Vec::new();
    for i in 0..10 {
        let n = m * 10 + i;
        let attr = match (with_attr, i % 3) {
            (false, _) => String::new(),
            (true, 0) => "#[tool(read_only, idempotent)]\n".into(),
            (true, 1) => "#[tool(destructive, tier = \"medium\")]\n".into(),
            (true, _) => "#[tool(rate_limit(max_calls = 5, window_secs = 60))]\n".into(),
        };
        let body = match i % 4 {
            0 => format!(
                "pub async fn tool_{n}(\n    ctx: &ToolContext,\n{}    text: String,\n{}    limit: Option<u32>,\n) -> Result<String, ToolError> {{\n    Ok(format!(\"{{}} {{text}} {{limit:?}} {{}}\", \"t{i}\", ctx.tool()))\n}}\n",
                doc("The text."),
                doc("At most this many.")
            ),
            1 => format!(
                "pub fn tool_{n}(\n{}    items: Vec<Item>,\n{}    flag: bool,\n) -> Json<Item> {{\n    Json(Item {{ name: format!(\"t{i} {{flag}}\"), count: items.len() as u32 }})\n}}\n",
                doc("Items."),
                doc("A flag.")
            ),
            2 => format!(
                "pub async fn tool_{n}(\n{}    path: String,\n{}    depth: Option<u8>,\n{}    tags: Vec<String>,\n) -> String {{\n    format!(\"t{i} {{path}} {{depth:?}} {{}}\", tags.len())\n}}\n",
                doc("A path."),
                doc("A depth."),
                doc("Tags.")
            ),
            _ => format!(
                "pub fn tool_{n}(\n{}    item: Item,\n) -> String {{\n    format!(\"t{i} {{}}\", item.name)\n}}\n",
                doc("An item.")
            ),
        };
        let _ = write!(s, "/// Tool number {n}.\n{attr}{body}\n");
        names.push(n);
    }
    if !with_attr {
        s.push_str("pub fn touch() {\n");
        for n in names {
            let _ = writeln!(s, "    let _ = tool_{n} as usize;");
        }
        s.push_str("}\n");
    }
    // The first function's marker string "t0" is what `touch_one` edits.
    s
}
