//! The `#[tool]` attribute of [teaagent](https://docs.rs/teaagent-core): a plain Rust function
//! becomes a checked, client-safe, registered MCP tool.
//!
//! Use it through `teaagent_core::tool`; its documentation is there. This crate is laid out like
//! serde_derive: `attr` parses the attribute, `ast` models the function, `check` applies
//! every rule (errors accumulated in `ctxt`), `codegen` emits the tool and `fallback` emits
//! the original function next to the errors when something is wrong; `suggest` finds the key a
//! misspelled one stands for.

mod ast;
mod attr;
mod check;
mod codegen;
mod ctxt;
mod fallback;
mod suggest;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool. See `teaagent_core::tool` for the full documentation.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(attr.into(), item.into()).into()
}

fn expand(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => {
            let error = syn::Error::new(
                proc_macro2::Span::call_site(),
                "`#[tool]` goes on a function: `fn name(...) -> ...` or `async fn name(...) -> ...`",
            )
            .to_compile_error();
            return quote::quote!(#error #item);
        }
    };
    let cx = ctxt::Ctxt::default();
    let attr = attr::parse(&cx, attr);
    let model = ast::ToolFn::from_fn(&cx, func);
    let checked = check::check(&cx, &attr, &model);
    match cx.finish() {
        Ok(()) => codegen::expand(&model, &checked),
        Err(errors) => fallback::emit(&model.item, errors),
    }
}
