//! Emitting the tool: the function unchanged (minus the attribute's own markers), a type of the
//! same name in the type namespace that implements `DefineTool`, and its link-time registration.
//!
//! Every type check is placed on the user's own tokens (`quote_spanned!`), so a parameter type
//! without `Deserialize`/`JsonSchema` or an unsupported return type gets one error, on that type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Kind, Role, ToolFn};
use crate::check::Checked;

pub(crate) fn expand(f: &ToolFn, c: &Checked) -> TokenStream {
    let krate = &c.krate;
    // A tool's parameter list is its input schema: long lists are normal, not a smell.
    let mut item = f.item.clone();
    item.attrs.push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    let vis = &f.item.vis;
    let ident = &f.ident;
    let fn_name = ident.to_string();
    let name = &c.name;
    let description = &c.description;

    // One `Param` per property, checked on the parameter's type.
    let mut setup = Vec::new();
    let mut describe = Vec::new();
    let mut decode = Vec::new();
    let mut values = Vec::new();
    let mut call_args = Vec::new();
    let mut roles = Vec::new();
    let mut args_struct = None;
    let mut states = Vec::new();
    let mut take_states = Vec::new();
    let mut warnings = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let value = format_ident!("__tea_v{}", i);
        match &p.kind {
            Kind::ContextRef => {
                call_args.push(quote!(&__tea_ctx));
                continue;
            }
            Kind::ContextOwned | Kind::ContextMut => {
                call_args.push(quote!(::core::clone::Clone::clone(&__tea_ctx)));
                continue;
            }
            Kind::State => {
                let ty = &p.ty;
                let state = format_ident!("__tea_s{}", i);
                setup.push(quote_spanned! {ty.span()=>
                    let #state = __tea::StateParam::<#ty>::new();
                });
                states.push(quote!(let __tea_def = #state.declare(__tea_def);));
                take_states.push(quote!(let #value = #state.take(&__tea_ctx, #name)?;));
                call_args.push(quote!(#value));
                continue;
            }
            _ => {}
        }
        if c.args == Some(i) {
            call_args.push(quote!(#value));
            let ty = &p.ty;
            setup.push(quote_spanned! {ty.span()=>
                let __tea_args_type = __tea::ArgsType::<#ty>::new();
            });
            args_struct = Some(value);
            continue;
        }
        let Some(param_ident) = &p.ident else { continue };
        let property = param_ident.to_string().trim_start_matches("r#").to_owned();
        let param = format_ident!("__tea_p{}", i);
        let slot = format_ident!("__tea_o{}", i);
        let doc = match p.description() {
            Some(d) => quote!(::core::option::Option::Some(#d)),
            None => quote!(::core::option::Option::None),
        };
        let (ty, required) = match &p.kind {
            Kind::Optional(inner) => (&**inner, false),
            _ => (&p.ty, true),
        };
        // A schema given as written describes its properties itself.
        if p.description().is_none() && !describes_itself(p) && c.input_schema.is_none() {
            warnings.push(undocumented_warning(param_ident, &property));
        }
        if p.schema_attrs.is_empty() {
            call_args.push(quote!(#value));
            setup.push(quote_spanned! {ty.span()=>
                let #param = __tea::Param::<#ty>::new();
            });
        } else {
            // `#[schemars(...)]` goes on the field of a transparent newtype, whose schema is the
            // field's with those attributes applied; the tool gets the field.
            // Named after the parameter and spanned on its attributes: when schemars refuses
            // them (a misspelled key), the one follow-on error names the parameter, there, and
            // says the attributes were refused (`Param::with_attributes`).
            let wrapper = format_ident!("schemars_attributes_of_{}", property);
            let attrs = &p.schema_attrs;
            let attrs_span = attrs.first().map_or_else(|| ty.span(), Spanned::span);
            let serde_crate = format!("{}::__private::serde", path_text(krate));
            let schemars_crate = format!("{}::__private::schemars", path_text(krate));
            setup.push(quote! {
                #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
                #[serde(crate = #serde_crate, transparent)]
                #[schemars(crate = #schemars_crate, transparent)]
                #[allow(non_camel_case_types)]
                struct #wrapper(#(#attrs)* #ty);
            });
            setup.push(quote_spanned! {attrs_span=>
                let #param = __tea::Param::<#wrapper>::with_attributes();
            });
            call_args.push(if required { quote!(#value.0) } else { quote!(#value.map(|__tea_w| __tea_w.0)) });
        }
        describe.push(quote!(#param.describe(&mut __tea_schema, #property, #doc, #required);));
        if let Some(header) = p.header.as_ref().and_then(|h| h.name.as_ref()) {
            describe.push(quote!(__tea_schema.header(#property, #header);));
        }
        decode.push(if required {
            quote!(let #slot = __tea_args.required(#param, #property);)
        } else {
            quote!(let #slot = __tea_args.optional(#param, #property);)
        });
        values.push((slot, value));
        if let Some(role) = &p.role {
            let role = match role.role {
                Role::Path => quote!(__tea::ParamRole::Path),
                Role::Command => quote!(__tea::ParamRole::Command),
            };
            roles.push(quote!(.param_role(#property, #role)));
        }
    }

    let ret_ty = match &f.ret {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    let ret_span = f.ret.as_ref().map_or_else(|| f.ident.span(), Spanned::span);
    let output = quote_spanned! {ret_span=>
        let __tea_out = __tea::Output::<#ret_ty>::new();
    };

    let input_schema = if let Some(path) = &c.input_schema {
        // Spanned on the path: a function of another type gets its error there.
        let written = quote_spanned! {path.span()=>
            {
                let __tea_written: __tea::serde_json::Value = #path();
                __tea_written
            }
        };
        quote!(.input_schema_as_written(#written))
    } else if args_struct.is_some() {
        quote!(.input_schema(__tea_args_type.schema()))
    } else {
        quote! {
            .input_schema({
                let mut __tea_schema = __tea::ObjectSchema::new();
                #(#describe)*
                __tea_schema.finish()
            })
        }
    };

    let decode_block = match &args_struct {
        Some(value) => quote! {
            let #value = __tea_args_type.decode(#name, __tea_object)?;
        },
        None => {
            let slots: Vec<_> = values.iter().map(|(s, _)| s).collect();
            let vals: Vec<_> = values.iter().map(|(_, v)| v).collect();
            quote! {
                let mut __tea_args = __tea::Args::new(#name, __tea_object);
                #(#decode)*
                __tea_args.finish()?;
                let (#(::core::option::Option::Some(#vals),)*) = (#(#slots,)*) else {
                    return ::core::result::Result::Err(__tea::Args::lost(#name));
                };
            }
        }
    };
    let decode_block = quote! {
        #decode_block
        #(#take_states)*
    };

    let invoke =
        if f.is_async { quote!(#ident(#(#call_args),*).await) } else { quote!(#ident(#(#call_args),*)) };
    let handler = if f.is_async {
        quote! {
            __tea::Handler::new(move |__tea_ctx: __tea::ToolContext, __tea_object: __tea::JsonObject| async move {
                #decode_block
                __tea_out.finish(#invoke)
            })
        }
    } else {
        quote! {
            __tea::Handler::blocking(move |__tea_ctx: __tea::ToolContext, __tea_object: __tea::JsonObject| {
                #decode_block
                __tea_out.finish(#invoke)
            })
        }
    };

    let flags = {
        let (ro, d, i, s, ow) = (c.read_only, c.destructive, c.idempotent, c.stateful, c.open_world);
        quote!(__tea::Behavior { read_only: #ro, destructive: #d, idempotent: #i, stateful: #s, open_world: #ow })
    };
    let tier = c.tier.map(|t| {
        let variant = format_ident!("{}", capitalize(t));
        quote!(.tier(__tea::Tier::#variant))
    });
    let title = c.title.as_ref().map(|t| quote!(.title(#t)));
    let rate_limit = c.rate_limit.map(|(max, window)| {
        let max = u32::try_from(max).unwrap_or(u32::MAX);
        quote!(.rate_limit(#max, ::core::time::Duration::from_secs_f64(#window)))
    });
    let timeout = c.timeout_secs.map(|t| quote!(.timeout(::core::time::Duration::from_secs(#t))));
    let task = c.task.map(|support| {
        let variant = format_ident!("{}", support);
        quote!(.task(__tea::TaskSupport::#variant))
    });
    let task_start = c.task_from_body.then(|| quote!(.task_start(__tea::TaskStart::Body)));
    let registration = (!c.unregistered).then(|| {
        quote! {
            const _: () = {
                #krate::__private::inventory::submit! {
                    #krate::__private::ToolRegistration { build: <#ident as #krate::DefineTool>::tool_def }
                }
            };
        }
    });

    quote! {
        #item

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}

        #[automatically_derived]
        impl #krate::DefineTool for #ident {
            fn tool_def() -> #krate::ToolDef {
                use #krate::__private as __tea;
                #(#warnings)*
                #(#setup)*
                #output
                let __tea_def = __tea::ToolDef::builder(#name)
                    .description(#description)
                    .origin(::core::concat!(::core::module_path!(), "::", #fn_name))
                    #input_schema
                    .behavior(#flags)
                    #tier
                    #title
                    #rate_limit
                    #timeout
                    #task
                    #task_start
                    #(#roles)*;
                #(#states)*
                let __tea_def = match __tea_out.schema() {
                    ::core::option::Option::Some(__tea_s) => __tea_def.output_schema(__tea_s),
                    ::core::option::Option::None => __tea_def,
                };
                __tea_def.handler(#handler).build()
            }
        }

        #registration
    }
}

/// Whether a `#[schemars(...)]` attribute gives the property its description.
fn describes_itself(p: &crate::ast::Param) -> bool {
    p.schema_attrs.iter().any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|meta| {
            found |= meta.path.is_ident("description");
            // Skip the value (`= ...` or `(...)`); only the keys matter here.
            if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        });
        found
    })
}

/// A compile-time warning that `property` has no description. Stable proc macros cannot warn,
/// so this uses a `#[deprecated]` constant whose use is spanned on the parameter's name: rustc
/// then prints the note as a warning pointing at the parameter (`deprecated` is warn-by-default,
/// and `#![deny(deprecated)]` makes it an error). The constant is local to `tool_def`.
fn undocumented_warning(param: &syn::Ident, property: &str) -> TokenStream {
    let note = format!(
        "tool parameter `{property}` has no description: the model sees only its name and type; add a `///` doc comment to it"
    );
    let constant = syn::Ident::new(&format!("undocumented_parameter_{property}"), param.span());
    quote! {
        #[deprecated(note = #note)]
        #[allow(non_upper_case_globals)]
        const #constant: () = ();
        #[allow(clippy::let_unit_value)]
        let () = #constant;
    }
}

/// A path as written, without spaces (for `crate = "..."` strings).
fn path_text(path: &syn::Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}
