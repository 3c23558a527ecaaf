//! Drive's picture pipelines, a pure library: paths in, files out, typed errors.
//!
//! The worker downloads a job's inputs to a temporary directory, calls one of the functions in
//! [`picture`] and uploads what it wrote. Every function is synchronous and CPU-bound (call it from
//! a blocking thread), keeps no global state and is safe to run on several threads at once.
//!
//! Pictures are decoded one way, by what their bytes are: JPEG, PNG, WebP, GIF, BMP and TIFF by
//! `image`, HEIC and AVIF by the system's libheif, camera RAW files (DNG, CR2, NEF, ARW…) by the
//! preview the camera embeds. Every function below reads all of them.
//!
//! - [`picture::convert`]: decode, apply the EXIF orientation, shrink, re-encode as JPEG, PNG or WebP.
//! - [`picture::watermark`]: draw a line of text over a picture.
//! - [`picture::strip_metadata`]: remove EXIF, XMP, IPTC and comments without re-encoding pixels.
//! - [`picture::dimensions`]: read the size from the header alone.
//! - [`picture::upright`], [`picture::upright_rgb`]: the pixels, turned upright (PDF pages, OCR).
//! - [`picture::save_rgba`]: encode pixels rendered elsewhere (PDF pages).
//! - [`analysis::Analyzer`]: tempo, key and a sound print of decoded audio, streamed in chunks.
//!
//! [`picture::PictureError::is_client_error`] tells a bad upload (the job's fault) from a failure of
//! the machine (worth a retry); the error's text is written for the person who ran the job.

pub mod analysis;
pub mod av;
pub mod picture;
