//! The function as a model: its name, docs, asyncness, parameters with their kinds and roles, and
//! its return type. Building the model also strips what only the attribute understands (`///` on
//! parameters, `#[path]`, `#[command]`, `#[args]`, `#[header(...)]`, `#[schemars(...)]`) from the function that is
//! emitted again; lint attributes (`#[allow(...)]`, ...) stay on it, and any other parameter
//! attribute is refused with the list of those allowed.

use syn::{Attribute, Expr, ExprLit, FnArg, Ident, ItemFn, Lit, LitStr, Meta, Pat, ReturnType, Type};

use quote::ToTokens;

use crate::ctxt::Ctxt;

/// The lint attributes a parameter may carry; they stay on the emitted function.
const LINTS: &[&str] = &["allow", "warn", "deny", "forbid", "expect"];

/// What a parameter may carry, for messages.
pub(crate) const PARAM_ATTRS: &str = "`///` doc comments, `#[schemars(...)]` (e.g. `range(min = 1, max = 10)`, `length(max = 80)`, `regex(pattern = ...)`), `#[path]`, `#[command]`, `#[args]`, `#[header(\"Name\")]` and lint attributes (`#[allow(...)]`, ...)";

/// A `#[tool]` function.
pub(crate) struct ToolFn {
    /// The function, with parameter attributes stripped (what gets emitted).
    pub(crate) item: ItemFn,
    pub(crate) ident: Ident,
    pub(crate) is_async: bool,
    /// The `///` text, one string per line.
    pub(crate) docs: Vec<String>,
    pub(crate) params: Vec<Param>,
    /// `None` for `-> ()` written or implied.
    pub(crate) ret: Option<Type>,
}

/// One parameter.
pub(crate) struct Param {
    /// The name (`None` when the pattern is not a plain name; `check` reports it).
    pub(crate) ident: Option<Ident>,
    pub(crate) pat: Pat,
    pub(crate) ty: Type,
    pub(crate) kind: Kind,
    pub(crate) role: Option<RoleAttr>,
    pub(crate) args_attr: Option<Attribute>,
    /// `#[header("Name")]`: the argument is mirrored into the header `Mcp-Param-Name`.
    pub(crate) header: Option<HeaderAttr>,
    /// `#[schemars(...)]` attributes, for the property's schema.
    pub(crate) schema_attrs: Vec<Attribute>,
    pub(crate) docs: Vec<String>,
}

/// What a parameter is to the tool.
pub(crate) enum Kind {
    /// `&ToolContext`: injected.
    ContextRef,
    /// `ToolContext` by value: injected (a clone).
    ContextOwned,
    /// `&mut ToolContext`: refused by `check`.
    ContextMut,
    /// `State<T>` (a type path whose last segment is `State` with one type argument): injected
    /// from the server's state. That it is `teaagent_core::State` is checked by the generated
    /// code (a trait only that type implements), so another `State` gets a clear type error.
    State,
    /// `Option<T>`: an optional property of type `T`.
    Optional(Box<Type>),
    /// Any other type: a required property.
    Required,
}

/// `#[header("Name")]`.
pub(crate) struct HeaderAttr {
    pub(crate) attr: Attribute,
    /// The name; `None` when the attribute was not written `#[header("...")]` (reported).
    pub(crate) name: Option<LitStr>,
}

/// `#[path]` or `#[command]`.
pub(crate) struct RoleAttr {
    pub(crate) attr: Attribute,
    pub(crate) role: Role,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Path,
    Command,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Path => "path",
            Role::Command => "command",
        }
    }
}

