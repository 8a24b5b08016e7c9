//! A `SKILL.md`'s frontmatter: the YAML block between its first two `---` lines, read as YAML
//! 1.2 (core schema) into JSON, with bounds a hostile file cannot get past.
//!
//! Why YAML 1.2 and `saphyr-parser`: clients compare the manifest's `frontmatter` with what
//! their own YAML 1.2 parser makes of the file, and a 1.1 parser reads `yes`, `on` and `0755`
//! otherwise (a boolean, a boolean, an octal number). `saphyr-parser` is a pure-Rust, event-based
//! parser that passes the YAML test suite; the events are turned into JSON here, so the bounds
//! (nesting, nodes, aliases expanded) are checked while parsing, before anything is built.

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};
use serde_json::{Map, Number, Value};

/// The largest frontmatter read (the text between the two `---` lines).
pub(crate) const MAX_FRONTMATTER: usize = 64 * 1024;
/// The deepest nesting of mappings and sequences.
const MAX_DEPTH: usize = 32;
/// The most nodes a frontmatter may make, aliases expanded (a "billion laughs" stops here).
const MAX_NODES: usize = 20_000;

/// Why a frontmatter cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The file does not start with a `---` line closed by another.
    #[error("it does not start with a YAML frontmatter between two `---` lines")]
    Missing,
    /// Larger than the frontmatter may be (64 KiB).
    #[error("its frontmatter is larger than {MAX_FRONTMATTER} bytes")]
    TooLarge,
    /// Not YAML, or YAML that is not one mapping with string keys.
    #[error("its frontmatter is not valid: {0}")]
    Invalid(String),
    /// Nested deeper than allowed, or too many nodes.
    #[error("its frontmatter is too deeply nested or too large once its aliases are expanded")]
    TooComplex,
}

/// The frontmatter of `text` (a whole `SKILL.md`; a leading byte order mark is skipped) as a
/// JSON object.
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let yaml = split(text)?;
    if yaml.len() > MAX_FRONTMATTER {
        return Err(FrontmatterError::TooLarge);
    }
    match to_json(yaml)? {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        _ => Err(FrontmatterError::Invalid("it is not a mapping of keys to values".into())),
    }
}

/// The YAML between the opening `---` line and the closing one.
fn split(text: &str) -> Result<&str, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(FrontmatterError::Missing)?;
    // The closing line: `---` alone, right at the start or after a newline.
    let mut at = 0;
    loop {
        let line_end = rest[at..].find('\n').map(|i| at + i);
        let line = &rest[at..line_end.unwrap_or(rest.len())];
        if line.trim_end_matches('\r') == "---" {
            return Ok(&rest[..at]);
        }
        match line_end {
            Some(end) => at = end + 1,
            None => return Err(FrontmatterError::Missing),
        }
    }
}

/// A collection being built.
enum Open {
    Seq(Vec<Value>, usize),
    /// The mapping, the key waiting for its value, the anchor.
    Map(Map<String, Value>, Option<String>, usize),
}

/// One YAML document as JSON.
fn to_json(yaml: &str) -> Result<Value, FrontmatterError> {
    let invalid = |e: String| FrontmatterError::Invalid(e);
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Value> = HashMap::new();
    let mut nodes = 0usize;
    let mut done: Option<Value> = None;
    let mut documents = 0;
    for event in Parser::new_from_str(yaml) {
        let (event, _) = event.map_err(|e| invalid(e.to_string()))?;
        let (value, anchor) = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(invalid("it holds more than one YAML document".into()));
                }
                continue;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(FrontmatterError::TooComplex);
                }
                stack.push(match event {
                    Event::SequenceStart(..) => Open::Seq(Vec::new(), anchor),
                    _ => Open::Map(Map::new(), None, anchor),
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq(items, anchor)) => (Value::Array(items), anchor),
                Some(Open::Map(map, None, anchor)) => (Value::Object(map), anchor),
                _ => return Err(invalid("an unbalanced mapping".into())),
            },
            Event::Scalar(text, style, anchor, tag) => (scalar(text, style, tag.as_deref())?, anchor),
            Event::Alias(id) => {
                let value = anchors.get(&id).cloned().ok_or_else(|| invalid("an unknown alias".into()))?;
                nodes += count(&value);
                if nodes > MAX_NODES {
                    return Err(FrontmatterError::TooComplex);
                }
                (value, 0)
            }
            _ => continue,
        };
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(FrontmatterError::TooComplex);
        }
        if anchor > 0 {
            anchors.insert(anchor, value.clone());
        }
        match stack.last_mut() {
            None => done = Some(value),
            Some(Open::Seq(items, _)) => items.push(value),
            Some(Open::Map(_, key @ None, _)) => {
                *key = Some(match value {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Null => "null".to_owned(),
                    _ => return Err(invalid("a key that is a mapping or a sequence".into())),
                });
            }
            Some(Open::Map(map, key, _)) => {
                if let Some(key) = key.take() {
                    if map.contains_key(&key) {
                        return Err(invalid(format!("the key `{key}` appears twice")));
                    }
                    map.insert(key, value);
                }
            }
        }
    }
    Ok(done.unwrap_or(Value::Null))
}

/// Nodes in `value` (for the bound on aliases expanded).
fn count(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(count).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(count).sum::<usize>(),
        _ => 1,
    }
}

