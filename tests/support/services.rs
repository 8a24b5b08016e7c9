//! The services a fleet runs next to its replicas (`deploy/`): a real Redis server and
//! the nginx load balancer of `deploy/nginx/`, each started by the test on a free loopback port,
//! with its files in a temporary directory, and killed when dropped.
//!
//! [`Nginx`] runs `deploy/nginx/teaagent.conf` itself, rendered by `deploy/nginx/render.sh` (the
//! same step `deploy/docker-compose.yml` takes) with the test's replicas as upstreams and a
//! loopback port without TLS: what the tests exercise is the deployed configuration.
//!
//! # Installing
//!
//! Installing is part of the test, as for the conformance suite, so `cargo test` on a fresh
//! Debian machine needs nothing else: when `redis-server`, `nginx`, `prometheus` or `promtool` is
//! found neither on `PATH` nor in `/usr/sbin`,
//! `apt-get install -y --no-install-recommends redis-server nginx prometheus` runs once
//! (as root only: the tests never call `sudo`). When that is impossible or fails, the test fails,
//! saying what to install: it never skips.
//!
//! The packages' own services are not used and cannot get in the way: while installing, a
//! `policy-rc.d` that denies every start keeps them stopped (unless the machine already has one),
//! and every server here listens on a port the kernel has just handed out, with its own
//! configuration and data directory.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long a service may take to answer after it starts. Far beyond what any start takes, even
/// on a loaded machine: a bound against a hang, not a measure.
const START: Duration = Duration::from_secs(60);

/// How many free ports a start tries, should another process take the one it was handed.
const ATTEMPTS: usize = 5;

/// A `redis-server` of the test's own: `127.0.0.1`, a free port, no persistence (`--save ""
/// --appendonly no`), its directory and log in a temporary directory.
pub struct Redis {
    child: Option<Child>,
    port: u16,
    dir: TempDir,
}

impl Redis {
    /// Starts a server and waits until it answers `PING`.
    pub fn start() -> Self {
        let program = program("redis-server");
        let dir = tempfile::Builder::new().prefix("teaagent-redis-").tempdir().expect("temp dir");
        for _ in 0..ATTEMPTS {
            let port = free_port();
            match spawn_redis(&program, dir.path(), port) {
                Ok(child) => return Self { child: Some(child), port, dir },
                // Another process took the port in between: another one.
                Err(log) if log.contains("Address already in use") => continue,
                Err(log) => panic!("redis-server did not start:\n{log}"),
            }
        }
        panic!("redis-server found no free port in {ATTEMPTS} attempts:\n{}", read_log(dir.path()));
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr())
    }

    /// Where it listens (the same after [`Redis::restart`]).
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// Whether the server answers `PING` with `PONG` now.
    pub fn ping(&self) -> bool {
        ping(self.addr())
    }

    /// One command on a connection of its own; the server's answer (an error answer is
    /// [`Resp::Error`], not `Err`: `Err` is a connection that failed).
    pub fn command(&self, args: &[&str]) -> io::Result<Resp> {
        command(self.addr(), args)
    }

    /// Kills the server (`SIGKILL`, as a crash would) and waits for it: from now on its port
    /// refuses connections.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port (empty: nothing was persisted), after killing it
    /// if it still runs; waits until it answers `PING`.
    pub fn restart(&mut self) {
        self.kill();
        match spawn_redis(&program("redis-server"), self.dir.path(), self.port) {
            Ok(child) => self.child = Some(child),
            // The port was ours a moment ago: another process taking it since is worth a failure.
            Err(log) => panic!("redis-server did not start again on port {}:\n{log}", self.port),
        }
    }

    /// What the server logged, across its restarts.
    pub fn log(&self) -> String {
        read_log(self.dir.path())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

fn read_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("redis.log")).unwrap_or_default()
}

