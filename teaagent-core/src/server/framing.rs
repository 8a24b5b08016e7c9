//! Newline framing with a maximum line length that is enforced without buffering the line.
//!
//! Bytes go in as they arrive; complete lines come out. Once the bytes of the current line pass
//! the maximum, they are dropped as they arrive and the line is reported as [`Frame::TooLong`]
//! when its newline comes: memory stays bounded by the maximum whatever the client sends.
//!
//! The transport reads straight into the framer's buffer (`LineFramer::buffer_for_read`), and
//! a large line leaves as that buffer itself rather than as a copy: a 1 MiB argument is copied
//! once by the kernel on its way in and not again before it is parsed. Small lines (and the
//! smaller side of a split) are copied out, so many small lines in one read cost their own size.

/// Where the first `\n` is: `memchr`, without its run-time CPU feature detection on x86_64.
///
/// `memchr::memchr` picks AVX2 or SSE2 on its first call by asking the CPU (`cpuid`); a virtual
/// machine traps every `cpuid`, and that first call cost about 0.1 ms of each cold start here
/// (`cargo bench --bench stdio`, measured with `perf`): the first line a server frames is the
/// `initialize` it must answer quickly. SSE2 is part of x86_64, so its search needs no question.
pub(crate) fn find_newline(haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::One::new(b'\n') {
        return searcher.find(haystack);
    }
    memchr::memchr(b'\n', haystack)
}

/// One framed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its `\n` (a `\r` before it is kept: JSON treats it as space).
    Line(Vec<u8>),
    /// A line longer than the maximum; its bytes were discarded.
    TooLong {
        /// How many bytes it had (without the newline).
        len: u64,
    },
}

/// How much room a read gets at least, and the capacity a fresh buffer starts with.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// A line at least this long leaves as the buffer itself when what follows it is shorter.
const HAND_OVER: usize = 16 * 1024;

/// How many bytes of each end of a line too long to keep are kept ([`LineFramer::take_long_head`],
/// [`LineFramer::long_tail`]).
pub(crate) const EDGE: usize = 512;

/// The ends of the current (or last) line too long to keep.
#[derive(Debug, Default)]
struct Edges {
    /// Its first bytes, until taken.
    head: Option<Vec<u8>>,
    /// Its last bytes so far.
    tail: Vec<u8>,
}

impl Edges {
    fn start(&mut self, line: &[u8]) {
        self.head = Some(line[..line.len().min(EDGE)].to_vec());
        self.tail.clear();
        self.extend_tail(line);
    }

    fn extend_tail(&mut self, bytes: &[u8]) {
        if bytes.len() >= EDGE {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - EDGE..]);
        } else {
            self.tail.extend_from_slice(bytes);
            let over = self.tail.len().saturating_sub(EDGE);
            self.tail.drain(..over);
        }
    }
}

/// Splits a byte stream into lines.
#[derive(Debug)]
pub struct LineFramer {
    max: usize,
    /// Bytes not framed yet are `buf[start..]`.
    buf: Vec<u8>,
    start: usize,
    /// `buf[start..scanned]` holds no newline (already searched).
    scanned: usize,
    /// `Some(n)`: the current line is too long; `n` bytes of it seen so far (none kept).
    discarding: Option<u64>,
    /// End of input: what is left is the last line.
    finished: bool,
    /// The ends of a line too long to keep.
    edges: Edges,
}

