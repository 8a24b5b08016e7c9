//! The compiler: a schema's keywords, one by one, into checks. A keyword it does not know is
//! refused (naming it), as is a malformed value, a `$ref` that leads nowhere or round in a cycle
//! without descending into the value, and a `pattern` the regex engine refuses.

use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::compiled::{Check, Node, NodeId, Validator};
use super::numbers::is_integer;
use super::types::{JsonType, Types};
use crate::schema::pointer::join_segment;

/// Deepest schema nesting compiled (each nested schema object or array is a level).
pub const MAX_SCHEMA_DEPTH: usize = 64;
/// Most bytes one compiled `pattern` may take (the `regex` crate's size limit).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Keywords that carry no assertion here: ignored, as the [module docs](super) list.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
    "$id",
    "$anchor",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

impl Validator {
    /// Compiles `schema` (see the [module docs](super) for what it may contain). The error names the
    /// problem and where it is in the schema: an unknown keyword, a malformed value, a `$ref`
    /// that leads nowhere, a pattern the regex engine refuses.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        let mut compiler = Compiler { root: schema, nodes: Vec::new(), by_pointer: HashMap::new() };
        compiler.pointer("", 0)?;
        // Every definition compiles, used or not: an unknown keyword is never left unseen.
        if let Some(Value::Object(defs)) = schema.get("$defs") {
            for name in defs.keys() {
                compiler.pointer(&join_segment("/$defs", name), 0)?;
            }
        }
        let validator = Self { nodes: compiler.nodes };
        validator.check_cycles()?;
        Ok(validator)
    }

    /// Refuses a `$ref` cycle that comes back to a schema without descending into the value
    /// (`{"anyOf": [{"$ref": "#"}]}`): validating with it would never end. A cycle through
    /// `properties`, `items`, ... is fine: each turn goes one level deeper into the instance.
    fn check_cycles(&self) -> Result<(), String> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut marks = vec![Mark::New; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if marks[start] != Mark::New {
                continue;
            }
            // Depth-first, without recursion: (node, next edge to follow).
            let mut stack = vec![(start, 0)];
            marks[start] = Mark::Open;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let edges = self.same_value_edges(node);
                if let Some(&to) = edges.get(*next) {
                    *next += 1;
                    match marks[to] {
                        Mark::Open => {
                            return Err("a `$ref` leads back to its own schema without descending into the \
                                        value (validation would never end)"
                                .to_owned());
                        }
                        Mark::New => {
                            marks[to] = Mark::Open;
                            stack.push((to, 0));
                        }
                        Mark::Done => {}
                    }
                } else {
                    marks[node] = Mark::Done;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    /// The nodes that `node` applies to the same value (not to a child of it).
    fn same_value_edges(&self, node: NodeId) -> Vec<NodeId> {
        let mut edges = Vec::new();
        for check in &self.nodes[node].checks {
            match check {
                Check::Ref(n) | Check::Not(n) => edges.push(*n),
                Check::AnyOf(ns) | Check::OneOf(ns) | Check::AllOf(ns) => edges.extend(ns),
                Check::If { condition, then, otherwise } => {
                    edges.push(*condition);
                    edges.extend(then.iter().chain(otherwise));
                }
                _ => {}
            }
        }
        edges
    }
}

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// Nodes already compiled (or being compiled) for a JSON pointer into the root: a `$ref`
    /// resolves to the same node, so a recursive schema is a cycle of nodes.
    by_pointer: HashMap<String, NodeId>,
}

