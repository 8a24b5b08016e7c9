//! Lines for a session's one writer (stdio), gathered in one buffer as they are sent.
//!
//! Each answer is written into a line of its own. Queued one by one, hundreds of those lines
//! are alive at once when a client pipelines its requests: each is freed only when the writer
//! gets to it, and that many buffers of one size overflow the allocator's per-thread cache, so
//! that every one of them went the allocator's slow way (about a tenth of a pipelined call's
//! cost). Here a line is copied into the outbox and its own buffer freed at once; the writer is
//! told only when the outbox goes from empty to not empty, and then takes everything in it, in
//! the order it was sent.

use std::sync::Mutex;

/// A line at least this long goes to the writer whole when nothing is waiting before it (its
/// copy would cost more than the hand-over it saves).
pub(crate) const WHOLE_LINE: usize = 64 << 10;

/// The lines a writer has not taken yet (module docs).
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    lines: Mutex<Vec<u8>>,
}

/// What became of a line given to [`Outbox::put`].
#[derive(Debug)]
pub(crate) enum Put {
    /// It is the first line waiting: tell the writer.
    First,
    /// Lines were waiting before it: the writer has been told already.
    Behind,
    /// A long line with nothing waiting before it: hand it to the writer as it is.
    Whole(Vec<u8>),
}

impl Outbox {
    /// Puts `line` after every line put before it.
    pub(crate) fn put(&self, line: Vec<u8>) -> Put {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let first = lines.is_empty();
        if first && line.len() >= WHOLE_LINE {
            return Put::Whole(line);
        }
        lines.extend_from_slice(&line);
        drop(lines);
        // (Freed here, before the next answer's line is made: the same buffer serves it.)
        drop(line);
        if first { Put::First } else { Put::Behind }
    }

    /// Every line put and not taken yet, in order (empty when there is none).
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.lines.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_out_in_order_and_the_writer_is_told_once() {
        let outbox = Outbox::default();
        assert!(matches!(outbox.put(b"a\n".to_vec()), Put::First));
        assert!(matches!(outbox.put(b"b\n".to_vec()), Put::Behind));
        assert_eq!(outbox.take(), b"a\nb\n");
        assert!(outbox.take().is_empty());
        assert!(matches!(outbox.put(b"c\n".to_vec()), Put::First));
        assert_eq!(outbox.take(), b"c\n");
    }

    #[test]
    fn a_long_line_goes_whole_only_when_nothing_waits_before_it() {
        let outbox = Outbox::default();
        let long = vec![b'x'; WHOLE_LINE];
        assert!(matches!(outbox.put(long.clone()), Put::Whole(l) if l == long));
        assert!(matches!(outbox.put(b"a\n".to_vec()), Put::First));
        assert!(matches!(outbox.put(long.clone()), Put::Behind));
        let taken = outbox.take();
        assert_eq!(&taken[..2], b"a\n");
        assert_eq!(taken.len(), 2 + WHOLE_LINE);
    }
}
