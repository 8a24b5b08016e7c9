//! Errors accumulated while reading a `#[tool]` function, reported all at once (as serde_derive
//! does), each with the span of the offending token.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// Collects errors; [`Ctxt::finish`] hands them over.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// An error spanning `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.errors.borrow_mut().push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// An error from syn.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// `Ok` when nothing went wrong, else every error in order.
    pub(crate) fn finish(self) -> Result<(), Vec<syn::Error>> {
        let errors = self.errors.into_inner();
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// The `compile_error!`s of some errors.
pub(crate) fn to_compile_errors(errors: Vec<syn::Error>) -> TokenStream {
    errors.into_iter().map(|e| e.to_compile_error()).collect()
}