impl Compiler<'_> {
    /// The node of the subschema at `pointer` in the root (compiled once).
    fn pointer(&mut self, pointer: &str, depth: usize) -> Result<NodeId, String> {
        if let Some(&id) = self.by_pointer.get(pointer) {
            return Ok(id);
        }
        let root = self.root;
        let schema =
            root.pointer(pointer).ok_or_else(|| format!("`$ref` to `#{pointer}`: no such schema"))?;
        let id = self.reserve();
        self.by_pointer.insert(pointer.to_owned(), id);
        self.fill(id, schema, pointer, depth)?;
        Ok(id)
    }

    fn reserve(&mut self) -> NodeId {
        self.nodes.push(Node::default());
        self.nodes.len() - 1
    }

    /// A new node for the subschema at `at` (the keyword path, for messages and `$ref`s).
    fn node(&mut self, schema: &Value, at: &str, depth: usize) -> Result<NodeId, String> {
        let id = self.reserve();
        self.fill(id, schema, at, depth)?;
        Ok(id)
    }

    fn fill(&mut self, id: NodeId, schema: &Value, at: &str, depth: usize) -> Result<(), String> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!("the schema is nested deeper than {MAX_SCHEMA_DEPTH} levels at `{at}`"));
        }
        let checks = match schema {
            Value::Bool(true) => Vec::new(),
            Value::Bool(false) => vec![Check::False],
            Value::Object(o) => self.checks(id, o, at, depth)?,
            other => {
                return Err(format!("`{}`: a schema must be an object or a boolean, not {other}", here(at)));
            }
        };
        self.nodes[id].checks = checks;
        Ok(())
    }

    fn checks(
        &mut self,
        owner: NodeId,
        o: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<Vec<Check>, String> {
        let mut checks = Vec::new();
        let sub = |key: &str| join_segment(at, key);
        for (key, value) in o {
            let path = sub(key);
            let check = match key.as_str() {
                "type" => Check::Type(types(value, &path)?),
                "enum" => match value {
                    Value::Array(_) => Check::Enum(value.clone()),
                    _ => return Err(format!("`{}` must be an array", here(&path))),
                },
                "const" => Check::Const(value.clone()),
                "properties" => {
                    let mut props = Vec::new();
                    for (name, schema) in object(value, &path)? {
                        props.push((name.clone(), self.node(schema, &join_segment(&path, name), depth + 1)?));
                    }
                    Check::Properties(props)
                }
                "patternProperties" => {
                    let mut patterns = Vec::new();
                    for (pattern, schema) in object(value, &path)? {
                        let re = regex(pattern, &path)?;
                        patterns.push((re, self.node(schema, &join_segment(&path, pattern), depth + 1)?));
                    }
                    Check::PatternProperties(patterns)
                }
                "additionalProperties" => {
                    let known = match o.get("properties") {
                        Some(Value::Object(p)) => p.keys().cloned().collect(),
                        _ => Vec::new(),
                    };
                    let mut patterns = Vec::new();
                    if let Some(Value::Object(p)) = o.get("patternProperties") {
                        for pattern in p.keys() {
                            patterns.push(regex(pattern, &sub("patternProperties"))?);
                        }
                    }
                    let schema = match value {
                        Value::Bool(false) => None,
                        _ => Some(self.node(value, &path, depth + 1)?),
                    };
                    Check::Additional { known, patterns, schema }
                }
                "unevaluatedProperties" => {
                    let known = match o.get("properties") {
                        Some(Value::Object(p)) => p.keys().cloned().collect(),
                        _ => Vec::new(),
                    };
                    let schema = match value {
                        Value::Bool(false) => None,
                        _ => Some(self.node(value, &path, depth + 1)?),
                    };
                    Check::Unevaluated { owner, known, schema }
                }
                "propertyNames" => Check::PropertyNames(self.node(value, &path, depth + 1)?),
                "required" => Check::Required(strings(value, &path)?),
                "minProperties" => Check::MinProperties(count(value, &path)?),
                "maxProperties" => Check::MaxProperties(count(value, &path)?),
                "dependentRequired" => {
                    let mut deps = Vec::new();
                    for (name, wanted) in object(value, &path)? {
                        deps.push((name.clone(), strings(wanted, &join_segment(&path, name))?));
                    }
                    Check::DependentRequired(deps)
                }
                "prefixItems" => Check::PrefixItems(self.list(value, &path, depth)?),
                "items" => {
                    let skip = o.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
                    Check::Items { skip, node: self.node(value, &path, depth + 1)? }
                }
                "minItems" => Check::MinItems(count(value, &path)?),
                "maxItems" => Check::MaxItems(count(value, &path)?),
                "uniqueItems" => match value {
                    Value::Bool(true) => Check::UniqueItems,
                    Value::Bool(false) => continue,
                    _ => return Err(format!("`{}` must be a boolean", here(&path))),
                },
                "contains" => {
                    let min = match o.get("minContains") {
                        Some(v) => count(v, &sub("minContains"))?,
                        None => 1,
                    };
                    let max = o.get("maxContains").map(|v| count(v, &sub("maxContains"))).transpose()?;
                    Check::Contains { node: self.node(value, &path, depth + 1)?, min, max }
                }
                "minContains" | "maxContains" => {
                    count(value, &path)?;
                    continue;
                }
                "minimum" => Check::Minimum(num(value, &path)?),
                "maximum" => Check::Maximum(num(value, &path)?),
                "exclusiveMinimum" => Check::ExclusiveMinimum(num(value, &path)?),
                "exclusiveMaximum" => Check::ExclusiveMaximum(num(value, &path)?),
                "multipleOf" => {
                    let m = num(value, &path)?;
                    if m.as_f64().is_none_or(|f| f <= 0.0) {
                        return Err(format!("`{}` must be greater than 0", here(&path)));
                    }
                    Check::MultipleOf(m)
                }
                "minLength" => Check::MinLength(count(value, &path)?),
                "maxLength" => Check::MaxLength(count(value, &path)?),
                "pattern" => match value {
                    Value::String(p) => Check::Pattern(regex(p, &path)?),
                    _ => return Err(format!("`{}` must be a string", here(&path))),
                },
                "anyOf" => Check::AnyOf(self.list(value, &path, depth)?),
                "oneOf" => Check::OneOf(self.list(value, &path, depth)?),
                "allOf" => Check::AllOf(self.list(value, &path, depth)?),
                "not" => Check::Not(self.node(value, &path, depth + 1)?),
                "if" => {
                    let condition = self.node(value, &path, depth + 1)?;
                    let then = o.get("then").map(|s| self.node(s, &sub("then"), depth + 1)).transpose()?;
                    let otherwise =
                        o.get("else").map(|s| self.node(s, &sub("else"), depth + 1)).transpose()?;
                    Check::If { condition, then, otherwise }
                }
                // Without `if`, `then` and `else` assert nothing (still compiled: no unknown
                // keyword hides in them).
                "then" | "else" => {
                    if !o.contains_key("if") {
                        self.node(value, &path, depth + 1)?;
                    }
                    continue;
                }
                "$ref" => Check::Ref(self.reference(value, &path, depth)?),
                "$defs" => {
                    // Compiled from the root (`Validator::compile`), or when a `$ref` reaches
                    // them; nested `$defs` are compiled here.
                    for (name, schema) in object(value, &path)? {
                        let pointer = join_segment(&path, name);
                        if !self.by_pointer.contains_key(&pointer) && !at.is_empty() {
                            let id = self.reserve();
                            self.by_pointer.insert(pointer.clone(), id);
                            self.fill(id, schema, &pointer, depth + 1)?;
                        }
                    }
                    continue;
                }
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => continue,
                other => {
                    return Err(format!(
                        "unsupported keyword `{other}` at `{}` (teaagent validates a subset of JSON Schema \
                         2020-12; see teaagent_core::schema::validate)",
                        here(at)
                    ));
                }
            };
            checks.push(check);
        }
        Ok(checks)
    }

    fn list(&mut self, value: &Value, at: &str, depth: usize) -> Result<Vec<NodeId>, String> {
        let Value::Array(items) = value else {
            return Err(format!("`{}` must be an array of schemas", here(at)));
        };
        if items.is_empty() {
            return Err(format!("`{}` must not be empty", here(at)));
        }
        let mut nodes = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            nodes.push(self.node(item, &format!("{at}/{i}"), depth + 1)?);
        }
        Ok(nodes)
    }

    fn reference(&mut self, value: &Value, at: &str, depth: usize) -> Result<NodeId, String> {
        let Some(target) = value.as_str() else {
            return Err(format!("`{}` must be a string", here(at)));
        };
        let Some(pointer) = target.strip_prefix('#') else {
            return Err(format!(
                "`{}`: only local references (`#`, `#/$defs/NAME`) are supported, not `{target}`",
                here(at)
            ));
        };
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!(
                "`{}`: only JSON-pointer references are supported, not `{target}`",
                here(at)
            ));
        }
        // A JSON pointer in a URI fragment may be percent-encoded.
        let pointer = percent_decode(pointer);
        self.pointer(&pointer, depth + 1)
    }
}

