//! Prometheus for the metrics tests (`tests/metrics.rs`, `tests/fleet_metrics.rs`): the real
//! `promtool check metrics` on a scrape, and a real `prometheus` server scraping a target on a
//! free loopback port, asked through its HTTP API. Both come from Debian's `prometheus` package,
//! installed like Redis and nginx when missing (`services.rs`).

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::services::{free_port, program};

/// `promtool check metrics` of `text` (a scrape): `Err` with what it said when it finds a
/// problem (a format error, or a lint such as a counter without `_total`).
pub fn promtool_check(text: &str) -> Result<(), String> {
    let mut child = Command::new(program("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write the scrape to promtool");
    let out = child.wait_with_output().expect("promtool ends");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() && said.trim().is_empty() { Ok(()) } else { Err(said) }
}

/// A `prometheus` server of the test's own: its configuration (given whole) and its storage in a
/// temporary directory, on a free loopback port; killed when dropped.
pub struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: TempDir,
}

impl Prometheus {
    /// Starts it with `config` (its YAML; a `scrape_configs` entry pointing at the target) and
    /// waits until it says it is ready.
    pub fn start(config: &str) -> Self {
        let dir = tempfile::Builder::new().prefix("teaagent-prometheus-").tempdir().expect("temp dir");
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, config).expect("prometheus.yml");
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, free_port()));
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log file");
        let child = Command::new(program("prometheus"))
            .arg(format!("--config.file={}", file.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("run prometheus");
        let mut prometheus = Prometheus { child, addr, dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if get(addr, "/-/ready").is_ok_and(|(status, _)| status == 200) {
                return prometheus;
            }
            if let Ok(Some(status)) = prometheus.child.try_wait() {
                panic!("prometheus ended ({status}) before it was ready:\n{}", prometheus.log());
            }
            assert!(Instant::now() < deadline, "prometheus was not ready within 60 s:\n{}", prometheus.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What it logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// The JSON answer of `/api/v1/query?query=QUERY` (an instant query), or why there is none.
    pub fn query(&self, query: &str) -> io::Result<Value> {
        let (status, body) = get(self.addr, &format!("/api/v1/query?query={}", percent_encode(query)))?;
        let answer: Value =
            serde_json::from_str(&body).map_err(|e| io::Error::other(format!("{e}: {body}")))?;
        if status != 200 {
            return Err(io::Error::other(format!("status {status}: {body}")));
        }
        Ok(answer)
    }

    /// The JSON answer of `/api/v1/targets`: how the scrapes went.
    pub fn targets(&self) -> String {
        get(self.addr, "/api/v1/targets").map(|(_, body)| body).unwrap_or_else(|e| e.to_string())
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `GET path` on a connection of its own: the status and the body (`Connection: close`, so
/// the body is what comes until the end).
fn get(addr: SocketAddr, path: &str) -> io::Result<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(|| io::Error::other("no end of headers"))?;
    let status =
        head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| io::Error::other("no status"))?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    Ok((status, if chunked { dechunk(body) } else { body.to_owned() }))
}

/// A chunked body joined.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// `text` as a query string value: everything but unreserved characters percent-encoded.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
