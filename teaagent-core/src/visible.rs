//! Showing untrusted text to a person: every value a client or a workspace controls (tool
//! arguments, paths, commands, configuration) is escaped so that what the person reads is exactly
//! what will run — no terminal control sequence, bidirectional override, zero-width character or
//! line break can hide, reorder or fake a part of it.
//!
//! [`escape`] keeps printable text as it is and writes everything else as a visible escape:
//! `\n`, `\r`, `\t`, `\\`, `\e` (ESC), `\u{202E}` for other control, format (bidi, zero-width),
//! separator and private-use characters. [`shown`] also folds long runs of one character (padding)
//! into a count and cuts nothing else, so `cargo test … ; rm -rf ~` can never be shortened to
//! its harmless part.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every character that is not plainly visible written as an escape (see the module
/// docs). The result is one line of printable characters.
///
/// ```
/// use teaagent_core::visible::escape;
/// assert_eq!(escape("a\u{1b}[2Kb\n\u{202e}c"), r"a\e[2Kb\n\u{202e}c");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

/// `text` with only what is not plainly visible escaped, as [`escape`] writes it (control
/// characters and line breaks, bidirectional controls, zero-width characters…); printable text,
/// backslashes included, is kept as it is. For text a person reads as written, such as a log
/// line, or text that is already an escaped form (a `Debug` string): it stays one line, and
/// nothing in it can move the cursor, clear the screen or reorder what is shown.
///
/// ```
/// use teaagent_core::visible::invisible_escaped;
/// assert_eq!(invisible_escaped(r"C:\dir"), r"C:\dir");
/// assert_eq!(invisible_escaped("a\u{1b}[2J\r\nb"), r"a\e[2J\r\nb");
/// ```
pub fn invisible_escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\\' => out.push(c),
            c => push_escaped(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// `text` escaped ([`escape`]) and cut to `max` characters, saying how many more there were.
///
/// ```
/// use teaagent_core::visible::bounded;
/// assert_eq!(bounded("abcdef", 3), "abc…⟪3 more characters⟫");
/// assert_eq!(bounded("a\u{7}", 5), "a\\u{7}");
/// ```
pub fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return escape(text);
    }
    let head: String = text.chars().take(max).collect();
    format!("{}…⟪{} more characters⟫", escape(&head), total - max)
}

/// [`escape`]d, with long runs of one repeated character folded into a count
/// (`x⟪×9984 more⟫`), so padding cannot push the rest of a value out of sight. Nothing else is
/// ever cut: the part that differs between a harmless call and a harmful one is always shown,
/// and the fold says how much it stands for.
///
/// ```
/// use teaagent_core::visible::shown;
/// let long = format!("echo {}; rm -rf ~", "a".repeat(20_000));
/// let s = shown(&long);
/// assert_eq!(s, "echo aaaaaaaa⟪×19992 more⟫; rm -rf ~");
/// ```
pub fn shown(text: &str) -> String {
    const KEEP: usize = 8;
    let mut out = String::with_capacity(text.len().min(4096));
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let mut run = 1usize;
        while chars.peek() == Some(&c) {
            chars.next();
            run += 1;
        }
        for _ in 0..run.min(KEEP) {
            push_escaped(&mut out, c);
        }
        if run > KEEP {
            let _ = write!(out, "⟪×{} more⟫", run - KEEP);
        }
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\\' => out.push_str("\\\\"),
        '\u{1b}' => out.push_str("\\e"),
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// Control characters, bidirectional controls, zero-width and other invisible format characters,
/// line and paragraph separators, and non-characters.
fn needs_escape(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || matches!(
            u,
            0x00AD            // soft hyphen
            | 0x034F          // combining grapheme joiner
            | 0x061C          // arabic letter mark
            | 0x115F | 0x1160 // hangul fillers
            | 0x17B4 | 0x17B5
            | 0x180B..=0x180F // mongolian variation selectors, vowel separator
            | 0x2000..=0x200F // spaces of other widths, zero-width space/joiners, LRM, RLM
            | 0x2028..=0x202F // line/paragraph separators, bidi embeddings and overrides
            | 0x205F..=0x206F // math space, word joiner, invisible operators, bidi isolates
            | 0x3000          // ideographic space
            | 0x3164          // hangul filler
            | 0xFE00..=0xFE0F // variation selectors
            | 0xFEFF          // zero-width no-break space (BOM)
            | 0xFFA0
            | 0xFFF0..=0xFFFB // specials, interlinear annotation
            | 0xE0000..=0xE0FFF // tags, variation selectors supplement
            | 0x1D173..=0x1D17A
        )
        || (u & 0xFFFE) == 0xFFFE // non-characters
        || (0xFDD0..=0xFDEF).contains(&u)
        || (0xE000..=0xF8FF).contains(&u) // private use
        || (0xF0000..=0x10FFFF).contains(&u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_and_control_characters_become_visible() {
        assert_eq!(escape("plain text, ünïcödé 漢字"), "plain text, ünïcödé 漢字");
        assert_eq!(escape("\u{1b}[2K"), "\\e[2K");
        assert_eq!(escape("a\u{200b}b"), "a\\u{200b}b");
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape("1\r\n2\t3\u{7}"), "1\\r\\n2\\t3\\u{7}");
        assert_eq!(escape("back\\slash"), "back\\\\slash");
        assert_eq!(escape("\u{2028}\u{feff}\u{e0041}"), "\\u{2028}\\u{feff}\\u{e0041}");
        // Nothing escaped is left invisible.
        for c in ['\u{0}', '\u{85}', '\u{9b}', '\u{2066}', '\u{2069}', '\u{180e}'] {
            assert!(escape(&c.to_string()).starts_with('\\'), "{c:?}");
        }
    }

    #[test]
    fn padding_is_folded_and_nothing_else_is_cut() {
        let long = format!("cargo test {}; rm -rf ~ {}", " ".repeat(20_000), "y".repeat(9));
        let s = shown(&long);
        assert_eq!(s, "cargo test        ⟪×19993 more⟫; rm -rf ~ yyyyyyyy⟪×1 more⟫");
        assert_eq!(shown("short\u{1b}"), "short\\e");
        // A value with no long runs is shown whole, however long.
        let varied: String = (0..5000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        assert_eq!(shown(&varied), varied);
    }
}
