//! A raw HTTP/1.1 client for the end-to-end tests of Streamable HTTP (tests/http_*.rs,
//! tests/oauth_*.rs, tests/fleet_*.rs, tests/shared_state.rs): a server binary on a free loopback
//! port, one exchange per connection, the headers and `_meta` a conforming client of protocol
//! 2026-07-28 sends, and a POST whose answer is read as it streams.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};

/// A server listening on a free loopback port (or as told).
pub(crate) struct Http {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Http {
    /// `teaagent mcp serve --http 127.0.0.1:0 --root ROOT FLAGS…` with `TEAAGENT_HOME=home`.
    pub(crate) fn teaagent(tree: &Tree, home: &Tree, flags: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(["mcp", "serve", "--root"]).arg(tree.root()).args(flags).env("TEAAGENT_HOME", home.base());
        if !flags.contains(&"--http") {
            cmd.args(["--http", "127.0.0.1:0"]);
        }
        cmd.envs(env.iter().copied());
        Self::start(cmd, "over Streamable HTTP at http://")
    }

    /// The fixture server (its hand-written tools: progress, a call that runs until cancelled).
    pub(crate) fn fixture(home: &Tree) -> Self {
        Self::fixture_with(home, &[])
    }

    /// [`Http::fixture`] with more of its knobs (`tests/bin/fixture`'s docs) set.
    pub(crate) fn fixture_with(home: &Tree, env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(Bin::Fixture.path());
        cmd.env("FIXTURE_HTTP", "127.0.0.1:0").env("FIXTURE_MODE", "allow").env("TEAAGENT_HOME", home.base());
        cmd.envs(env.iter().copied());
        Self::start(cmd, "listening on http://")
    }

    /// The conformance suite's fixture server (tests/bin/conformance: `echo_region`, whose
    /// arguments are mirrored into headers; `json_schema_2020_12_tool`, its schema as written).
    pub(crate) fn conformance() -> Self {
        let mut cmd = Command::new(Bin::Conformance.path());
        cmd.arg("127.0.0.1:0");
        Self::start(cmd, "listening on http://")
    }

    fn start(mut cmd: Command, says: &'static str) -> Self {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("RUST_LOG");
        let mut child = cmd.spawn().expect("start the server");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().expect("stderr"));
        let seen = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.lines() {
                let Ok(line) = line else { return };
                if let Some(at) = line.find(says) {
                    let rest = &line[at + says.len()..];
                    let addr = rest.split('/').next().unwrap_or_default().to_owned();
                    let _ = tx.send(addr);
                }
                let mut all = seen.lock().unwrap_or_else(|p| p.into_inner());
                all.push_str(&line);
                all.push('\n');
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => addr.parse().expect("an address"),
            Err(_) => {
                let _ = child.kill();
                panic!("the server did not say where it listens:\n{}", stderr.lock().expect("stderr"));
            }
        };
        Http { child, addr, stderr }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Its stderr once `seen` holds for it (or after the usual wait): a thread collects it.
    pub(crate) fn stderr_once(&self, seen: impl Fn(&str) -> bool) -> String {
        teaagent_tests::wire::once_said(|| self.stderr(), seen)
    }

