//! One server under test, and the lines it is sent.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::Contender;

pub(crate) struct Server {
    pub(crate) child: Child,
    /// `None` while the pipelined writer thread holds it.
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: BufReader<ChildStdout>,
}

impl Server {
    pub(crate) fn start(c: &Contender) -> Self {
        let mut child = Command::new(&c.program)
            .args(&c.args)
            .env("RUST_LOG", "warn")
            .env("TEAAGENT_HOME", &c.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        Self { child, stdin: Some(stdin), stdout }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.flush().expect("flush");
    }

    pub(crate) fn read_line(&mut self, buf: &mut String) {
        buf.clear();
        let n = self.stdout.read_line(buf).expect("read");
        assert!(n > 0, "the server closed stdout");
    }

    pub(crate) fn initialize(&mut self) {
        self.send(&initialize_line());
        let mut line = String::new();
        self.read_line(&mut line);
        assert!(line.contains("\"protocolVersion\""), "bad initialize answer: {line}");
        self.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    }

    pub(crate) fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

pub(crate) fn initialize_line() -> String {
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}}\n".to_owned()
}

pub(crate) fn call_line(id: usize, text: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{text}\"}}}}}}\n"
    )
}
