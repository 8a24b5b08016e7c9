//! Every rule of a tool definition (README, "Write your first tool") that can be checked at compile time, with all errors reported together.
//! The result is the tool as codegen needs it: names, texts and flags settled, defaults applied.

use proc_macro2::Span;
use quote::ToTokens;
use syn::{FnArg, Path, Safety, Type};

use crate::ast::{Kind, Role, ToolFn, is_state, is_string, option_inner};
use crate::attr::ToolAttr;
use crate::ctxt::Ctxt;
use crate::suggest;

/// The tier names, for messages.
const TIERS: &str = "`low`, `medium`, `high` or `critical`";

/// The same names, for matching and "did you mean".
const TIER_NAMES: &[&str] = &["low", "medium", "high", "critical"];

/// A tool that passed every check.
pub(crate) struct Checked {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    /// `None`: the default for the flags.
    pub(crate) tier: Option<&'static str>,
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub(crate) stateful: bool,
    pub(crate) open_world: bool,
    pub(crate) rate_limit: Option<(u64, f64)>,
    pub(crate) timeout_secs: Option<u64>,
    /// `Some("Optional" | "Required")`: the tool runs as a task (`TaskSupport`'s variant).
    pub(crate) task: Option<&'static str>,
    /// `task_start = "body"`: the body says when the call becomes a task.
    pub(crate) task_from_body: bool,
    pub(crate) krate: Path,
    /// Left out of link-time registration (listed explicitly only).
    pub(crate) unregistered: bool,
    /// The `#[args]` parameter's index, if any.
    pub(crate) args: Option<usize>,
    /// `input_schema = path`: the function giving the input schema as written.
    pub(crate) input_schema: Option<Path>,
}

/// Checks the attribute and the function together.
pub(crate) fn check(cx: &Ctxt, attr: &ToolAttr, f: &ToolFn) -> Checked {
    let name = match &attr.name {
        Some(lit) => {
            let name = lit.value();
            check_name(cx, &name, lit.span(), NameFrom::Attribute);
            name
        }
        None => {
            let name = f.ident.to_string().trim_start_matches("r#").to_owned();
            check_name(cx, &name, f.ident.span(), NameFrom::Function);
            name
        }
    };
    let description = match &attr.description {
        Some(lit) if lit.value().trim().is_empty() => {
            cx.error_spanned_by(lit, "`description` must not be empty");
            String::new()
        }
        Some(lit) => lit.value(),
        None => f.description().unwrap_or_else(|| {
            // A misspelled `description = "..."` has its error already.
            if !attr.misspelled.contains(&"description") {
                cx.error_spanned_by(
                    &f.ident,
                    "a tool needs a description for the model: add a `///` doc comment to the function, or `description = \"...\"`",
                );
            }
            String::new()
        }),
    };
    let tier = attr.tier.as_ref().and_then(|lit| {
        let value = lit.value();
        let tier = TIER_NAMES.iter().copied().find(|t| *t == value);
        if tier.is_none() {
            let message = match suggest::closest(&value, TIER_NAMES) {
                Some(meant) => format!("unknown tier `{value}`; did you mean `{meant}`?"),
                None => format!("unknown tier `{value}`; expected {TIERS}"),
            };
            cx.error_spanned_by(lit, message);
        }
        tier
    });
    if attr.read_only.is_some() {
        if let Some(span) = attr.destructive {
            cx.syn_error(syn::Error::new(
                span,
                "`read_only` contradicts `destructive`: a read-only tool destroys nothing",
            ));
        }
        if let Some(span) = attr.stateful {
            cx.syn_error(syn::Error::new(
                span,
                "`read_only` contradicts `stateful`: a read-only tool changes no state",
            ));
        }
        if let (Some(lit), Some(t)) = (&attr.tier, tier)
            && t != "low"
        {
            cx.error_spanned_by(
                lit,
                format!("a `read_only` tool is tier `low`, not `{t}`: remove `read_only` or the tier"),
            );
        }
    }
    let rate_limit = attr.rate_limit.as_ref().and_then(|r| {
        if !r.wrote_max_calls {
            cx.syn_error(syn::Error::new(r.span, "`rate_limit` needs `max_calls = N`"));
        }
        if !r.wrote_window {
            cx.syn_error(syn::Error::new(r.span, "`rate_limit` needs `window_secs = W`"));
        }
        Some((r.max_calls?, r.window_secs?))
    });
    let task = attr.task.as_ref().and_then(|(_, value)| {
        let Some(lit) = value else { return Some("Optional") };
        match lit.value().as_str() {
            "optional" => Some("Optional"),
            "required" => Some("Required"),
            other => {
                cx.syn_error(syn::Error::new(
                    lit.span(),
                    format!("`task` is \"optional\" or \"required\", not {other:?} (or write `task` alone: optional)"),
                ));
                None
            }
        }
    });
    let task_from_body = attr.task_start.as_ref().is_some_and(|lit| match lit.value().as_str() {
        _ if attr.task.is_none() => {
            cx.syn_error(syn::Error::new(
                lit.span(),
                "`task_start` is for a tool that runs as a task: add `task` (or `task = \"required\"`)",
            ));
            false
        }
        "call" => false,
        "body" => true,
        other => {
            cx.syn_error(syn::Error::new(
                lit.span(),
                format!("`task_start` is \"call\" (the default: a task before the body runs) or \"body\" (when the body calls `ctx.continue_as_task()`), not {other:?}"),
            ));
            false
        }
    });
    check_signature(cx, f);
    let args = check_params(cx, f);
    check_headers(cx, attr, f);
    Checked {
        name,
        description,
        title: attr.title.as_ref().map(syn::LitStr::value),
        tier,
        read_only: attr.read_only.is_some(),
        destructive: attr.destructive.is_some(),
        idempotent: attr.idempotent.is_some(),
        stateful: attr.stateful.is_some(),
        open_world: attr.open_world.is_some(),
        rate_limit,
        timeout_secs: attr.timeout_secs,
        task,
        task_from_body,
        krate: attr.krate.clone().unwrap_or_else(|| syn::parse_quote!(::teaagent_core)),
        unregistered: attr.unregistered.is_some(),
        args,
        input_schema: attr.input_schema.clone(),
    }
}