    /// Sends the server SIGTERM and waits for it to exit, at most `within` (past it, the test
    /// fails with the server's stderr): its exit status, and how long it took.
    pub(crate) fn terminate(&mut self, within: Duration) -> (std::process::ExitStatus, Duration) {
        let asked = Instant::now();
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return (status, asked.elapsed());
            }
            assert!(asked.elapsed() < within, "still running {within:?} after SIGTERM:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits for the fixture's `hold` call to write `marker`: its call was cancelled.
    pub(crate) fn cancelled(&self, marker: &std::path::Path) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !marker.exists() {
            assert!(Instant::now() < deadline, "the call was not cancelled; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// One raw HTTP/1.1 exchange; `headers` are added to `Host` (unless given) and the length.
    pub(crate) fn exchange(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        exchange(self.addr, method, path, headers, body)
    }

    /// A modern POST of `message` with the headers a conforming client sends.
    pub(crate) fn post(&self, message: &Value) -> Reply {
        let headers = modern_headers(message);
        let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        self.exchange("POST", "/mcp", &refs, message.to_string().as_bytes())
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A parsed response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    /// A complete response as read (a chunked body is joined).
    pub(crate) fn parse(raw: &[u8]) -> io::Result<Self> {
        let bad = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_owned());
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| bad("an incomplete head"))?;
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no status"))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let mut body = raw[split + 4..].to_vec();
        if headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked")) {
            body = dechunk(&body);
        }
        Ok(Reply { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("JSON ({e}): {self:?}"))
    }

    /// The `data:` of every SSE event, as JSON.
    pub(crate) fn events(&self) -> Vec<Value> {
        self.body
            .split("\n\n")
            .filter_map(|event| event.lines().find_map(|l| l.strip_prefix("data: ")))
            .map(|data| serde_json::from_str(data).expect("one JSON message per event"))
            .collect()
    }
}

/// A connection to `addr` from the loopback address `source` (`127.0.0.2`: on Linux every
/// address of `127.0.0.0/8` is this machine's), to be several clients' addresses at once.
pub(crate) fn connect_from(source: &str, addr: SocketAddr) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("runtime");
    let stream = runtime
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(source.parse().expect("an IPv4 address"), 0))?;
            socket.connect(addr).await?.into_std()
        })
        .unwrap_or_else(|e| panic!("connect to {addr} from {source}: {e}"));
    stream.set_nonblocking(false).expect("blocking");
    stream
}

/// One HTTP/1.1 exchange with `addr` on a connection of its own; `headers` are added to `Host`
/// (unless given) and the length. Panics, naming the request, when it fails.
pub(crate) fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    try_exchange(addr, method, path, headers, body)
        .unwrap_or_else(|e| panic!("{method} {path} to {addr} failed: {e}"))
}

/// [`exchange`], or why the connection failed (a replica that is gone, a response cut short).
pub(crate) fn try_exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    stream.write_all(head(addr, method, path, headers, body.len()).as_bytes())?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    Reply::parse(&raw)
}

/// An HTTP/1.1 request's head to `addr`, blank line included: `Connection: close`, the body's
/// `length`, `Host` (unless `headers` give one) and `headers`.
pub(crate) fn head(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    length: usize,
) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {length}\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else { return out };
        let size = usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 || body.len() < end + 2 + size {
            return out;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = body.get(end + 2 + size + 2..).unwrap_or_default();
    }
}

pub(crate) fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}

pub(crate) fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub(crate) fn modern_headers(message: &Value) -> Vec<(String, String)> {
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("Accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
    ];
    if let Some(method) = message["method"].as_str() {
        headers.push(("Mcp-Method".to_owned(), method.to_owned()));
        let name = match method {
            "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
            "resources/read" => message["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            headers.push(("Mcp-Name".to_owned(), name.to_owned()));
        }
    }
    headers
}

/// `initialize` over HTTP: the session's id.
pub(crate) fn open_session(server: &Http, extra: &[(&str, &str)], capabilities: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}}});
    let mut headers =
        vec![("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    headers.extend_from_slice(extra);
    let r = server.exchange("POST", "/mcp", &headers, init.to_string().as_bytes());
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    let id = r.header("mcp-session-id").expect("a session id").to_owned();
    assert!(id.len() >= 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
    id
}

pub(crate) fn in_session(server: &Http, session: &str, message: &Value, extra: &[(&str, &str)]) -> Reply {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    headers.extend_from_slice(extra);
    server.exchange("POST", "/mcp", &headers, message.to_string().as_bytes())
}

/// A POST whose answer is read as it streams: its SSE events, one by one.
pub(crate) struct Streaming {
    reader: BufReader<TcpStream>,
}

impl Streaming {
    pub(crate) fn post(server: &Http, headers: &[(&str, &str)], body: &Value) -> Self {
        let body = body.to_string();
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let mut head =
            format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n", server.addr, body.len());
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        stream.write_all(format!("{head}\r\n{body}").as_bytes()).expect("send");
        Streaming { reader: BufReader::new(stream) }
    }

    /// The next `data:` line's JSON (chunk sizes and other lines skipped).
    pub(crate) fn next_event(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).expect("read the stream");
            assert!(n > 0, "the stream ended");
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                return serde_json::from_str(data).expect("JSON event");
            }
        }
    }
}
