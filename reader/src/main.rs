//! `drive-reader`: reads one file for `/read-file`. The API starts it for each read with an
//! empty environment, resource limits and no new privileges ([`drive_confine::narrow`]),
//! and hands it a [`ReadRequest`] on stdin: a presigned GET of the one object it may read,
//! what to read, and a folder of its own. Before it starts a thread it confines its files to
//! that folder and the system's, and its connections to the store's port
//! ([`drive_confine::restrict`]); then it reads and answers one [`ReadAnswer`] on stdout. It
//! holds no credential, so whatever hostile bytes make of it reaches nothing but that object.

mod failure;
mod fetch;
mod frame;
mod jpeg;
mod pdf;
mod picture;
mod text;

use std::io::{Read as _, Write};
use std::process::ExitCode;

use drive_domain::read::{Read, ReadAnswer, ReadRequest, Reading};

use crate::failure::Failure;

/// A request is a URL and a few numbers; anything longer is not one.
const MAX_REQUEST_BYTES: u64 = 64 * 1024;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DRIVE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().take(MAX_REQUEST_BYTES).read_to_end(&mut input) {
        tracing::error!("reading the request failed: {e}");
        return ExitCode::FAILURE;
    }
    let request: ReadRequest = match serde_json::from_slice(&input) {
        Ok(request) => request,
        Err(e) => {
            tracing::error!("the request does not parse: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The one port it connects to: the store's, where its object is.
    let Some(port) = reqwest::Url::parse(&request.url)
        .ok()
        .and_then(|url| url.port_or_known_default())
    else {
        tracing::error!("the request's link names no port");
        return ExitCode::FAILURE;
    };
    // Before the runtime starts a thread, so that every thread is bound by it.
    match drive_confine::restrict(&request.dir, &[], &[port]) {
        Ok(restricted) => {
            if let Some(missing) = restricted.missing() {
                tracing::warn!("this kernel leaves the reader unconfined in part: {missing}");
            }
        }
        Err(e) => {
            tracing::error!("the reader could not restrict itself: {e}");
            return ExitCode::FAILURE;
        }
    }
    // SAFETY: no other thread runs yet. What a library writes to temporary files lands in
    // the reader's own folder, the only one it may write to.
    unsafe { std::env::set_var("TMPDIR", &request.dir) };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("the reader could not start its runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let answer = match runtime.block_on(read(&request)) {
        Ok(read) => ReadAnswer::Read(read),
        Err(failure) => failure.into_answer(),
    };
    let written = serde_json::to_writer(std::io::stdout().lock(), &answer)
        .map_err(std::io::Error::from)
        .and_then(|()| std::io::stdout().flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("writing the answer failed: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn read(request: &ReadRequest) -> Result<Read, Failure> {
    let store = fetch::Object::new(&request.url, request.size)?;
    // An object the store does not hand over is its failure, not the file's: asked once
    // here, before any parser could mistake an error page for the file.
    store.check().await?;
    match request.what {
        Reading::Picture => picture::read(&store, &request.dir).await,
        Reading::Frame { at } => frame::read(&request.url, at).await,
        Reading::PdfText { from, to } => pdf::read(&store, from, to).await,
        Reading::Text { offset } => text::read(&store, offset).await,
    }
}