/// Where a tool's name was written.
#[derive(Clone, Copy)]
enum NameFrom {
    /// `name = "..."`.
    Attribute,
    /// The function's name (no `name = "..."`).
    Function,
}

/// The longest tool name every client accepts.
const MAX_NAME: usize = 64;

fn check_name(cx: &Ctxt, name: &str, span: Span, from: NameFrom) {
    let allowed = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if name.is_empty() || !allowed {
        cx.syn_error(syn::Error::new(
            span,
            format!("invalid tool name `{name}`: use 1 to {MAX_NAME} of `A-Z`, `a-z`, `0-9`, `_` and `-` (the names every client accepts)"),
        ));
    } else if name.len() > MAX_NAME {
        // Only ASCII is left: bytes are characters.
        let length = name.len();
        let message = match from {
            NameFrom::Attribute => {
                format!("tool name of {length} characters: clients accept at most {MAX_NAME}; shorten it")
            }
            NameFrom::Function => format!(
                "the tool is named after the function, whose name has {length} characters: clients accept at most {MAX_NAME}; give the tool a shorter one with `#[tool(name = \"...\")]` (the function keeps its own)"
            ),
        };
        cx.syn_error(syn::Error::new(span, message));
    }
}

fn check_signature(cx: &Ctxt, f: &ToolFn) {
    let sig = &f.item.sig;
    if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
        let written = match &receiver.kind {
            syn::ReceiverKind::Reference(_, _, Some(_)) => "&mut self",
            syn::ReceiverKind::Reference(_, _, None) => "&self",
            _ => "self",
        };
        cx.error_spanned_by(
            receiver,
            format!(
                "a tool is a free function, not a method: move `{}` out of the `impl` and drop `{written}`; for data the tool shares, take a `State<T>` parameter (`State(data): State<T>`) and give the server the value with `Server::new(registry).state(value)`",
                f.ident
            ),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "a tool function cannot be generic: its schema must be known at compile time",
        );
    }
    if let Safety::Unsafe(token) = &sig.safety {
        cx.error_spanned_by(token, "a tool function cannot be `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a tool function cannot have an `extern` ABI");
    }
    if let Some(constness) = &sig.constness {
        cx.error_spanned_by(constness, "a tool function cannot be `const`");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic.dots, "a tool function cannot be variadic");
    }
    if let Some(Type::ImplTrait(t)) = &f.ret {
        cx.error_spanned_by(
            t,
            "return a concrete type (`String`, `Json<T>`, `CallToolResult`, ...), not `impl Trait`",
        );
    }
}

