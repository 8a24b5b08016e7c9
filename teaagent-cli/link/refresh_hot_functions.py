"""Rewrites hot-functions.txt: the functions `teaagent mcp serve` runs from its start to its
first answers, which teaagent-cli/build.rs asks lld to place together at the start of `.text`
(see that file for why).

    python3 teaagent-cli/link/refresh_hot_functions.py

Needs valgrind and nm (binutils). It builds `teaagent` as the README's install does
(`--profile dist`), serves a scratch workspace under callgrind for one session (the handshake,
`tools/list`, `resources/list`, and each read-only built-in tool once), maps every instruction
run inside `teaagent` to the function that holds it, and writes those functions' mangled names in
the order of their addresses.

The names carry hashes of the build's inputs: the toolchain, every dependency's version and
features, and the profile's settings. Change any of them and most names change, and the linker
skips the names it no longer finds, silently. So the list's second line records a SHA-256 of the
files those inputs are read from (`INPUTS`), and a test (`tests/cli.rs`) fails when they no
longer match: run this script again then.
"""
import bisect
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "hot-functions.txt")

# The files the symbol names' hashes derive from, relative to the workspace (the test suite's
# crate, `tests/`, is not built into `teaagent`).
INPUTS = [
    "rust-toolchain.toml",
    "Cargo.lock",
    "Cargo.toml",
    "teaagent-macros/Cargo.toml",
    "teaagent-core/Cargo.toml",
    "teaagent-cli/Cargo.toml",
]

SESSION = [
    ("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "refresh", "version": "0"}}),
    ("notifications/initialized", None),
    ("tools/list", {}),
    ("resources/list", {}),
    ("tools/call", {"name": "read_file", "arguments": {"path": "src/main.rs"}}),
    ("tools/call", {"name": "list_directory", "arguments": {"path": "."}}),
    ("tools/call", {"name": "find_files", "arguments": {"pattern": "*.rs"}}),
    ("tools/call", {"name": "search_text", "arguments": {"pattern": "main"}}),
    ("tools/call", {"name": "file_info", "arguments": {"path": "README.md"}}),
]


def build():
    subprocess.run(
        ["cargo", "build", "--profile", "dist", "--locked", "-p", "teaagent-cli"], cwd=WORKSPACE, check=True
    )
    return os.path.join(WORKSPACE, "target", "dist", "teaagent")


def serve_once(binary, scratch):
    """One session of `teaagent mcp serve` under callgrind; returns its profile's path."""
    root = os.path.join(scratch, "root")
    os.makedirs(os.path.join(root, "src"))
    with open(os.path.join(root, "src", "main.rs"), "w") as f:
        f.write('fn main() {\n    println!("hello");\n}\n')
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write("# scratch\n\nA workspace for one profiled session.\n")
    profile = os.path.join(scratch, "callgrind.out")
    env = dict(os.environ, TEAAGENT_HOME=os.path.join(scratch, "home"))
    cmd = [
        "valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no",
        f"--callgrind-out-file={profile}", binary, "mcp", "serve", "--root", root,
    ]
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    waiting = set()
    for i, (method, params) in enumerate(SESSION):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not method.startswith("notifications/"):
            message["id"] = i
            waiting.add(i)
        server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
    # Every answer read before stdin closes, so each request ran to its end.
    timer = threading.Timer(300, server.kill)
    timer.start()
    for line in server.stdout:
        answer = json.loads(line)
        if "error" in answer:
            sys.exit(f"request {answer.get('id')} failed: {answer['error']}")
        waiting.discard(answer.get("id"))
        if not waiting:
            break
    server.stdin.close()
    server.wait()
    timer.cancel()
    if waiting:
        sys.exit(f"no answer to requests {sorted(waiting)}")
    return profile


def functions(binary):
    """(start, end, name) of every defined function, sorted by address."""
    listing = subprocess.run(
        ["nm", "--defined-only", "--print-size", binary], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            start, size = int(parts[0], 16), int(parts[1], 16)
            found.append((start, start + size, parts[3]))
    return sorted(found)


def executed(profile, binary):
    """The addresses of the instructions callgrind saw run inside `binary`."""
    addresses, current = set(), None
    with open(profile) as f:
        for line in f:
            if line.startswith("ob="):
                current = line[3:].strip()
            elif line.startswith("0x") and current == binary:
                addresses.add(int(line.split()[0], 16))
    return addresses


def fingerprint():
    """SHA-256 over each input's path and contents, in `INPUTS` order (see `tests/cli.rs`)."""
    digest = hashlib.sha256()
    for path in INPUTS:
        with open(os.path.join(WORKSPACE, path), "rb") as f:
            digest.update(path.encode() + b"\0" + f.read() + b"\0")
    return digest.hexdigest()


def main():
    binary = build()
    with tempfile.TemporaryDirectory() as scratch:
        profile = serve_once(binary, scratch)
        addresses = executed(profile, os.path.realpath(binary))
    table = functions(binary)
    starts = [start for start, _, _ in table]
    hot, outside = set(), 0
    for address in addresses:
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and table[i][0] <= address < max(table[i][1], table[i][0] + 1):
            hot.add(i)
        else:
            outside += 1
    # A profile whose addresses do not fall in the binary's functions was read wrong.
    if not hot or outside > len(addresses) // 100:
        sys.exit(f"{outside} of {len(addresses)} addresses are in no function of {binary}")
    names = [table[i][2] for i in sorted(hot)]
    with open(OUT, "w") as f:
        f.write("# Written by refresh_hot_functions.py; read by ../build.rs. Do not edit by hand.\n")
        f.write(f"# Inputs: {' '.join(INPUTS)} sha256:{fingerprint()}\n")
        f.write("\n".join(names) + "\n")
    print(f"{len(names)} functions written to {OUT}")


if __name__ == "__main__":
    main()
