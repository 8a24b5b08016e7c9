//! Parsing the attribute's arguments: `#[tool(read_only, tier = "low", rate_limit(...), ...)]`.
//!
//! Every key is checked here for its syntax (and recorded with its span); the rules between keys
//! live in `check.rs`. An unknown or repeated key is reported and parsing goes on, so one build
//! shows every mistake.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitStr, Path, UnOp};

use crate::ctxt::Ctxt;
use crate::suggest;

/// The keys the attribute accepts, for messages.
pub(crate) const KEYS: &str = "`name`, `description`, `title`, `tier`, `read_only`, `destructive`, `idempotent`, `stateful`, `open_world`, `rate_limit(...)`, `timeout_secs`, `input_schema`, `task`, `task_start`, `unregistered`, `crate`";

/// The flags among them, for "did you mean".
const FLAGS: &[&str] = &["read_only", "destructive", "idempotent", "stateful", "open_world", "unregistered"];

/// The keys that take a value, for "did you mean".
const VALUED: &[&str] = &[
    "name",
    "description",
    "title",
    "tier",
    "rate_limit",
    "timeout_secs",
    "input_schema",
    "task",
    "task_start",
    "crate",
];

/// The keys of `rate_limit(...)`.
const RATE_LIMIT_KEYS: &[&str] = &["max_calls", "window_secs"];

/// `rate_limit(max_calls = N, window_secs = W)`.
pub(crate) struct RateLimitAttr {
    pub(crate) span: Span,
    /// `None` when absent or refused; a refused value was reported where it was written.
    pub(crate) max_calls: Option<u64>,
    pub(crate) window_secs: Option<f64>,
    /// Whether each key was written at all (a refused value, or a misspelled key taken for it, is
    /// not also "missing").
    pub(crate) wrote_max_calls: bool,
    pub(crate) wrote_window: bool,
}

/// The parsed attribute.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) tier: Option<LitStr>,
    pub(crate) read_only: Option<Span>,
    pub(crate) destructive: Option<Span>,
    pub(crate) idempotent: Option<Span>,
    pub(crate) stateful: Option<Span>,
    pub(crate) open_world: Option<Span>,
    pub(crate) unregistered: Option<Span>,
    pub(crate) rate_limit: Option<RateLimitAttr>,
    pub(crate) timeout_secs: Option<u64>,
    /// `input_schema = path::to::fn`: the input schema as written, from that function.
    pub(crate) input_schema: Option<Path>,
    /// `task` (optional) or `task = "optional" | "required"`: the span, and the value if given.
    pub(crate) task: Option<(Span, Option<LitStr>)>,
    /// `task_start = "call" | "body"`: when a call becomes a task.
    pub(crate) task_start: Option<LitStr>,
    pub(crate) krate: Option<Path>,
    /// The keys misspelled ones were taken for ("did you mean"): not also reported missing.
    pub(crate) misspelled: Vec<&'static str>,
}

/// Parses the attribute's tokens, reporting every problem to `cx`.
pub(crate) fn parse(cx: &Ctxt, tokens: TokenStream) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let mut seen: HashMap<String, Span> = HashMap::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_else(|| path_text(&meta.path));
        let span = span_of(&meta.path);
        if seen.insert(key.clone(), span).is_some() {
            cx.syn_error(syn::Error::new(span, format!("duplicate key `{key}` in `#[tool]`")));
            return skip_value(&meta);
        }
        let flag = |slot: &mut Option<Span>| -> syn::Result<()> {
            if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
                cx.syn_error(syn::Error::new(span, format!("`{key}` is a flag: write `{key}` alone")));
                return skip_value(&meta);
            }
            *slot = Some(span);
            Ok(())
        };
        match key.as_str() {
            "read_only" => flag(&mut attr.read_only),
            "destructive" => flag(&mut attr.destructive),
            "idempotent" => flag(&mut attr.idempotent),
            "stateful" => flag(&mut attr.stateful),
            "open_world" => flag(&mut attr.open_world),
            "unregistered" => flag(&mut attr.unregistered),
            "name" => string(cx, &meta, &key, &mut attr.name),
            "description" => string(cx, &meta, &key, &mut attr.description),
            "title" => string(cx, &meta, &key, &mut attr.title),
            "tier" => string(cx, &meta, &key, &mut attr.tier),
            "timeout_secs" => {
                if let Some(n) = integer(cx, &meta, &key)? {
                    attr.timeout_secs = Some(n);
                }
                Ok(())
            }
            "task" => {
                let mut value = None;
                if meta.input.peek(syn::Token![=]) {
                    string(cx, &meta, &key, &mut value)?;
                }
                attr.task = Some((span, value));
                Ok(())
            }
            "task_start" => string(cx, &meta, &key, &mut attr.task_start),
            "rate_limit" => {
                attr.rate_limit = Some(rate_limit(cx, &meta, span)?);
                Ok(())
            }
            "input_schema" => {
                let expr: Expr = meta.value()?.parse()?;
                match expr {
                    Expr::Path(p) if p.qself.is_none() => attr.input_schema = Some(p.path),
                    other => cx.error_spanned_by(
                        other,
                        "`input_schema` takes the path of a function returning the schema: `input_schema = my_schema` (a `fn() -> serde_json::Value`)",
                    ),
                }
                Ok(())
            }
            "crate" => {
                let value = meta.value()?;
                attr.krate = Some(if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse()?
                } else {
                    value.parse()?
                });
                Ok(())
            }
            _ => {
                let (message, meant) = unknown_key(&key, &meta);
                cx.syn_error(syn::Error::new(span, message));
                attr.misspelled.extend(meant);
                skip_value(&meta)
            }
        }
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, tokens) {
        cx.syn_error(e);
    }
    attr
}