/// A schema location for messages: `#` for the root, `#/properties/x` below it.
fn here(at: &str) -> String {
    format!("#{at}")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn types(value: &Value, at: &str) -> Result<Types, String> {
    let one = |v: &Value| {
        v.as_str()
            .and_then(JsonType::parse)
            .map(JsonType::bit)
            .ok_or_else(|| format!("`{}`: `{v}` is not a JSON Schema type", here(at)))
    };
    match value {
        Value::Array(items) => {
            let mut bits = 0;
            for item in items {
                bits |= one(item)?;
            }
            Ok(Types(bits))
        }
        other => Ok(Types(one(other)?)),
    }
}

fn object<'v>(value: &'v Value, at: &str) -> Result<&'v Map<String, Value>, String> {
    value.as_object().ok_or_else(|| format!("`{}` must be an object", here(at)))
}

fn strings(value: &Value, at: &str) -> Result<Vec<String>, String> {
    let items = value.as_array().ok_or_else(|| format!("`{}` must be an array of strings", here(at)))?;
    items
        .iter()
        .map(|v| {
            v.as_str().map(str::to_owned).ok_or_else(|| format!("`{}` must be an array of strings", here(at)))
        })
        .collect()
}

/// A non-negative integer keyword (`minLength`, `maxItems`, ...); `2.0` counts as `2`.
fn count(value: &Value, at: &str) -> Result<u64, String> {
    let n = value.as_number().filter(|n| is_integer(n));
    n.and_then(|n| n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)))
        .ok_or_else(|| format!("`{}` must be a non-negative integer", here(at)))
}

fn num(value: &Value, at: &str) -> Result<Number, String> {
    value.as_number().cloned().ok_or_else(|| format!("`{}` must be a number", here(at)))
}

fn regex(pattern: &str, at: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(pattern).size_limit(REGEX_SIZE_LIMIT).build().map_err(|e| {
        format!("`{}`: the pattern `{pattern}` is not supported (Rust `regex` syntax: no look-around, no backreferences): {e}", here(at))
    })
}
