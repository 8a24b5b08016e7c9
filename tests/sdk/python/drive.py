#!/usr/bin/env python3
"""Drive a teaagent server with the official MCP Python SDK (`mcp` on PyPI).

    drive.py --client NAME --transport stdio|http --era auto|legacy --scenario SCENARIO \
        (--url URL | -- SERVER_CMD...)

Scenarios:
  serve            `teaagent mcp serve --root ROOT --permission-mode allow`: every built-in tool,
                   resources, argument errors (ROOT holds notes.txt, src/lib.rs, docs/guide.md)
  prompt-approval  `... --permission-mode prompt`: create_file approved through elicitation
  cancel           `... --permission-mode allow`: shell_exec `sleep` abandoned after ~1 s
  notes            the `notes` example server (TEAAGENT_GRANTS=delete_note)
  author           the tests' `author` server: `profile` (a Json<T> with optional, skipped,
                   defaulted, flattened and enum fields) validated by the SDK, and `mislabeled`
                   (output that breaks its own schema) surfaced as a clear isError

Eras: `auto` is the SDK's default (`Client(mode="auto")`: a `server/discover` probe at the newest
modern version, 2026-07-28, falling back to `initialize` on an error); `legacy` forces the
`initialize` handshake (`Client(mode="legacy")`, offering 2025-11-25). `--expect-version V`
additionally fails the run unless V was negotiated.

Prints `ok CLIENT TRANSPORT ERA SCENARIO: N steps, protocol V` and exits 0, or prints
`FAIL CLIENT TRANSPORT ERA SCENARIO step STEP: ERROR` to stderr and exits 1 at the first failure.
With --verbose every step is logged to stderr. The server's stderr (stdio) is inherited, so the
FAIL line is the last line the driver writes. The spawned server gets this process's whole
environment (the SDK's default passes only HOME, PATH and a few others).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

SCENARIOS = ("serve", "prompt-approval", "cancel", "notes", "author")
STEP_TIMEOUT = 30.0  # seconds for any one step
OVERALL_TIMEOUT = 180.0  # seconds for the whole run, connection and teardown included

BUILTIN_TOOLS = (
    "read_file",
    "list_directory",
    "find_files",
    "search_text",
    "file_info",
    "create_file",
    "write_file",
    "edit_file",
    "move_path",
    "delete_path",
    "shell_exec",
)
NOTES_TOOLS = ("add_note", "list_notes", "read_note", "search_notes", "delete_note")

NOTES_TXT = "needle on the first line\nsecond line\nthird line\nneedle on the last line\n"


class StepFailed(Exception):
    def __init__(self, step: str, text: str) -> None:
        super().__init__(step, text)
        self.step = step
        self.text = text


class Check(Exception):
    """An expectation of the driver that the server's answer did not meet."""


