//! When the attribute is misused: the errors, and the function emitted anyway (with the
//! attribute's markers stripped) so the rest of the crate and the IDE keep working. The type of
//! the same name is emitted too, so code that lists the tool reports no follow-on errors.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use crate::ctxt::to_compile_errors;

pub(crate) fn emit(item: &ItemFn, errors: Vec<syn::Error>) -> TokenStream {
    let errors = to_compile_errors(errors);
    // A function with a `self` receiver sits in an `impl`, where no struct may be declared.
    if item.sig.receiver().is_some() {
        return quote!(#errors #item);
    }
    let vis = &item.vis;
    let ident = &item.sig.ident;
    quote! {
        #errors
        #item

        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}
    }
}
