//! The binary: where it is, its version, and whether the `teaagent` on `PATH` is this one.

use super::{Finding, shown};

pub(super) fn check(findings: &mut Vec<Finding>) {
    let version = env!("CARGO_PKG_VERSION");
    let me = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(path) => path,
        Err(e) => {
            findings.push(
                Finding::error("binary", "teaagent", format!("cannot tell where this binary is: {e}"))
                    .fix("run teaagent by its full path"),
            );
            return;
        }
    };
    findings.push(Finding::ok("binary", shown(&me), format!("teaagent {version}")));
    let on_path = std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).map(|dir| dir.join("teaagent")).find(|p| p.is_file()));
    match on_path {
        None => findings.push(
            Finding::warning("binary", "PATH", "no `teaagent` on PATH: clients need its full path")
                .fix("`teaagent mcp install CLIENT` writes the full path; or `cargo install --locked --profile dist --path teaagent-cli`"),
        ),
        Some(found) => {
            let same = std::fs::canonicalize(&found).is_ok_and(|p| p == me);
            if !same {
                findings.push(
                    Finding::warning(
                        "binary",
                        "PATH",
                        format!("the `teaagent` on PATH is {}, not this one", shown(&found)),
                    )
                    .fix("clients that start `teaagent` by name run that one; install this one over it, or use full paths"),
                );
            }
        }
    }
}
