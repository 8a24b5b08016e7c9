//! Newline framing with a maximum line length that is enforced without buffering the line.
//!
//! Bytes go in as they arrive; complete lines come out. Once the bytes of the current line pass
//! the maximum, they are dropped as they arrive and the line is reported as [`Frame::TooLong`]
//! when its newline comes: memory stays bounded by the maximum whatever the client sends.

use std::collections::VecDeque;

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

/// Splits a byte stream into lines.
#[derive(Debug)]
pub struct LineFramer {
    max: usize,
    partial: Vec<u8>,
    /// `Some(n)`: the current line is too long; `n` bytes seen so far.
    discarding: Option<u64>,
    ready: VecDeque<Frame>,
}

impl LineFramer {
    /// A framer refusing lines longer than `max` bytes.
    pub fn new(max: usize) -> Self {
        Self { max, partial: Vec::new(), discarding: None, ready: VecDeque::new() }
    }

    /// Feeds bytes; complete lines become available from [`LineFramer::next_frame`].
    pub fn push(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    self.take(&chunk[..i]);
                    let frame = match self.discarding.take() {
                        Some(len) => Frame::TooLong { len },
                        None => Frame::Line(std::mem::take(&mut self.partial)),
                    };
                    self.ready.push_back(frame);
                    chunk = &chunk[i + 1..];
                }
                None => {
                    self.take(chunk);
                    chunk = &[];
                }
            }
        }
    }

    /// Appends bytes of the current line, switching to discarding when it gets too long.
    fn take(&mut self, bytes: &[u8]) {
        if let Some(len) = &mut self.discarding {
            *len += bytes.len() as u64;
        } else if self.partial.len() + bytes.len() > self.max {
            self.discarding = Some((self.partial.len() + bytes.len()) as u64);
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    /// The next complete line, if any.
    pub fn next_frame(&mut self) -> Option<Frame> {
        self.ready.pop_front()
    }

    /// End of input: an unterminated last line is still a line.
    pub fn finish(&mut self) {
        if let Some(len) = self.discarding.take() {
            self.ready.push_back(Frame::TooLong { len });
        } else if !self.partial.is_empty() {
            self.ready.push_back(Frame::Line(std::mem::take(&mut self.partial)));
        }
    }

    /// Bytes held for the current, unfinished line (never more than the maximum).
    pub fn buffered(&self) -> usize {
        self.partial.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frames(max: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut f = LineFramer::new(max);
        for c in chunks {
            f.push(c);
        }
        f.finish();
        std::iter::from_fn(|| f.next_frame()).collect()
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
        assert_eq!(f.buffered(), 0);
        f.push(b"9\nok\n");
        assert_eq!(f.next_frame(), Some(Frame::TooLong { len: 9 }));
        assert_eq!(f.next_frame(), Some(Frame::Line(b"ok".to_vec())));
        assert_eq!(
            frames(4, &[b"1234\n12345\n"]),
            vec![Frame::Line(b"1234".to_vec()), Frame::TooLong { len: 5 }]
        );
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
            for c in cuts.into_iter().chain([data.len()]) {
                f.push(&data[last..c]);
                prop_assert!(f.buffered() <= max);
                last = c;
            }
            f.finish();
            let out: Vec<Frame> = std::iter::from_fn(|| f.next_frame()).collect();
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