/// Checks the parameters; returns the index of the `#[args]` parameter.
fn check_params(cx: &Ctxt, f: &ToolFn) -> Option<usize> {
    let mut context_seen = false;
    let mut args_at = None;
    for (i, p) in f.params.iter().enumerate() {
        if matches!(p.kind, Kind::State) {
            check_state_param(cx, p);
            continue;
        }
        if p.ident.is_none() {
            cx.error_spanned_by(&p.pat, "a tool parameter needs a plain name (`name: Type`): the name is its property in the input schema");
        }
        if contains_impl_trait(&p.ty) {
            cx.error_spanned_by(&p.ty, "a tool parameter cannot be `impl Trait`: use a concrete type that implements `Deserialize` and `JsonSchema`");
        }
        if p.is_context() {
            if matches!(p.kind, Kind::ContextMut) {
                cx.error_spanned_by(&p.ty, "take the context as `&ToolContext`, not `&mut ToolContext`");
            }
            if context_seen {
                cx.error_spanned_by(&p.ty, "a tool takes at most one `&ToolContext` parameter");
            }
            context_seen = true;
            if let Some(role) = &p.role {
                cx.error_spanned_by(
                    &role.attr,
                    format!("`#[{}]` marks an argument, not the context", role.role.name()),
                );
            }
            if let Some(attr) = &p.args_attr {
                cx.error_spanned_by(attr, "`#[args]` marks an arguments struct, not the context");
            }
            for attr in &p.schema_attrs {
                cx.error_spanned_by(
                    attr,
                    "`#[schemars(...)]` shapes an argument's schema; the context has none",
                );
            }
            continue;
        }
        if let Some(borrowed) = find_reference(&p.ty).filter(|_| !contains_impl_trait(&p.ty)) {
            cx.error_spanned_by(
                borrowed,
                format!(
                    "a tool parameter cannot borrow: arguments are deserialized into owned values; use {}",
                    owned_for(&borrowed.elem)
                ),
            );
        }
        if let Kind::Optional(inner) = &p.kind
            && is_state(inner)
        {
            cx.error_spanned_by(
                &p.ty,
                "state is always there (a server not given it does not start): take `State<T>`, not `Option<State<T>>`",
            );
        }
        if let Some(attr) = &p.args_attr {
            if args_at.is_some() {
                cx.error_spanned_by(attr, "only one parameter can be `#[args]`");
            }
            args_at = Some(i);
            if let Some(role) = &p.role {
                cx.error_spanned_by(
                    &role.attr,
                    format!("`#[{}]` cannot mark an `#[args]` struct", role.role.name()),
                );
            }
            for attr in &p.schema_attrs {
                cx.error_spanned_by(
                    attr,
                    "`#[schemars(...)]` goes on the fields of an `#[args]` struct (or on the struct itself), not on the parameter",
                );
            }
        }
        if let Some(role) = &p.role {
            let ok = is_string(&p.ty) || option_inner(&p.ty).is_some_and(is_string);
            if !ok {
                let what = match role.role {
                    Role::Path => "a workspace path",
                    Role::Command => "a shell command line",
                };
                cx.error_spanned_by(
                    &role.attr,
                    format!(
                        "`#[{}]` marks {what}: the parameter must be `String` or `Option<String>`, not `{}`",
                        role.role.name(),
                        p.ty.to_token_stream().to_string().replace(' ', "")
                    ),
                );
            }
        }
    }
    if let Some(at) = args_at {
        for (i, p) in f.params.iter().enumerate() {
            if i != at && !p.is_injected() {
                cx.error_spanned_by(
                    &p.pat,
                    "`#[args]` takes the whole input object: move this parameter into the arguments struct (only `&ToolContext` and `State<T>` parameters may stand beside it)",
                );
            }
        }
    }
    args_at
}

/// The longest header name suffix (`Mcp-Param-` and this) the registry accepts.
const MAX_HEADER_NAME: usize = 64;

/// The types whose values have one text in a header: strings, integers, booleans.
const HEADER_TYPES: &[&str] = &[
    "String", "bool", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "Bounded",
];