impl LineFramer {
    /// A framer refusing lines longer than `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            discarding: None,
            finished: false,
            edges: Edges::default(),
        }
    }

    /// Feeds bytes; complete lines become available from [`LineFramer::next_frame`].
    pub fn push(&mut self, chunk: &[u8]) {
        self.compact();
        self.buf.extend_from_slice(chunk);
    }

    /// The buffer to read into: append at most `spare` bytes to it (its spare capacity is at
    /// least [`READ_CHUNK`]), then call [`LineFramer::next_frame`].
    pub(crate) fn buffer_for_read(&mut self) -> &mut Vec<u8> {
        self.compact();
        if self.buf.capacity() - self.buf.len() < READ_CHUNK {
            self.buf.reserve(READ_CHUNK);
        }
        &mut self.buf
    }

    /// Drops framed bytes from the front, so the buffer holds only the current line.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
    }

    /// The next complete line, if any.
    pub fn next_frame(&mut self) -> Option<Frame> {
        if let Some(seen) = self.discarding {
            // Nothing of a line that is too long is kept: count it and drop it.
            let pending = &self.buf[self.start..];
            match find_newline(pending) {
                Some(i) => {
                    self.edges.extend_tail(&pending[..i]);
                    self.discarding = None;
                    self.start += i + 1;
                    self.scanned = self.start;
                    return Some(Frame::TooLong { len: seen + i as u64 });
                }
                None => {
                    self.edges.extend_tail(pending);
                    let seen = seen + pending.len() as u64;
                    self.release();
                    if self.finished {
                        self.discarding = None;
                        return Some(Frame::TooLong { len: seen });
                    }
                    self.discarding = Some(seen);
                    return None;
                }
            }
        }
        match find_newline(&self.buf[self.scanned..]) {
            Some(i) => {
                let end = self.scanned + i;
                let len = end - self.start;
                if len > self.max {
                    self.edges.start(&self.buf[self.start..end]);
                    self.start = end + 1;
                    self.scanned = self.start;
                    return Some(Frame::TooLong { len: len as u64 });
                }
                Some(Frame::Line(self.take_line(end)))
            }
            None => {
                self.scanned = self.buf.len();
                let pending = self.buf.len() - self.start;
                if pending > self.max {
                    // Its ends are kept (the tail grows as it is dropped); the rest goes.
                    self.edges.start(&self.buf[self.start..]);
                    self.discarding = Some(pending as u64);
                    self.release();
                    if self.finished {
                        self.discarding = None;
                        return Some(Frame::TooLong { len: pending as u64 });
                    }
                    return None;
                }
                if self.finished && pending > 0 {
                    let end = self.buf.len();
                    return Some(Frame::Line(self.take_line(end)));
                }
                None
            }
        }
    }

    /// Removes the line `buf[start..end]` (and its newline, when there is one) from the buffer.
    fn take_line(&mut self, end: usize) -> Vec<u8> {
        let next = (end + 1).min(self.buf.len());
        let (line_len, rest_len) = (end - self.start, self.buf.len() - next);
        let line = if line_len >= HAND_OVER && rest_len < line_len {
            // The line leaves as the buffer; what follows it moves to a fresh one.
            let mut fresh = Vec::with_capacity(READ_CHUNK.max(rest_len));
            fresh.extend_from_slice(&self.buf[next..]);
            let mut line = std::mem::replace(&mut self.buf, fresh);
            line.truncate(end);
            line.drain(..self.start);
            self.start = 0;
            line
        } else {
            let line = self.buf[self.start..end].to_vec();
            self.start = next;
            line
        };
        self.scanned = self.start;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            self.scanned = 0;
        }
        line
    }

    /// Forgets every buffered byte and gives back a buffer grown for a long line.
    fn release(&mut self) {
        if self.buf.capacity() > 4 * READ_CHUNK {
            self.buf = Vec::new();
        } else {
            self.buf.clear();
        }
        self.start = 0;
        self.scanned = 0;
    }

    /// The first bytes (at most [`EDGE`]) of a line found too long, once: from the moment it
    /// passes the maximum, before its end has arrived (a reader can tell whose reply it is and
    /// fail that at once).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn take_long_head(&mut self) -> Option<Vec<u8>> {
        self.edges.head.take()
    }

    /// The last bytes (at most [`EDGE`]) of the line just reported as [`Frame::TooLong`].
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) fn long_tail(&self) -> &[u8] {
        &self.edges.tail
    }

    /// End of input: an unterminated last line is still a line.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Bytes held for the current, unfinished line (never more than the maximum plus one read).
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut f = LineFramer::new(max);
        let mut out = Vec::new();
        for c in chunks {
            f.push(c);
            out.extend(std::iter::from_fn(|| f.next_frame()));
        }
        f.finish();
        out.extend(std::iter::from_fn(|| f.next_frame()));
        out
    }

    #[test]
    fn a_long_line_keeps_only_its_ends() {
        let line: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        // Found long before its end arrives: the head is there at once.
        let mut f = LineFramer::new(1000);
        f.push(&line[..1500]);
        assert_eq!(f.next_frame(), None);
        assert_eq!(f.take_long_head().as_deref(), Some(&line[..EDGE]));
        assert_eq!(f.take_long_head(), None, "taken once");
        f.push(&line[1500..4000]);
        f.push(&line[4000..]);
        f.push(b"\nnext\n");
        assert_eq!(f.next_frame(), Some(Frame::TooLong { len: 5000 }));
        assert_eq!(f.long_tail(), &line[5000 - EDGE..]);
        assert_eq!(f.next_frame(), Some(Frame::Line(b"next".to_vec())));
        assert!(f.buffered() < 1000);
        // Found long with its end in the same read.
        let mut f = LineFramer::new(1000);
        f.push(&line);
        f.push(b"\n");
        assert_eq!(f.next_frame(), Some(Frame::TooLong { len: 5000 }));
        assert_eq!(f.take_long_head().as_deref(), Some(&line[..EDGE]));
        assert_eq!(f.long_tail(), &line[5000 - EDGE..]);
    }

    #[test]
    fn splits_across_chunks() {
        assert_eq!(
            frames(100, &[b"ab", b"c\nde", b"\n\nf"]),
            vec![
                Frame::Line(b"abc".to_vec()),
                Frame::Line(b"de".to_vec()),
                Frame::Line(vec![]),
                Frame::Line(b"f".to_vec())
            ]
        );
    }

    #[test]
    fn too_long_lines_are_dropped_not_buffered() {
        let mut f = LineFramer::new(4);
        f.push(b"12345678");
        assert_eq!(f.next_frame(), None);
        assert_eq!(f.buffered(), 0);
        f.push(b"9\nok\n");
        assert_eq!(f.next_frame(), Some(Frame::TooLong { len: 9 }));
        assert_eq!(f.next_frame(), Some(Frame::Line(b"ok".to_vec())));
        assert_eq!(
            frames(4, &[b"1234\n12345\n"]),
            vec![Frame::Line(b"1234".to_vec()), Frame::TooLong { len: 5 }]
        );
    }

    #[test]
    fn a_long_line_leaves_as_the_buffer_and_the_rest_stays() {
        let mut f = LineFramer::new(1 << 20);
        let long = vec![b'x'; 100_000];
        f.push(&long);
        assert_eq!(f.next_frame(), None);
        f.push(b"\nab\ncd");
        let Some(Frame::Line(line)) = f.next_frame() else { panic!("a line") };
        assert_eq!(line, long);
        assert_eq!(f.next_frame(), Some(Frame::Line(b"ab".to_vec())));
        assert_eq!(f.next_frame(), None);
        assert_eq!(f.buffered(), 2);
        f.finish();
        assert_eq!(f.next_frame(), Some(Frame::Line(b"cd".to_vec())));
        assert_eq!(f.next_frame(), None);
    }

    #[test]
    fn reads_go_straight_into_the_buffer() {
        let mut f = LineFramer::new(100);
        let buf = f.buffer_for_read();
        assert!(buf.capacity() - buf.len() >= READ_CHUNK);
        buf.extend_from_slice(b"one\ntw");
        assert_eq!(f.next_frame(), Some(Frame::Line(b"one".to_vec())));
        assert_eq!(f.next_frame(), None);
        f.buffer_for_read().extend_from_slice(b"o\n");
        assert_eq!(f.next_frame(), Some(Frame::Line(b"two".to_vec())));
    }

    proptest! {
        #[test]
        fn one_frame_per_newline_whatever_the_chunking(
            data in proptest::collection::vec(any::<u8>(), 0..2000),
            cuts in proptest::collection::vec(0usize..2000, 0..20),
            max in 1usize..64,
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.sort_unstable();
            let mut f = LineFramer::new(max);
            let mut last = 0;
            let mut out = Vec::new();
            for c in cuts.into_iter().chain([data.len()]) {
                f.push(&data[last..c]);
                out.extend(std::iter::from_fn(|| f.next_frame()));
                prop_assert!(f.buffered() <= max);
                last = c;
            }
            f.finish();
            out.extend(std::iter::from_fn(|| f.next_frame()));
            let newlines = data.iter().filter(|b| **b == b'\n').count();
            let tail = usize::from(data.last().is_some_and(|b| *b != b'\n'));
            prop_assert_eq!(out.len(), newlines + tail);
            let expected: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
            for (frame, want) in out.iter().zip(expected) {
                match frame {
                    Frame::Line(l) => prop_assert_eq!(l.as_slice(), want),
                    Frame::TooLong { len } => {
                        prop_assert!(want.len() > max);
                        prop_assert_eq!(*len, want.len() as u64);
                    }
                }
            }
        }
    }
}