/// The message for a key the attribute does not know: the key it most likely stands for (said to
/// be a flag when it is one and a value was given), else every key; and that key, if any.
fn unknown_key(key: &str, meta: &ParseNestedMeta<'_>) -> (String, Option<&'static str>) {
    let keys: Vec<&'static str> = FLAGS.iter().chain(VALUED).copied().collect();
    let Some(meant) = suggest::closest(key, &keys) else {
        return (format!("unknown key `{key}` in `#[tool]`; expected one of {KEYS}"), None);
    };
    let is_flag = FLAGS.contains(&meant);
    let valued = meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren);
    let hint = match meant {
        "rate_limit" => " (`rate_limit(max_calls = N, window_secs = W)`)",
        _ if is_flag && valued => " (a flag: write it alone)",
        _ => "",
    };
    (format!("unknown key `{key}` in `#[tool]`; did you mean `{meant}`?{hint}"), Some(meant))
}

fn string(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str, slot: &mut Option<LitStr>) -> syn::Result<()> {
    let value = meta.value()?;
    let expr: Expr = value.parse()?;
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => *slot = Some(s),
        other => cx.error_spanned_by(other, format!("`{key}` takes a string literal: `{key} = \"...\"`")),
    }
    Ok(())
}

fn integer(cx: &Ctxt, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Option<u64>> {
    let value = meta.value()?;
    let expr: Expr = value.parse()?;
    Ok(match &expr {
        Expr::Lit(ExprLit { lit: Lit::Int(n), .. }) => match n.base10_parse::<u64>() {
            Ok(0) => {
                cx.error_spanned_by(n, format!("`{key}` must be at least 1"));
                None
            }
            Ok(v) => Some(v),
            Err(e) => {
                cx.syn_error(e);
                None
            }
        },
        other => {
            cx.error_spanned_by(other, format!("`{key}` must be a positive integer"));
            None
        }
    })
}

fn rate_limit(cx: &Ctxt, meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<RateLimitAttr> {
    let mut limit = RateLimitAttr {
        span,
        max_calls: None,
        window_secs: None,
        wrote_max_calls: false,
        wrote_window: false,
    };
    if !meta.input.peek(syn::token::Paren) {
        cx.syn_error(syn::Error::new(span, "write `rate_limit(max_calls = N, window_secs = W)`"));
        skip_value(meta)?;
        return Ok(limit);
    }
    let mut misspelled = Vec::new();
    meta.parse_nested_meta(|inner| {
        let key = path_text(&inner.path);
        let inner_span = span_of(&inner.path);
        let wrote = match key.as_str() {
            "max_calls" => &mut limit.wrote_max_calls,
            "window_secs" => &mut limit.wrote_window,
            _ => {
                let message = match suggest::closest(&key, RATE_LIMIT_KEYS) {
                    Some(meant) => {
                        misspelled.push(meant);
                        format!("unknown key `{key}` in `rate_limit`; did you mean `{meant}`?")
                    }
                    None => {
                        format!("unknown key `{key}` in `rate_limit`; expected `max_calls` or `window_secs`")
                    }
                };
                cx.syn_error(syn::Error::new(inner_span, message));
                return skip_value(&inner);
            }
        };
        if std::mem::replace(wrote, true) {
            cx.syn_error(syn::Error::new(inner_span, format!("duplicate key `{key}` in `rate_limit`")));
            return skip_value(&inner);
        }
        let expr: Expr = inner.value()?.parse()?;
        if key == "max_calls" {
            match &expr {
                Expr::Lit(ExprLit { lit: Lit::Int(n), .. }) => match n.base10_parse::<u64>() {
                    Ok(0) => cx.error_spanned_by(
                        n,
                        "`max_calls` must be at least 1: a tool that may never run is a mistake",
                    ),
                    Ok(v) if v > u64::from(u32::MAX) => cx.error_spanned_by(n, "`max_calls` is too large"),
                    Ok(v) => limit.max_calls = Some(v),
                    Err(e) => cx.syn_error(e),
                },
                other => cx.error_spanned_by(other, "`max_calls` must be a positive integer"),
            }
        } else {
            match number(&expr) {
                Some(w) if w > 0.0 && w.is_finite() => limit.window_secs = Some(w),
                Some(_) => cx.error_spanned_by(&expr, "`window_secs` must be positive"),
                None => cx.error_spanned_by(&expr, "`window_secs` must be a number of seconds"),
            }
        }
        Ok(())
    })?;
    limit.wrote_max_calls |= misspelled.contains(&"max_calls");
    limit.wrote_window |= misspelled.contains(&"window_secs");
    Ok(limit)
}

/// An integer or float literal, possibly negated.
fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Int(n), .. }) => n.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit { lit: Lit::Float(n), .. }) => n.base10_parse::<f64>().ok(),
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => number(expr).map(|v| -v),
        _ => None,
    }
}

/// Consumes whatever value follows an unwanted key, so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}

fn path_text(path: &Path) -> String {
    path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::")
}

fn span_of<T: quote::ToTokens>(tokens: &T) -> Span {
    syn::spanned::Spanned::span(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_list_of_messages_names_every_key() {
        for key in FLAGS.iter().chain(VALUED) {
            assert!(KEYS.contains(&format!("`{key}`")) || KEYS.contains(&format!("`{key}(...)`")), "{key}");
        }
        assert_eq!(KEYS.matches('`').count(), 2 * (FLAGS.len() + VALUED.len()));
    }
}