/// `#[header("Name")]` on parameters: where it may stand, its name, its type, and no two
/// parameters mirrored into one header (names compared ignoring case, as HTTP does).
fn check_headers(cx: &Ctxt, attr: &ToolAttr, f: &ToolFn) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for p in &f.params {
        let Some(header) = &p.header else { continue };
        let refused = if p.is_context() {
            Some("`#[header]` marks an argument the model sends, not the context")
        } else if matches!(p.kind, Kind::State) {
            Some("`#[header]` marks an argument the model sends; `State<T>` is the server's shared state")
        } else if p.args_attr.is_some() {
            Some(
                "`#[header]` marks one argument, not an `#[args]` struct: put `#[schemars(extend(\"x-mcp-header\" = \"Name\"))]` on the struct's field",
            )
        } else if attr.input_schema.is_some() {
            Some(
                "`#[header]` writes `x-mcp-header` into the generated schema, and `input_schema = ...` replaces it: write `\"x-mcp-header\": \"Name\"` on the property in that schema",
            )
        } else {
            None
        };
        if let Some(message) = refused {
            cx.error_spanned_by(&header.attr, message);
            continue;
        }
        let Some(lit) = &header.name else { continue };
        let name = lit.value();
        let bad = name
            .chars()
            .find(|c| !c.is_ascii() || !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)));
        if name.is_empty() || name.len() > MAX_HEADER_NAME || bad.is_some() {
            let why = match bad {
                _ if name.is_empty() => "it is empty".to_owned(),
                Some(c) => format!("{c:?} cannot appear in a header name"),
                None => format!("it is longer than {MAX_HEADER_NAME} characters"),
            };
            cx.error_spanned_by(
                lit,
                format!("invalid header name {name:?}: {why}; use 1 to {MAX_HEADER_NAME} letters, digits and !#$%&'*+-.^_`|~ (the header is `Mcp-Param-` and this name)"),
            );
            continue;
        }
        let ty = option_inner(&p.ty).unwrap_or(&p.ty);
        if !last_ident(ty).is_some_and(|i| HEADER_TYPES.iter().any(|t| i == *t)) {
            cx.error_spanned_by(
                &p.ty,
                format!(
                    "`#[header]` mirrors a string, integer or boolean argument (one text in a header), not `{}`",
                    p.ty.to_token_stream().to_string().replace(' ', "")
                ),
            );
            continue;
        }
        let property =
            p.ident.as_ref().map(|i| i.to_string().trim_start_matches("r#").to_owned()).unwrap_or_default();
        match seen.iter().find(|(other, _)| other.eq_ignore_ascii_case(&name)) {
            Some((other, first)) => cx.error_spanned_by(
                lit,
                format!("`{first}` is already mirrored into the header `Mcp-Param-{other}`, and header names ignore case: give `{property}` another one"),
            ),
            None => seen.push((name, property)),
        }
    }
}

/// The last path segment's name of a type (`String` of `std::string::String`).
fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

/// A `State<T>` parameter: injected, so none of an argument's attributes apply.
fn check_state_param(cx: &Ctxt, p: &crate::ast::Param) {
    if let Some(role) = &p.role {
        cx.error_spanned_by(
            &role.attr,
            format!(
                "`#[{}]` marks an argument the model sends; `State<T>` is the server's shared state, which the model never sees",
                role.role.name()
            ),
        );
    }
    if let Some(attr) = &p.args_attr {
        cx.error_spanned_by(
            attr,
            "`#[args]` marks the arguments struct the model sends; `State<T>` is the server's shared state: remove `#[args]`",
        );
    }
    for attr in &p.schema_attrs {
        cx.error_spanned_by(
            attr,
            "`#[schemars(...)]` shapes an argument's schema; `State<T>` is not in the schema",
        );
    }
}

/// The first reference in a parameter's type (`&str`, `Option<&[u8]>`, ...). serde cannot
/// deserialize those as owned values, and without this check the user gets serde's
/// "implementation of `Deserialize` is not general enough" on the macro's expansion.
fn find_reference(ty: &Type) -> Option<&syn::TypeReference> {
    find_in_type(ty, &|t| match t {
        Type::Reference(r) => Some(r),
        _ => None,
    })
}

fn contains_impl_trait(ty: &Type) -> bool {
    find_in_type(ty, &|t| matches!(t, Type::ImplTrait(_)).then_some(())).is_some()
}

/// The first type, depth first (the type itself, then what it is made of: referenced, grouped,
/// element and generic argument types), for which `hit` says `Some`.
fn find_in_type<'a, T>(ty: &'a Type, hit: &dyn Fn(&'a Type) -> Option<T>) -> Option<T> {
    if let Some(found) = hit(ty) {
        return Some(found);
    }
    match ty {
        Type::Reference(r) => find_in_type(&r.elem, hit),
        Type::Paren(p) => find_in_type(&p.elem, hit),
        Type::Group(g) => find_in_type(&g.elem, hit),
        Type::Slice(s) => find_in_type(&s.elem, hit),
        Type::Array(a) => find_in_type(&a.elem, hit),
        Type::Tuple(t) => t.elems.iter().find_map(|e| find_in_type(e, hit)),
        Type::Path(p) => p.path.segments.iter().find_map(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(t) => find_in_type(t, hit),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// The owned type to suggest instead of a reference to `elem`.
fn owned_for(elem: &Type) -> String {
    let last = match elem {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    match (elem, last.as_deref()) {
        (_, Some("str")) => "`String`".into(),
        (_, Some("Path")) => "`String` (a `#[path]` if it names a workspace path)".into(),
        (Type::Slice(s), _) => {
            format!("`Vec<{}>`", s.elem.to_token_stream().to_string().replace(' ', ""))
        }
        _ => format!("an owned `{}`", elem.to_token_stream().to_string().replace(' ', "")),
    }
}
