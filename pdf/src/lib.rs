//! PDF pipelines for Drive's file jobs: merge, extract pages, split, compress, build a PDF from
//! pictures, and render pages to pixels; and the text of its pages ([`TextPages`]), for
//! reading a PDF and indexing one.
//!
//! A pure library: paths in, files out, typed errors ([`PdfError`], whose text is meant for the
//! end user and which tells client errors from server ones), progress reported as a fraction
//! from 0 to 1. The worker downloads the inputs to a temporary folder, calls these, and uploads
//! the outputs.
//!
//! Reading and writing documents is done with `lopdf`, rendering with `hayro` (both pure Rust).
//! Both are fed untrusted files: decompression is bounded, and a panic inside them is caught at
//! each public function and reported as [`PdfError::Unreadable`].

mod assemble;
mod compress;
mod document;
mod error;
mod jpeg;
mod merge;
mod pages;
mod pictures;
mod placement;
mod render;
mod split;
mod text;
mod writer;

pub use compress::{Quality, compress};
pub use error::PdfError;
pub use merge::merge;
pub use pages::{PageRanges, page_count};
pub use pictures::{PageSize, from_pictures};
pub use render::{render_pages, render_pages_then};
pub use split::{extract_pages, split_every};
pub use text::{MAX_PAGE_TEXT, PageText, TextPages};