/// Runs `redis-server` on `port` with `dir` as its directory, logging to `dir/redis.log`, and
/// waits until it answers `PING`. `Err`: what it logged this time.
fn spawn_redis(program: &Path, dir: &Path, port: u16) -> Result<Child, String> {
    let before = read_log(dir).len();
    let failed = |why: String| {
        let log = read_log(dir);
        Err(format!("{why}\n{}", log.get(before..).unwrap_or(&log)))
    };
    let log =
        std::fs::OpenOptions::new().create(true).append(true).open(dir.join("redis.log")).expect("redis.log");
    let spawned = Command::new(program)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .args(["--daemonize", "no", "--logfile", ""])
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return failed(format!("cannot run {}: {e}", program.display())),
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + START;
    loop {
        if ping(addr) {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return failed(format!("it ended ({status})"));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return failed(format!("no answer to PING within {START:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `addr` answers `PING` with `PONG`.
fn ping(addr: SocketAddr) -> bool {
    matches!(command(addr, &["PING"]), Ok(Resp::Simple(pong)) if pong == "PONG")
}

/// One command to `addr` on a connection of its own, in RESP: an array of bulk strings.
fn command(addr: SocketAddr, args: &[&str]) -> io::Result<Resp> {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    (&stream).write_all(request.as_bytes())?;
    Resp::read(&mut BufReader::new(stream))
}

/// A Redis answer (RESP2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    /// `+OK`.
    Simple(String),
    /// `-ERR …`.
    Error(String),
    /// `:1`.
    Integer(i64),
    /// `$3 foo`, or `$-1` (`None`).
    Bulk(Option<Vec<u8>>),
    /// `*2 …`, or `*-1` (`None`).
    Array(Option<Vec<Resp>>),
}

impl Resp {
    fn read(from: &mut impl BufRead) -> io::Result<Resp> {
        let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
        let mut line = String::new();
        if from.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.strip_suffix("\r\n").ok_or_else(|| bad(format!("no CRLF: {line:?}")))?;
        let (kind, rest) = line.split_at_checked(1).ok_or_else(|| bad("an empty line".into()))?;
        let number = || rest.parse::<i64>().map_err(|_| bad(format!("not a number: {line:?}")));
        Ok(match kind {
            "+" => Resp::Simple(rest.to_owned()),
            "-" => Resp::Error(rest.to_owned()),
            ":" => Resp::Integer(number()?),
            "$" => match usize::try_from(number()?) {
                Err(_) => Resp::Bulk(None),
                Ok(len) => {
                    let mut bytes = vec![0; len + 2];
                    from.read_exact(&mut bytes)?;
                    bytes.truncate(len);
                    Resp::Bulk(Some(bytes))
                }
            },
            "*" => match usize::try_from(number()?) {
                Err(_) => Resp::Array(None),
                Ok(len) => Resp::Array(Some((0..len).map(|_| Resp::read(from)).collect::<io::Result<_>>()?)),
            },
            _ => return Err(bad(format!("not RESP: {line:?}"))),
        })
    }
}

/// nginx as the fleet's load balancer: `deploy/nginx/teaagent.conf`, rendered with the given
/// replicas as upstreams and a free loopback port, plain HTTP.
pub struct Nginx {
    child: Child,
    addr: SocketAddr,
    dir: TempDir,
    stderr: Arc<Mutex<String>>,
}

impl Nginx {
    /// Renders the configuration, starts nginx with it and waits until it accepts connections.
    pub fn start(upstreams: &[SocketAddr]) -> Self {
        assert!(!upstreams.is_empty(), "a load balancer needs replicas");
        let program = program("nginx");
        let dir = tempfile::Builder::new().prefix("teaagent-nginx-").tempdir().expect("temp dir");
        let upstreams: Vec<String> = upstreams.iter().map(SocketAddr::to_string).collect();
        for _ in 0..ATTEMPTS {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, free_port()));
            write_config(dir.path(), &upstreams.join(" "), addr);
            match spawn_nginx(&program, dir.path(), addr) {
                Ok((child, stderr)) => return Self { child, addr, dir, stderr },
                // Another process took the port in between: another one.
                Err(log) if log.contains("Address already in use") => continue,
                Err(log) => {
                    let config =
                        std::fs::read_to_string(dir.path().join("teaagent.conf")).unwrap_or_default();
                    panic!("nginx did not start: {log}\nits configuration:\n{config}");
                }
            }
        }
        panic!("nginx found no free port in {ATTEMPTS} attempts");
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR/mcp`, the fleet's MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The rendered `teaagent.conf` it runs.
    pub fn config(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("teaagent.conf")).unwrap_or_default()
    }

    /// Its error log so far (stderr).
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Its access log so far: one line per request, `STATUS UPSTREAM METHOD URI` (UPSTREAM is
    /// `-` for what nginx answered itself, several addresses when it tried more than one).
    /// nginx writes a line once the answer is sent, so the last request's may still be missing.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs nginx with `dir/nginx.conf` and waits until `addr` accepts a connection; its stderr as
/// it comes. `Err`: why, with what it said.
fn spawn_nginx(program: &Path, dir: &Path, addr: SocketAddr) -> Result<(Child, Arc<Mutex<String>>), String> {
    let mut child = Command::new(program)
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        // `-e`: where the start itself logs, before the configuration is read (the built-in
        // path may not be writable).
        .args(["-e", "stderr", "-g"])
        .arg(format!("daemon off; pid {}; error_log stderr;", dir.join("nginx.pid").display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let stderr = Arc::new(Mutex::new(String::new()));
    let lines = BufReader::new(child.stderr.take().expect("stderr"));
    let seen = stderr.clone();
    let reader = std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            let mut all = seen.lock().unwrap_or_else(|p| p.into_inner());
            all.push_str(&line);
            all.push('\n');
        }
    });
    let deadline = Instant::now() + START;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
            return Ok((child, stderr));
        }
        let ended = match child.try_wait() {
            Ok(Some(status)) => Some(format!("it ended ({status})")),
            _ if Instant::now() > deadline => Some(format!("no connection accepted within {START:?}")),
            _ => None,
        };
        if let Some(why) = ended {
            let _ = child.kill();
            let _ = child.wait();
            // Its stderr is closed now: the reader ends once it has every line.
            let _ = reader.join();
            let log = stderr.lock().unwrap_or_else(|p| p.into_inner()).clone();
            return Err(format!("{why}\n{log}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `deploy/nginx/`.
fn deploy_nginx() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/nginx")
}

/// Writes `dir/teaagent.conf` (deploy's, rendered by deploy's `render.sh`) and `dir/nginx.conf`,
/// the main file around it: what the nginx image's own main file would be, with every path in
/// `dir`.
fn write_config(dir: &Path, upstreams: &str, listen: SocketAddr) {
    let out = Command::new("sh")
        .arg(deploy_nginx().join("render.sh"))
        .arg(deploy_nginx().join("teaagent.conf"))
        .env("TEAAGENT_UPSTREAMS", upstreams)
        .env("TEAAGENT_LISTEN", listen.to_string())
        .env_remove("TEAAGENT_TLS")
        .output()
        .expect("run deploy/nginx/render.sh");
    assert!(out.status.success(), "deploy/nginx/render.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(dir.join("teaagent.conf"), &out.stdout).expect("teaagent.conf");
    let path = |name: &str| dir.join(name).display().to_string();
    // One process, no workers (`master_process off`): nothing outlives a kill, and no worker
    // switches to another user that could not reach these paths. The proxying is the same.
    // Room for the fleet tests' bursts: each request in flight holds two connections (the
    // client's and the replica's), so 500 at once need more than the image's 1024.
    let main = format!(
        "master_process off;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n\
         \x20   log_format fleet '$status $upstream_addr $request_method $request_uri';\n\
         \x20   access_log {access} fleet;\n\
         \x20   client_body_temp_path {body};\n\
         \x20   proxy_temp_path {proxy};\n\
         \x20   fastcgi_temp_path {fastcgi};\n\
         \x20   uwsgi_temp_path {uwsgi};\n\
         \x20   scgi_temp_path {scgi};\n\
         \x20   include {site};\n\
         }}\n",
        access = path("access.log"),
        body = path("client_body_temp"),
        proxy = path("proxy_temp"),
        fastcgi = path("fastcgi_temp"),
        uwsgi = path("uwsgi_temp"),
        scgi = path("scgi_temp"),
        site = path("teaagent.conf"),
    );
    std::fs::write(dir.join("nginx.conf"), main).expect("nginx.conf");
}

/// A port nobody listens on now (the kernel's choice; free again once returned).
pub(crate) fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// Where `name` is installed: `PATH`, then the system directories a user's `PATH` may lack.
fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            candidate.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The path of `name` (`redis-server`, `nginx`, `prometheus`, `promtool`), installing the packages first when it is
/// missing.
pub(crate) fn program(name: &str) -> PathBuf {
    if let Some(path) = find(name) {
        return path;
    }
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(install);
    find(name).unwrap_or_else(|| panic!("`{name}` is still missing after installing its package"))
}

/// The Debian packages the fleet tests run (`prometheus` gives `prometheus` and `promtool`,
/// `prometheus.rs`).
const PACKAGES: [&str; 3] = ["redis-server", "nginx", "prometheus"];

/// `apt-get install` of [`PACKAGES`], with the package lists updated when the first try fails;
/// panics when that cannot be done.
fn install() {
    let command = format!("apt-get install -y --no-install-recommends {}", PACKAGES.join(" "));
    if !crate::unprivileged::running_as_root() {
        panic!(
            "the fleet tests need redis-server, nginx and prometheus; install them (as root: `{command}`)"
        );
    }
    if find("apt-get").is_none() {
        panic!(
            "the fleet tests need redis-server, nginx and prometheus, and this machine has no apt-get to install them"
        );
    }
    let _no_starts = NoServiceStarts::new();
    let apt = |args: &[&str]| {
        let out = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run apt-get: {e}"));
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    };
    let args: Vec<&str> = ["install", "-y", "--no-install-recommends"].into_iter().chain(PACKAGES).collect();
    eprintln!("installing {} for the fleet tests: {command}", PACKAGES.join(" "));
    if apt(&args).0 {
        return;
    }
    let (updated, log) = apt(&["update"]);
    assert!(updated, "apt-get update failed:\n{log}");
    let (installed, log) = apt(&args);
    assert!(installed, "`{command}` failed:\n{log}");
}

/// `/usr/sbin/policy-rc.d` answering 101 ("action forbidden") while packages install, so that
/// their scripts start no system service; removed when dropped. Nothing is done when the machine
/// has one already (it is the machine's policy).
struct NoServiceStarts(Option<PathBuf>);

const DENY_STARTS: &[u8] =
    b"#!/bin/sh\n# teaagent's fleet tests install packages: no service starts meanwhile.\nexit 101\n";

impl NoServiceStarts {
    fn new() -> Self {
        let path = PathBuf::from("/usr/sbin/policy-rc.d");
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| f.write_all(DENY_STARTS))
            .and_then(|()| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            });
        Self(created.is_ok().then_some(path))
    }
}

impl Drop for NoServiceStarts {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