impl ToolFn {
    /// Reads `item`; problems of the parameters' own attributes are reported to `cx`.
    pub(crate) fn from_fn(cx: &Ctxt, mut item: ItemFn) -> ToolFn {
        let docs = doc_lines(&item.attrs);
        let mut params = Vec::new();
        for arg in item.sig.inputs.iter_mut() {
            let FnArg::Typed(pt) = arg else { continue };
            let mut docs = Vec::new();
            let mut role: Option<RoleAttr> = None;
            let mut args_attr = None;
            let mut header: Option<HeaderAttr> = None;
            let mut schema_attrs = Vec::new();
            let mut kept = Vec::new();
            for attr in std::mem::take(&mut pt.attrs) {
                if attr.path().is_ident("doc") {
                    docs.extend(doc_lines(std::slice::from_ref(&attr)));
                } else if attr.path().is_ident("path") || attr.path().is_ident("command") {
                    let this = if attr.path().is_ident("path") { Role::Path } else { Role::Command };
                    if !matches!(attr.meta, Meta::Path(_)) {
                        cx.error_spanned_by(&attr, format!("write `#[{}]` alone", this.name()));
                    }
                    match &role {
                        Some(first) if first.role == this => {
                            cx.error_spanned_by(&attr, format!("duplicate `#[{}]`", this.name()));
                        }
                        Some(first) => cx.error_spanned_by(
                            &attr,
                            format!(
                                "a parameter is either `#[{}]` or `#[{}]`, not both",
                                first.role.name(),
                                this.name()
                            ),
                        ),
                        None => role = Some(RoleAttr { attr, role: this }),
                    }
                } else if attr.path().is_ident("args") {
                    if !matches!(attr.meta, Meta::Path(_)) {
                        cx.error_spanned_by(&attr, "write `#[args]` alone");
                    }
                    args_attr = Some(attr);
                } else if attr.path().is_ident("header") {
                    let name = match &attr.meta {
                        Meta::List(_) => attr.parse_args::<LitStr>().ok(),
                        _ => None,
                    };
                    if name.is_none() {
                        cx.error_spanned_by(
                            &attr,
                            "write `#[header(\"Name\")]`: the argument is then also sent as the header `Mcp-Param-Name`",
                        );
                    }
                    if header.is_some() {
                        cx.error_spanned_by(
                            &attr,
                            "duplicate `#[header]`: an argument is mirrored into one header",
                        );
                    } else {
                        header = Some(HeaderAttr { attr, name });
                    }
                } else if attr.path().is_ident("schemars") {
                    schema_attrs.push(attr);
                } else if LINTS.iter().any(|l| attr.path().is_ident(l)) {
                    kept.push(attr);
                } else {
                    let name = attr.path().to_token_stream().to_string().replace(' ', "");
                    let hint = if name == "serde" {
                        "; `#[serde(...)]` belongs on the fields of an `#[args]` struct"
                    } else {
                        ""
                    };
                    cx.error_spanned_by(
                        &attr,
                        format!("unsupported parameter attribute `#[{name}]`{hint}; a tool parameter takes {PARAM_ATTRS}"),
                    );
                }
            }
            pt.attrs = kept;
            let ident = match &*pt.pat {
                Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.clone()),
                _ => None,
            };
            params.push(Param {
                ident,
                pat: (*pt.pat).clone(),
                ty: (*pt.ty).clone(),
                kind: kind_of(&pt.ty),
                role,
                args_attr,
                header,
                schema_attrs,
                docs,
            });
        }
        let ret = match &item.sig.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => match &**ty {
                Type::Tuple(t) if t.elems.is_empty() => None,
                ty => Some(ty.clone()),
            },
        };
        ToolFn {
            ident: item.sig.ident.clone(),
            is_async: item.sig.asyncness.is_some(),
            docs,
            params,
            ret,
            item,
        }
    }

    /// The doc comment as one text: lines joined, one leading space per line removed, trimmed.
    pub(crate) fn description(&self) -> Option<String> {
        join_docs(&self.docs)
    }
}

impl Param {
    pub(crate) fn description(&self) -> Option<String> {
        join_docs(&self.docs)
    }

    pub(crate) fn is_context(&self) -> bool {
        matches!(self.kind, Kind::ContextRef | Kind::ContextOwned | Kind::ContextMut)
    }

    /// Injected by the framework (context or state): not a property of the input object.
    pub(crate) fn is_injected(&self) -> bool {
        self.is_context() || matches!(self.kind, Kind::State)
    }
}

/// Doc lines as the model should read them: the lines of a paragraph joined into one line (the
/// wrapping of source code means nothing to a model), paragraphs separated by a blank line, and
/// lines kept apart where Markdown needs them (lists, tables, headings, code blocks).
fn join_docs(lines: &[String]) -> Option<String> {
    let mut text = String::new();
    let mut in_code = false;
    let mut previous_blank = true;
    for line in lines {
        let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
        let fence = line.trim_start().starts_with("```");
        let structural = line.is_empty()
            || fence
            || in_code
            || line.starts_with(['-', '*', '+', '|', '#', '>'])
            || line
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if line.is_empty() {
            if !text.is_empty() && !previous_blank {
                text.push_str("\n\n");
            }
            previous_blank = true;
        } else {
            if !text.is_empty() && !previous_blank {
                text.push(if structural { '\n' } else { ' ' });
            }
            text.push_str(line);
            previous_blank = false;
        }
        if fence {
            in_code = !in_code;
        }
    }
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The `#[doc = "..."]` strings of some attributes.
fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| if s.is_empty() { vec![String::new()] } else { s.lines().map(str::to_owned).collect() })
        .collect()
}

fn kind_of(ty: &Type) -> Kind {
    match ty {
        Type::Reference(r) if is_context(&r.elem) => {
            if r.mutability.is_some() {
                Kind::ContextMut
            } else {
                Kind::ContextRef
            }
        }
        ty if is_context(ty) => Kind::ContextOwned,
        ty if is_state(ty) => Kind::State,
        ty => match option_inner(ty) {
            Some(inner) => Kind::Optional(Box::new(inner.clone())),
            None => Kind::Required,
        },
    }
}

/// Whether `ty` names `ToolContext` (by its last path segment).
fn is_context(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "ToolContext" && s.arguments.is_none())
}

/// Whether `ty` looks like `State<T>`: last path segment `State` with exactly one type argument.
/// A parameter type named `State` without arguments (an enum of states, say) stays an argument.
pub(crate) fn is_state(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| {
        s.ident == "State"
            && matches!(&s.arguments, syn::PathArguments::AngleBracketed(a)
                if a.args.len() == 1 && matches!(a.args.first(), Some(syn::GenericArgument::Type(_))))
    })
}

/// `T` of `Option<T>` (also `std::option::Option<T>`).
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let segment = last_segment(ty)?;
    if segment.ident != "Option" {
        return None;
    }
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match args.args.first()? {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `ty` is `String` (by its last path segment).
pub(crate) fn is_string(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "String" && s.arguments.is_none())
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}
