//! Submodules' git data against `shell_exec` commands in the sandbox, with the real binary and
//! the real `git`: `git status` enters every checked-out submodule and runs git there with the
//! configuration its `.git` leads to, so a command that points a submodule's `.git` at a git
//! directory of its own (here `evil/g`, files any cloned repository can carry, configured with
//! a `core.fsmonitor` program) would have the user's next `git status` run that program, outside
//! any sandbox.
//!
//! Each attack runs in a workspace with a checked-out submodule (`lib/sub`) holding one of its
//! own (`lib/sub/inner`), an unpopulated one (`vendor/empty`, deinitialized) and one whose
//! directory the user removed (`gone`). In `allow` mode it must fail and the user's `git
//! status` run nothing; in `danger-full-access` (no sandbox) the same command must make `git
//! status` run the program, which is what makes each case able to fail.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;
use teaagent_tests::{Bin, Tree};

struct Workspace {
    tree: Tree,
    home: Tree,
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository at `dir` with one committed file.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("file.txt"), "x\n").expect("file");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

impl Workspace {
    fn new() -> Self {
        let (tree, home) = (Tree::new(), Tree::new());
        home.write("config.toml", "");
        let upstream = |name: &str| {
            let dir = tree.path(name);
            repository(&dir);
            dir.display().to_string()
        };
        let inner = upstream("inner-upstream");
        let outer = upstream("outer-upstream");
        git(Path::new(&outer), &["submodule", "add", "-q", &inner, "inner"]);
        git(Path::new(&outer), &["commit", "-q", "-m", "inner"]);
        let other = upstream("other-upstream");
        let root = tree.root();
        git(&root, &["init", "-q"]);
        git(&root, &["submodule", "add", "-q", &outer, "lib/sub"]);
        git(&root, &["submodule", "update", "-q", "--init", "--recursive"]);
        for path in ["vendor/empty", "gone"] {
            git(&root, &["submodule", "add", "-q", &other, path]);
        }
        git(&root, &["commit", "-q", "-m", "submodules"]);
        for path in ["vendor/empty", "gone"] {
            git(&root, &["submodule", "deinit", "-q", "-f", path]);
        }
        std::fs::remove_dir(root.join("gone")).expect("the user removes an unpopulated submodule");
        // A git directory of the attacker's, as files a repository can carry.
        git(&root, &["init", "-q", "--bare", "evil/g"]);
        Workspace { tree, home }
    }

    /// Another workspace like this one (the submodules' `.git` files and their configuration
    /// name their git directories and work trees relatively), its `evil/g` configured to run
    /// the marker program: in the real attack the command writes that configuration too; here
    /// it is there beforehand, so that each case is about the submodule alone.
    fn copy(&self) -> Workspace {
        let (tree, home) = (Tree::new(), Tree::new());
        home.write("config.toml", "");
        std::fs::remove_dir_all(tree.root()).expect("an empty workspace");
        let out = Command::new("cp").arg("-a").arg(self.tree.root()).arg(tree.root()).output().expect("cp");
        assert!(out.status.success(), "cp: {}", String::from_utf8_lossy(&out.stderr));
        let copy = Workspace { tree, home };
        let config = format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch {}; false\"\n",
            copy.marker().display()
        );
        std::fs::write(copy.tree.root().join("evil/g/config"), config).expect("config");
        copy
    }

    /// Where the program the attacker configured leaves its mark when it runs.
    fn marker(&self) -> PathBuf {
        self.tree.path("outside/ran")
    }

    fn run(&self, mode: &str, command: &str) -> Output {
        self.run_tool("", mode, "shell_exec", json!({ "command": command }))
    }

    /// `teaagent run TOOL` with the workspace's `root` (its path in the repository: "" for the
    /// repository's own).
    fn run_tool(&self, root: &str, mode: &str, tool: &str, args: serde_json::Value) -> Output {
        Command::new(Bin::Teaagent.path())
            .args(["run", tool, "--args", &args.to_string()])
            .args(["--json", "--permission-mode", mode, "--root"])
            .arg(self.tree.root().join(root))
            .env("TEAAGENT_HOME", self.home.base())
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .output()
            .expect("run teaagent")
    }

    /// The user's next `git status`: whether it ran the attacker's program.
    fn status_runs_the_program(&self) -> bool {
        let out = Command::new("git").args(["status", "--short"]).current_dir(self.tree.root()).output();
        let _ = out.expect("git status");
        self.marker().exists()
    }
}

