// SPDX-License-Identifier: Apache-2.0

#![allow(
    unused_variables,
    clippy::clone_on_copy,
    clippy::derivable_impls,
    clippy::needless_borrow,
    clippy::explicit_auto_deref,
    clippy::to_string_trait_impl,
    clippy::uninlined_format_args
)]

//! Generated types for text-based definitions.

include!(concat!(env!("OUT_DIR"), "/substrait_text.rs"));