/// A scalar as the core schema resolves it: quoted and block scalars are strings; a plain one
/// is null, a boolean, an integer or a float when it reads as one, else a string. The core
/// schema's tags (`!!str`, `!!int`, ...) say which; other tags are ignored.
fn scalar(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, FrontmatterError> {
    let core = tag.filter(|t| t.handle == "tag:yaml.org,2002:" || t.handle == "!!");
    if let Some(tag) = core {
        let wrong = || FrontmatterError::Invalid(format!("`{text}` is not a !!{}", tag.suffix));
        return match tag.suffix.as_str() {
            "str" => Ok(Value::String(text.into_owned())),
            "null" => plain(&text).filter(Value::is_null).ok_or_else(wrong),
            "bool" => plain(&text).filter(Value::is_boolean).ok_or_else(wrong),
            "int" => plain(&text).filter(|v| v.is_i64() || v.is_u64()).ok_or_else(wrong),
            "float" => plain(&text).filter(Value::is_number).ok_or_else(wrong),
            _ => Ok(plain(&text).unwrap_or_else(|| Value::String(text.into_owned()))),
        };
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.into_owned()));
    }
    Ok(plain(&text).unwrap_or_else(|| Value::String(text.into_owned())))
}

/// What a plain scalar is in the core schema, unless it is a string.
fn plain(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        // Infinity and NaN have no JSON form; a JSON reader sees null.
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF" | ".nan"
        | ".NaN" | ".NAN" => return Some(Value::Null),
        _ => {}
    }
    let (digits, radix) = if let Some(hex) = text.strip_prefix("0x") {
        (hex, 16)
    } else if let Some(octal) = text.strip_prefix("0o") {
        (octal, 8)
    } else {
        ("", 10)
    };
    if radix != 10 {
        // (Beyond 64 bits a hexadecimal or octal number is kept as the text it is.)
        let valid = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
        return valid.then(|| u64::from_str_radix(digits, radix).ok().map(Value::from)).flatten();
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<i64>() {
            return Some(Value::from(n));
        }
        if !text.starts_with('-')
            && let Ok(n) = unsigned.parse::<u64>()
        {
            return Some(Value::from(n));
        }
        return float(text);
    }
    if is_core_float(text) { float(text) } else { None }
}

/// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
fn is_core_float(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match fraction {
        Some(f) if whole.is_empty() => !f.is_empty() && digits(f),
        Some(f) => !whole.is_empty() && digits(whole) && digits(f),
        None => !whole.is_empty() && digits(whole),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

fn float(text: &str) -> Option<Value> {
    let cleaned = text.strip_prefix('+').unwrap_or(text);
    let parsed = match cleaned.strip_prefix("0x").or_else(|| cleaned.strip_prefix("0o")) {
        Some(_) => return None,
        None => cleaned.parse::<f64>().ok()?,
    };
    Some(Number::from_f64(parsed).map_or(Value::Null, Value::Number))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn front(yaml: &str) -> Result<Map<String, Value>, FrontmatterError> {
        parse(&format!("---\n{yaml}---\n# Body\n"))
    }

    #[test]
    fn the_core_schema_of_yaml_1_2() {
        let got = front(
            "name: a\nyes_is: yes\non_is: on\noctal: 0o17\nold_octal: 0755\nhex: 0x1F\nt: true\nn: ~\n\
             f: 1.5\nexp: 1e3\nq: '12'\nlist: [1, two]\nnested: {k: v}\nblock: |\n  line\n",
        )
        .expect("valid");
        assert_eq!(
            Value::Object(got),
            json!({"name": "a", "yes_is": "yes", "on_is": "on", "octal": 15, "old_octal": 755, "hex": 31,
                   "t": true, "n": null, "f": 1.5, "exp": 1000.0, "q": "12", "list": [1, "two"],
                   "nested": {"k": "v"}, "block": "line\n"})
        );
    }

    #[test]
    fn a_bom_and_crlf_lines_are_fine() {
        let got = parse("\u{feff}---\r\nname: a\r\n---\r\nbody").expect("valid");
        assert_eq!(got["name"], "a");
    }

    #[test]
    fn what_is_refused() {
        assert_eq!(parse("# no frontmatter\n"), Err(FrontmatterError::Missing));
        assert_eq!(parse("---\nname: a\n"), Err(FrontmatterError::Missing));
        assert!(matches!(front("- a\n- b\n"), Err(FrontmatterError::Invalid(_))));
        assert!(matches!(front("a: 1\na: 2\n"), Err(FrontmatterError::Invalid(_))));
        assert!(matches!(front("a: [\n"), Err(FrontmatterError::Invalid(_))));
        assert_eq!(
            front(&format!("a: '{}'\n", "x".repeat(MAX_FRONTMATTER))),
            Err(FrontmatterError::TooLarge)
        );
    }

    #[test]
    fn hostile_nesting_and_aliases_stop_early() {
        // Flow nesting stops in the parser, block nesting here.
        let deep = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        assert!(front(&deep).is_err());
        let block: String = (0..40).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect();
        assert_eq!(front(&format!("{block}{}x: 1\n", "  ".repeat(40))), Err(FrontmatterError::TooComplex));
        let mut laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n".to_owned();
        for i in 1..10 {
            let p = i - 1;
            laughs
                .push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
        }
        assert_eq!(front(&laughs), Err(FrontmatterError::TooComplex));
        let small = front("base: &b {k: v}\ncopy: *b\n").expect("a small alias is fine");
        assert_eq!(small["copy"], json!({"k": "v"}));
    }
}