fn succeeded(out: &Output) -> bool {
    out.status.success() && String::from_utf8_lossy(&out.stdout).contains("exit code: 0")
}

fn describe(out: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Every way a command could put a `.git` of its own where git looks for a submodule's.
const ATTACKS: [(&str, &str); 7] = [
    ("overwrite a checked-out submodule's .git", "echo 'gitdir: ../../evil/g' > lib/sub/.git"),
    (
        "move the checkout away and make another",
        "mv lib/sub lib/old && mkdir lib/sub && echo 'gitdir: ../../evil/g' > lib/sub/.git",
    ),
    (
        "move a directory that holds the checkout",
        "mv lib lib-old && mkdir -p lib/sub && echo 'gitdir: ../../evil/g' > lib/sub/.git",
    ),
    ("overwrite a nested submodule's .git", "echo 'gitdir: ../../../evil/g' > lib/sub/inner/.git"),
    ("populate an unpopulated submodule", "echo 'gitdir: ../../evil/g' > vendor/empty/.git"),
    (
        "remove an unpopulated submodule's directory and make another",
        "rmdir vendor/empty && mkdir vendor/empty && echo 'gitdir: ../../evil/g' > vendor/empty/.git",
    ),
    (
        "make the directory of a submodule the user removed",
        "mkdir gone && echo 'gitdir: ../evil/g' > gone/.git",
    ),
];

#[test]
fn no_command_can_make_git_status_enter_a_submodule_of_its_own() {
    let template = Workspace::new();
    let mut failures = Vec::new();
    for (attack, command) in ATTACKS {
        let sandboxed = template.copy();
        let out = sandboxed.run("allow", command);
        if succeeded(&out) || sandboxed.status_runs_the_program() {
            failures.push(format!("{attack}: the command got through: {}", describe(&out)));
        }
        let unsandboxed = template.copy();
        let out = unsandboxed.run("danger-full-access", command);
        if !succeeded(&out) || !unsandboxed.status_runs_the_program() {
            failures
                .push(format!("{attack}: the attack itself does nothing unsandboxed: {}", describe(&out)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a build or an edit does in a workspace with submodules still works: writing in a
/// submodule's checkout and beside it, making and renaming directories within a directory that
/// holds one, and renaming across its boundary (which `mv` does by copying).
#[test]
fn commands_still_write_in_and_around_submodules() {
    let workspace = Workspace::new().copy();
    let root = workspace.tree.root();
    let out = workspace.run(
        "allow",
        "echo edit >> lib/sub/file.txt && echo new > lib/sub/inner/new.txt && mkdir -p lib/build/a && \
         mv lib/build/a lib/build/b && echo y > vendor/notes.txt && mv vendor/notes.txt notes.txt && \
         git -C lib/sub status --short > status.txt",
    );
    assert!(succeeded(&out), "{}", describe(&out));
    assert_eq!(std::fs::read_to_string(root.join("lib/sub/file.txt")).expect("edited"), "x\nedit\n");
    assert!(root.join("lib/sub/inner/new.txt").exists() && root.join("lib/build/b").is_dir());
    assert!(root.join("notes.txt").exists() && !root.join("vendor/notes.txt").exists());
    assert!(std::fs::read_to_string(root.join("status.txt")).expect("status").contains("file.txt"));
    // The directory of the removed submodule is back, empty, as `git clone` leaves one.
    assert_eq!(std::fs::read_dir(root.join("gone")).expect("gone/").count(), 0);
}

/// A submodule's path that is a symbolic link (the link itself could be replaced, and no mount
/// keeps it) refuses every command, saying why, rather than run one unprotected.
#[test]
fn a_submodule_path_that_is_a_link_refuses_commands_and_says_why() {
    let workspace = Workspace::new().copy();
    let root = workspace.tree.root();
    std::fs::remove_dir(root.join("vendor/empty")).expect("the unpopulated submodule");
    std::os::unix::fs::symlink("../lib", root.join("vendor/empty")).expect("a link in its place");
    let out = workspace.run("allow", "echo ran > ran.txt");
    assert!(!succeeded(&out) && !root.join("ran.txt").exists(), "{}", describe(&out));
    assert!(describe(&out).contains("is a symbolic link"), "{}", describe(&out));
    // A link in place of a directory that leads to one, too.
    std::fs::remove_file(root.join("vendor/empty")).expect("the link");
    std::fs::create_dir(root.join("vendor/empty")).expect("the directory again");
    std::fs::rename(root.join("vendor"), root.join("vendor-real")).expect("move vendor/");
    std::os::unix::fs::symlink("vendor-real", root.join("vendor")).expect("a link in its place");
    let out = workspace.run("allow", "echo ran > ran.txt");
    assert!(!succeeded(&out) && !root.join("ran.txt").exists(), "{}", describe(&out));
    assert!(describe(&out).contains("leads through the symbolic link"), "{}", describe(&out));
}

/// A workspace that is a directory of the repository (a package of a monorepo): the
/// submodules beneath it are the repository's, and stay protected the same.
#[test]
fn a_workspace_inside_the_repository_keeps_its_submodules_too() {
    let template = Workspace::new();
    let command = json!({ "command": "echo 'gitdir: ../../evil/g' > sub/.git" });
    let sandboxed = template.copy();
    let out = sandboxed.run_tool("lib", "allow", "shell_exec", command.clone());
    assert!(!succeeded(&out) && !sandboxed.status_runs_the_program(), "{}", describe(&out));
    let unsandboxed = template.copy();
    let out = unsandboxed.run_tool("lib", "danger-full-access", "shell_exec", command);
    assert!(succeeded(&out) && unsandboxed.status_runs_the_program(), "{}", describe(&out));
}

/// The built-in tools run outside the sandbox: `move_path` moves no submodule, nor any
/// directory that holds one, and moves nothing into a submodule's place, so a directory with a
/// `.git` of a command's making (`staging/`, which nothing protects) cannot become one.
#[test]
fn move_path_moves_no_submodule_and_nothing_into_ones_place() {
    let workspace = Workspace::new().copy();
    let root = workspace.tree.root();
    std::fs::create_dir(root.join("staging")).expect("staging");
    std::fs::write(root.join("staging/.git"), "gitdir: ../evil/g\n").expect("a .git of its own");
    for (from, to) in
        [("staging", "gone"), ("lib/sub", "elsewhere"), ("lib", "lib-old"), ("vendor/empty", "x")]
    {
        let out = workspace.run_tool("", "allow", "move_path", json!({ "from": from, "to": to }));
        let said = describe(&out);
        assert!(said.contains("submodule") && said.contains("nothing was moved"), "{from} -> {to}: {said}");
        assert!(root.join(from).exists() && !root.join(to).exists(), "{from} -> {to} moved");
    }
    assert!(!workspace.status_runs_the_program());
    // Other moves still work, into a checkout too.
    for (from, to) in [("src", "source"), ("staging", "lib/sub/staging")] {
        let out = workspace.run_tool("", "allow", "move_path", json!({ "from": from, "to": to }));
        assert!(out.status.success() && root.join(to).exists(), "{from} -> {to}: {}", describe(&out));
    }
}