def describe(exc: BaseException) -> str:
    """One line for an exception: MCP errors with code and data, groups unwrapped."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        text = f"MCPError {exc.code}: {exc.message}"
        if exc.data is not None:
            text += f" data={json.dumps(exc.data, default=str)}"
        return text
    if isinstance(exc, Check):
        return str(exc)
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}".replace("\n", " | ")


def texts(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def everything(result: types.CallToolResult) -> str:
    """The text blocks and the structured content, to look for expected substrings in."""
    return texts(result) + "\n" + json.dumps(result.structured_content)


def short(value: Any, limit: int = 600) -> str:
    if isinstance(value, types.CallToolResult):
        value = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Check(message)


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.steps = 0
        self.protocol = "?"
        self.elicitations: list[types.ElicitRequestParams] = []
        self.notes: list[str] = []
        self.failed = False

    def fail(self, step: str, text: str) -> StepFailed:
        """Print the FAIL line at once (teardown may still write the server's logs after it)."""
        if not self.failed:
            self.failed = True
            a = self.args
            print(f"FAIL {a.client} {a.transport} {a.era} {a.scenario} step {step}: {text}", file=sys.stderr, flush=True)
        return StepFailed(step, text)

    def log(self, message: str) -> None:
        if self.args.verbose:
            print(f"[drive] {message}", file=sys.stderr, flush=True)

    async def step(self, name: str, body: Callable[[], Awaitable[Any]], timeout: float = STEP_TIMEOUT) -> Any:
        started = time.monotonic()
        try:
            with anyio.fail_after(timeout):
                value = await body()
        except StepFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure ends the run with its text
            if isinstance(exc, TimeoutError) and time.monotonic() - started >= timeout - 0.01:
                raise self.fail(name, f"no answer within {timeout:.0f} s") from exc
            raise self.fail(name, describe(exc)) from exc
        self.steps += 1
        self.log(f"step {name}: ok in {time.monotonic() - started:.2f} s")
        return value

    # -- tool-call helpers ------------------------------------------------------------------

    async def call(self, client: Client, tool: str, arguments: dict[str, Any], **kw: Any) -> types.CallToolResult:
        """A call that must succeed (the SDK has already checked structured content against the
        tool's outputSchema when it returns)."""
        result = await client.call_tool(tool, arguments, **kw)
        expect(not result.is_error, f"{tool} answered isError: {short(texts(result))}")
        self.log(f"  {tool} -> {short(result, 300)}")
        return result

    async def call_error(self, client: Client, tool: str, arguments: dict[str, Any]) -> str:
        """A call that must fail, as an isError result or an MCP error; returns which."""
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as exc:
            how = f"MCP error {exc.code}: {exc.message}"
        else:
            expect(result.is_error, f"{tool} {json.dumps(arguments)} succeeded: {short(result)}")
            how = f"isError result: {short(texts(result), 200)}"
        self.notes.append(f"{tool} {json.dumps(arguments)} -> {how}")
        self.log(f"  {tool} {json.dumps(arguments)} -> {how}")
        return how

    # -- connection -------------------------------------------------------------------------

    def client(self) -> Client:
        args = self.args
        server: StdioServerParameters | str
        if args.transport == "stdio":
            server = StdioServerParameters(command=args.server_cmd[0], args=args.server_cmd[1:], env=dict(os.environ))
        else:
            server = args.url
        callback = self.on_elicit if args.scenario == "prompt-approval" else None
        return Client(
            server,
            mode="legacy" if args.era == "legacy" else "auto",
            client_info=types.Implementation(name=args.client, version="drive.py"),
            elicitation_callback=callback,
        )

    async def on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.elicitations.append(params)
        self.log(f"  elicitation: {short(params.model_dump(by_alias=True, mode='json'), 400)}")
        return types.ElicitResult(action="accept", content={"decision": "once"})

    def check_era(self, client: Client) -> None:
        self.protocol = client.protocol_version
        if self.args.era == "legacy":
            expect(self.protocol in HANDSHAKE_PROTOCOL_VERSIONS, f"legacy era negotiated {self.protocol}")
            expect(client.session.initialize_result is not None, "legacy era without an initialize result")
        else:
            # auto: whatever the SDK settles on; report it (teaagent offers 2026-07-28).
            expect(
                self.protocol in MODERN_PROTOCOL_VERSIONS or self.protocol in HANDSHAKE_PROTOCOL_VERSIONS,
                f"unknown protocol {self.protocol}",
            )
        if self.args.expect_version:
            expect(self.protocol == self.args.expect_version, f"negotiated {self.protocol}, expected {self.args.expect_version}")
        info = client.server_info
        self.log(f"connected: protocol {self.protocol}, server {info.name if info else None} {info.version if info else ''}")

    async def main(self) -> None:
        client = self.client()
        connected = False
        try:
            # One deadline for everything: the client's task groups are entered in its
            # __aenter__ and left in its __aexit__, so no cancel scope may sit between them.
            with anyio.fail_after(OVERALL_TIMEOUT):
                async with client:
                    connected = True
                    try:
                        self.check_era(client)
                    except Exception as exc:  # noqa: BLE001
                        raise self.fail("connect", describe(exc)) from exc
                    self.steps += 1
                    scenario = {
                        "serve": self.serve,
                        "prompt-approval": self.prompt_approval,
                        "cancel": self.cancel,
                        "notes": self.notes_scenario,
                        "author": self.author_scenario,
                    }[self.args.scenario]
                    await scenario(client)
        except StepFailed:
            raise
        except BaseException as exc:
            inner = find_step_failure(exc)
            if inner is not None:
                raise inner from exc
            if isinstance(exc, Exception | BaseExceptionGroup) and not isinstance(exc, KeyboardInterrupt):
                raise self.fail("connect" if not connected else "teardown", describe(exc)) from exc
            raise

    # -- scenarios --------------------------------------------------------------------------

    async def list_tools(self, client: Client, expected: tuple[str, ...]) -> dict[str, types.Tool]:
        listing = await client.list_tools()
        tools = {tool.name: tool for tool in listing.tools}
        missing = [name for name in expected if name not in tools]
        expect(not missing, f"tools/list lacks {missing} (has {sorted(tools)})")
        session = client.session
        for tool in listing.tools:
            expect(tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema type is not object")
            if tool.output_schema is not None:
                try:
                    # The SDK's own compile step (check_schema + validator): what call_tool uses.
                    session._output_schema_validator(tool.name, tool.output_schema)  # noqa: SLF001
                except RuntimeError as exc:
                    raise Check(f"{tool.name}: outputSchema refused by the SDK: {exc}") from exc
        with_schema = sorted(name for name, tool in tools.items() if tool.output_schema is not None)
        self.log(f"  tools: {sorted(tools)}; with outputSchema: {with_schema}")
        return tools

    async def serve(self, client: Client) -> None:
        step, call = self.step, self.call

        await step("tools/list", lambda: self.list_tools(client, BUILTIN_TOOLS))

        async def read_whole() -> None:
            r = await call(client, "read_file", {"path": "notes.txt"})
            out = everything(r)
            for line in ("needle on the first line", "second line", "needle on the last line"):
                expect(line in out, f"read_file notes.txt lacks {line!r}: {short(r)}")

        async def read_range() -> None:
            r = await call(client, "read_file", {"path": "notes.txt", "offset": 2, "limit": 2})
            out = everything(r)
            expect("second line" in out and "third line" in out, f"range lacks lines 2-3: {short(r)}")
            expect("first line" not in out and "last line" not in out, f"range has lines outside 2-3: {short(r)}")

        async def list_directory() -> None:
            r = await call(client, "list_directory", {"path": ".", "depth": 2})
            out = everything(r)
            for path in ("notes.txt", "src/lib.rs", "docs/guide.md"):
                expect(path in out, f"list_directory lacks {path}: {short(r)}")

        async def find_files() -> None:
            r = await call(client, "find_files", {"pattern": "**/*.rs"})
            files = (r.structured_content or {}).get("files") if isinstance(r.structured_content, dict) else None
            expect(files == ["src/lib.rs"] or (files is None and "src/lib.rs" in texts(r)), f"find_files **/*.rs: {short(r)}")

        def matches(r: types.CallToolResult) -> list[dict[str, Any]]:
            sc = r.structured_content
            expect(isinstance(sc, dict) and isinstance(sc.get("matches"), list), f"no structured matches: {short(r)}")
            return sc["matches"]

        async def search_literal() -> None:
            r = await call(client, "search_text", {"pattern": "needle", "literal": True})
            found = sorted((m["path"], m["line"]) for m in matches(r))
            want = [("docs/guide.md", 3), ("notes.txt", 1), ("notes.txt", 4)]
            expect(found == want, f"search_text needle: {found}, expected {want}")

        async def search_context() -> None:
            # Matches on the file's first and last lines: nothing before the first, nothing after
            # the last; each match has its whole context, also where the two overlap.
            r = await call(client, "search_text", {"pattern": "needle", "literal": True, "context": 2, "glob": "notes.txt"})
            ms = matches(r)
            expect([m["line"] for m in ms] == [1, 4], f"context 2 search lines: {short(r)}")
            first, last = ms
            expect(first.get("before", []) == [] and first.get("after") == ["second line", "third line"], f"context 2, first match: {first}")
            expect(last.get("before") == ["second line", "third line"] and last.get("after", []) == [], f"context 2, last match: {last}")
            r = await call(client, "search_text", {"pattern": "needle", "literal": True, "context": 1, "glob": "notes.txt"})
            ms = matches(r)
            expect([m["line"] for m in ms] == [1, 4], f"context 1 search lines: {short(r)}")
            first, last = ms
            expect(first.get("before", []) == [] and first.get("after") == ["second line"], f"context 1, first match: {first}")
            expect(last.get("before") == ["third line"] and last.get("after", []) == [], f"context 1, last match: {last}")

        async def search_regex() -> None:
            r = await call(client, "search_text", {"pattern": r"fn \w+\(\) -> u\d+"})
            found = [(m["path"], m["line"]) for m in matches(r)]
            expect(found == [("src/lib.rs", 1)], f"regex search: {short(r)}")

        async def file_info() -> None:
            r = await call(client, "file_info", {"path": "notes.txt"})
            sc = r.structured_content
            expect(isinstance(sc, dict) and sc.get("kind") == "file" and sc.get("lines") == 4 and sc.get("size") == len(NOTES_TXT),
                   f"file_info notes.txt: {short(r)}")

        async def read_back(path: str, content: str) -> None:
            r = await call(client, "read_file", {"path": path})
            expect(content in everything(r), f"{path} does not hold {content!r}: {short(r)}")

        async def create() -> None:
            await call(client, "create_file", {"path": "made/new.txt", "content": "created by the sdk\n"})
            await read_back("made/new.txt", "created by the sdk")

        async def write() -> None:
            await call(client, "write_file", {"path": "made/new.txt", "content": "alpha\nbeta\n"})
            await read_back("made/new.txt", "alpha\nbeta")

        async def edit() -> None:
            await call(client, "edit_file", {"path": "made/new.txt", "old_text": "beta", "new_text": "gamma"})
            await read_back("made/new.txt", "alpha\ngamma")

        async def move() -> None:
            await call(client, "move_path", {"from": "made/new.txt", "to": "made/moved.txt"})
            r = await call(client, "find_files", {"pattern": "made/*"})
            out = everything(r)
            expect("made/moved.txt" in out and "made/new.txt" not in out, f"after move_path: {short(r)}")

        async def delete() -> None:
            await call(client, "delete_path", {"path": "made/moved.txt"})
            r = await call(client, "find_files", {"pattern": "made/*"})
            expect("made/moved.txt" not in everything(r), f"after delete_path: {short(r)}")

        async def shell() -> None:
            r = await call(client, "shell_exec", {"command": "echo hi"})
            expect("hi" in everything(r), f"shell_exec echo hi: {short(r)}")

        async def resources_list() -> str:
            uris: list[str] = []
            cursor = None
            for _ in range(50):
                page = await client.list_resources(cursor=cursor)
                uris += [str(res.uri) for res in page.resources]
                cursor = page.next_cursor
                if cursor is None:
                    break
            uri = next((u for u in uris if u.endswith("/notes.txt")), None)
            expect(uri is not None, f"resources/list lacks notes.txt: {uris}")
            self.log(f"  resources: {uris}")
            return uri

        async def resources_read(uri: str) -> None:
            r = await client.read_resource(uri)
            got = [c.text for c in r.contents if isinstance(c, types.TextResourceContents)]
            expect(got == [NOTES_TXT], f"resources/read {uri}: {short(r.model_dump(by_alias=True, mode='json'))}")

        await step("read_file", read_whole)
        await step("read_file offset/limit", read_range)
        await step("list_directory", list_directory)
        await step("find_files", find_files)
        await step("search_text literal", search_literal)
        await step("search_text context", search_context)
        await step("search_text regex", search_regex)
        await step("file_info", file_info)
        await step("create_file", create)
        await step("write_file", write)
        await step("edit_file", edit)
        await step("move_path", move)
        await step("delete_path", delete)
        await step("shell_exec", shell)
        uri = await step("resources/list", resources_list)
        await step("resources/read", lambda: resources_read(uri))
        await step("bad arguments: wrong type", lambda: self.call_error(client, "read_file", {"path": 5}))
        await step("bad arguments: missing", lambda: self.call_error(client, "read_file", {}))
        await step("missing file", lambda: self.call_error(client, "read_file", {"path": "no/such/file.txt"}))

    async def prompt_approval(self, client: Client) -> None:
        await self.step("tools/list", lambda: self.list_tools(client, BUILTIN_TOOLS))

        async def create() -> None:
            await self.call(client, "create_file", {"path": "approved.txt", "content": "approved by elicitation\n"})
            expect(len(self.elicitations) >= 1, "create_file ran without the elicitation callback being invoked")

        async def read_back() -> None:
            r = await self.call(client, "read_file", {"path": "approved.txt"})
            expect("approved by elicitation" in everything(r), f"approved.txt: {short(r)}")

        await self.step("create_file approved", create)
        await self.step("created file exists", read_back)

    async def cancel(self, client: Client) -> None:
        await self.step("tools/list", lambda: self.list_tools(client, BUILTIN_TOOLS))
        # A duration unique to this run, to find the process it starts.
        marker = f"30.{os.getpid()}"

        async def abandon(how: str) -> None:
            started = time.monotonic()
            if how == "timeout":
                # The SDK's per-request timeout: MCPError REQUEST_TIMEOUT, and a courtesy
                # notifications/cancelled (or, on modern HTTP, the request's POST aborted).
                try:
                    r = await client.call_tool("shell_exec", {"command": f"sleep {marker}"}, read_timeout_seconds=1.0)
                except MCPError as exc:
                    expect(exc.code == types.REQUEST_TIMEOUT, f"expected a request timeout, got {describe(exc)}")
                else:
                    raise Check(f"sleep answered within the timeout: {short(r)}")
            else:
                # The caller's own cancel scope.
                answer: Any = None
                with anyio.move_on_after(1.0) as scope:
                    answer = await client.call_tool("shell_exec", {"command": f"sleep {marker}"})
                expect(scope.cancelled_caught, f"sleep answered within the cancel scope: {short(answer)}")
            elapsed = time.monotonic() - started
            expect(elapsed < 10, f"control came back after {elapsed:.1f} s")
            self.log(f"  control back after {elapsed:.2f} s")

        async def sleep_gone() -> None:
            # The server runs on this machine: its `sleep` must be killed once the call is cancelled.
            deadline = time.monotonic() + 8
            while True:
                alive = [pid for pid, cmd in processes() if marker in cmd]
                if not alive:
                    return
                if time.monotonic() > deadline:
                    raise Check(f"`sleep {marker}` still running 8 s after the cancel (pids {alive})")
                await anyio.sleep(0.2)

        async def still_works() -> None:
            r = await self.call(client, "read_file", {"path": "notes.txt", "limit": 1})
            expect("needle on the first line" in everything(r), f"read_file after cancel: {short(r)}")

        await self.step("cancel by request timeout", lambda: abandon("timeout"))
        await self.step("read_file after cancel", still_works)
        await self.step("sleep killed", sleep_gone)
        await self.step("cancel by cancel scope", lambda: abandon("scope"))
        await self.step("read_file after second cancel", still_works)
        await self.step("second sleep killed", sleep_gone)

    async def notes_scenario(self, client: Client) -> None:
        call = self.call
        await self.step("tools/list", lambda: self.list_tools(client, NOTES_TOOLS))

        async def add() -> None:
            r = await call(client, "add_note", {"title": "groceries", "text": "Buy Oat milk and bread"})
            expect("added" in everything(r), f"add_note: {short(r)}")
            r = await call(client, "add_note", {"title": "todo", "text": "write the sdk tests"})
            expect("added" in everything(r), f"add_note: {short(r)}")
            r = await call(client, "add_note", {"title": "todo", "text": "run the sdk tests"})
            expect("replaced" in everything(r), f"add_note again: {short(r)}")

        async def list_notes() -> None:
            r = await call(client, "list_notes", {})
            expect("groceries\ntodo" in everything(r), f"list_notes: {short(r)}")

        async def read() -> None:
            r = await call(client, "read_note", {"title": "todo"})
            expect("run the sdk tests" in everything(r), f"read_note: {short(r)}")

        async def search() -> None:
            r = await call(client, "search_notes", {"word": "OAT"})
            out = texts(r)
            expect("groceries" in out and "todo" not in out, f"search_notes OAT: {short(r)}")

        async def delete() -> None:
            r = await call(client, "delete_note", {"title": "groceries"})
            expect("deleted" in everything(r), f"delete_note: {short(r)}")
            r = await call(client, "list_notes", {})
            expect("groceries" not in everything(r), f"list_notes after delete: {short(r)}")

        await self.step("add_note", add)
        await self.step("list_notes", list_notes)
        await self.step("read_note", read)
        await self.step("search_notes", search)
        await self.step("delete_note", delete)
        await self.step("read_note deleted", lambda: self.call_error(client, "read_note", {"title": "groceries"}))
        await self.step("bad arguments", lambda: self.call_error(client, "add_note", {"title": ""}))


    async def author_scenario(self, client: Client) -> None:
        call = self.call

        async def profile(full: bool) -> None:
            r = await call(client, "profile", {"full": full})
            data = r.structured_content or {}
            expect(data.get("name") == "Ada" and data.get("city") == "London", f"profile: {short(r)}")
            expect(("nickname" in data) == full and ("tags" in data) == full, f"profile full={full}: {short(r)}")

        async def mislabeled() -> None:
            # The server never sends output that breaks its own schema: a clear isError instead,
            # which the SDK hands over as a result (it validates only results that are not errors).
            r = await client.call_tool("mislabeled", {})
            text = texts(r)
            expect(r.is_error and r.structured_content is None, f"mislabeled: {short(r)}")
            for part in ("mislabeled", "outputSchema", "/count", "Likely cause"):
                expect(part in text, f"mislabeled: {part!r} not in {text!r}")

        await self.step("tools/list", lambda: self.list_tools(client, ("profile", "mislabeled")))
        await self.step("profile bare", lambda: profile(False))
        await self.step("profile full", lambda: profile(True))
        await self.step("mislabeled", mislabeled)


def find_step_failure(exc: BaseException) -> StepFailed | None:
    if isinstance(exc, StepFailed):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := find_step_failure(inner)) is not None:
                return found
    return None


def processes() -> list[tuple[int, str]]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            out.append((int(entry), cmd))
    return out


def parse(argv: list[str]) -> argparse.Namespace:
    server_cmd: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, server_cmd = argv[:at], argv[at + 1 :]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--client", default="python-sdk", help="label for the output lines")
    p.add_argument("--transport", choices=("stdio", "http"), required=True)
    p.add_argument("--era", choices=("auto", "legacy"), required=True)
    p.add_argument("--scenario", choices=SCENARIOS, required=True)
    p.add_argument("--url", help="the server's endpoint (http), e.g. http://127.0.0.1:8787/mcp")
    p.add_argument("--expect-version", help="fail unless this protocol version is negotiated")
    p.add_argument("--verbose", action="store_true", help="log every step to stderr")
    args = p.parse_args(argv)
    args.server_cmd = server_cmd
    if args.transport == "stdio" and (not server_cmd or args.url):
        p.error("stdio needs `-- SERVER_CMD...` and no --url")
    if args.transport == "http" and (not args.url or server_cmd):
        p.error("http needs --url and no SERVER_CMD")
    return args


def main() -> int:
    args = parse(sys.argv[1:])
    run = Run(args)
    started = time.monotonic()
    try:
        anyio.run(run.main)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a crash outside any step still gets a FAIL line
        if not run.failed:
            run.fail("driver", describe(exc))
        return 1
    for note in run.notes:
        run.log(f"note: {note}")
    run.log(f"elicitations: {len(run.elicitations)}; {time.monotonic() - started:.2f} s")
    print(f"ok {args.client} {args.transport} {args.era} {args.scenario}: {run.steps} steps, protocol {run.protocol}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
