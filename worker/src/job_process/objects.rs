//! `Read + Seek` and `Write` over the object store, for the `zip` crate. Neither holds a
//! credential: reads are ranged GETs on the input's presigned URL, writes are PUTs on part
//! URLs the supervisor presigns.
//!
//! - [`ObjectReader`] serves reads from a window fetched with one ranged GET at a time, so a
//!   zip's central directory and its entries are read without downloading the whole archive.
//! - [`ResultWriter`] spools bytes into parts in the job's work folder and sends each as a
//!   multipart part when it fills, streamed from its file a MiB at a time, while the next
//!   fills; memory stays flat (a few buffers) however large the parts and the result, and the
//!   folder holds at most [`PARTS_IN_FLIGHT`] + 1 parts.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use drive_domain::id::FolderId;
use drive_domain::rows::FileRow;
use std::thread::JoinHandle;

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult, Request};

/// Bytes fetched per ranged GET.
const WINDOW: u64 = 8 * 1024 * 1024;

/// A failure of the store or the supervisor inside an `io::Error`, told apart from the
/// input's own faults by [`is_server_side`].
fn server_side(e: JobError) -> io::Error {
    io::Error::other(e)
}

/// Whether an `io::Error` from a reader or writer here is the server side's, not the file's.
pub fn is_server_side(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<JobError>())
}

pub struct ObjectReader<'a> {
    context: &'a JobContext,
    file: &'a FileRow,
    size: u64,
    position: u64,
    window_start: u64,
    window: Vec<u8>,
}

impl<'a> ObjectReader<'a> {
    pub fn new(context: &'a JobContext, file: &'a FileRow) -> ObjectReader<'a> {
        ObjectReader {
            context,
            file,
            size: file.file_size.max(0) as u64,
            position: 0,
            window_start: 0,
            window: Vec::new(),
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        let len = WINDOW.min(self.size - self.position);
        self.window = self
            .context
            .read_span(self.file, self.position, len)
            .map_err(server_side)?;
        self.window_start = self.position;
        if self.window.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the store sent no bytes",
            ));
        }
        Ok(())
    }
}

impl Read for ObjectReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.position >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let in_window = self.position >= self.window_start
            && self.position < self.window_start + self.window.len() as u64;
        if !in_window {
            self.fill()?;
        }
        let offset = (self.position - self.window_start) as usize;
        let n = buf.len().min(self.window.len() - offset);
        buf[..n].copy_from_slice(&self.window[offset..offset + n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl Seek for ObjectReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.position.checked_add_signed(d),
        };
        self.position =
            target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.position)
    }
}

/// Writes the job's result at a position as it is made: a multipart upload the supervisor
/// opens under the result's key, or, for a result that fits in one part, a file in the work
/// folder that the supervisor stores. Either way [`ResultWriter::finish`] records it.
pub struct ResultWriter<'a> {
    context: &'a JobContext,
    position: i32,
    name: &'a str,
    folder_id: Option<FolderId>,
    part_size: usize,
    upload_id: Option<String>,
    /// The part filling, in the work folder.
    filling: Option<Spool>,
    /// Parts on their way to the store, oldest first; at most [`PARTS_IN_FLIGHT`]. Each
    /// removes its file once sent.
    sending: VecDeque<JoinHandle<JobResult<()>>>,
    parts: i32,
}

/// A part being written to a file of its own.
struct Spool {
    path: PathBuf,
    file: BufWriter<File>,
    len: usize,
}

impl Spool {
    fn create(path: PathBuf) -> io::Result<Spool> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Spool {
            path,
            file: BufWriter::with_capacity(SPOOL_BUFFER, file),
            len: 0,
        })
    }

    /// The part's file, written out and rewound, to be read from its start.
    fn into_file(self) -> io::Result<(File, PathBuf, usize)> {
        let mut file = self.file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        Ok((file, self.path, self.len))
    }
}

/// Bytes gathered before a write to a part's file.
const SPOOL_BUFFER: usize = 1024 * 1024;

/// Bytes read from a part's file at a time as it is sent.
const SEND_CHUNK: usize = 1024 * 1024;

/// PUTs a part's file to its presigned URL, read [`SEND_CHUNK`] at a time, on a runtime of
/// the sending thread's own. Not the blocking client's `Read` body: its pump moves 8 KiB at a
/// time, each a wake of the client's thread, and that cost the job more CPU than the bytes'
/// copy (BENCHMARKS.md, the import and the stored zip).
fn put_part(url: String, file: File, len: u64) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let chunks = tokio_util::io::ReaderStream::with_capacity(tokio::fs::File::from_std(file), SEND_CHUNK);
        // A client of this runtime's own: a pooled connection's task lives on the runtime that
        // opened it, and each part's runtime ends with its PUT.
        reqwest::Client::new()
            .put(url)
            // With the length in the header the body goes as those bytes (what the store's part
            // PUT wants), not in chunked encoding as a stream's would.
            .header(reqwest::header::CONTENT_LENGTH, len)
            .body(reqwest::Body::wrap_stream(chunks))
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    })
}

/// Parts sent while the next one fills: the store's write and the job's read overlap, for at
/// most this many parts' files in the work folder beyond the one filling.
const PARTS_IN_FLIGHT: usize = 2;

impl<'a> ResultWriter<'a> {
    /// `part_size` at least 5 MiB (the store's minimum for all parts but the last).
    pub fn new(
        context: &'a JobContext,
        position: i32,
        name: &'a str,
        folder_id: Option<FolderId>,
        part_size: usize,
    ) -> ResultWriter<'a> {
        ResultWriter {
            context,
            position,
            name,
            folder_id,
            part_size,
            upload_id: None,
            filling: None,
            sending: VecDeque::new(),
            parts: 0,
        }
    }

    /// Starts sending the filled part as the next part, first waiting for the oldest part in
    /// flight when there are [`PARTS_IN_FLIGHT`] already.
    fn send_part(&mut self) -> JobResult<()> {
        let upload_id = match &self.upload_id {
            Some(id) => id.clone(),
            None => {
                let request = Request::StartUpload {
                    position: self.position,
                    name: self.name.to_string(),
                    folder_id: self.folder_id,
                };
                let id: String = self.context.ask(&request)?;
                self.upload_id = Some(id.clone());
                id
            }
        };
        if self.sending.len() >= PARTS_IN_FLIGHT {
            self.wait_for_oldest()?;
        }
        let Some(spool) = self.filling.take() else {
            return Ok(());
        };
        let (file, path, len) = spool.into_file()?;
        self.parts += 1;
        let request = Request::PartUrl {
            upload_id,
            number: self.parts,
            length: len as i64,
        };
        let url: String = self.context.ask(&request)?;
        self.sending.push_back(std::thread::spawn(move || {
            let sent = put_part(url, file, len as u64)
                .map_err(|e| JobError::Server(format!("sending a part to the store: {e}")));
            let _ = std::fs::remove_file(&path);
            sent
        }));
        Ok(())
    }

    /// The part filling, started when there is none.
    fn filling(&mut self) -> io::Result<&mut Spool> {
        if self.filling.is_none() {
            let path = self
                .context
                .dir
                .join(format!("result-{}-part-{}", self.position, self.parts + 1));
            self.filling = Some(Spool::create(path)?);
        }
        Ok(self.filling.as_mut().expect("just made"))
    }

    fn wait_for_oldest(&mut self) -> JobResult<()> {
        if let Some(oldest) = self.sending.pop_front() {
            oldest
                .join()
                .map_err(|_| JobError::Server("a part's sender panicked".to_string()))??;
        }
        Ok(())
    }

    /// Stores and records what was written.
    pub fn finish(mut self) -> JobResult<FileRow> {
        match self.upload_id.clone() {
            None => {
                let path = self.only_part()?;
                let saved = self.context.save(self.position, &path, self.name, self.folder_id);
                let _ = std::fs::remove_file(&path);
                saved
            }
            Some(upload_id) => {
                if self.filling.as_ref().is_some_and(|spool| spool.len > 0) {
                    self.send_part()?;
                }
                while !self.sending.is_empty() {
                    self.wait_for_oldest()?;
                }
                self.upload_id = None;
                self.context.ask(&Request::CompleteUpload { upload_id })
            }
        }
    }

    /// Like [`ResultWriter::finish`], but a result of one part is saved ahead
    /// ([`JobContext::save_ahead`]): the job goes on while it is stored.
    pub fn finish_ahead(mut self) -> JobResult<()> {
        if self.upload_id.is_some() {
            return self.finish().map(drop);
        }
        let path = self.only_part()?;
        let handed = self
            .context
            .save_ahead(self.position, &path, self.name, self.folder_id);
        let _ = std::fs::remove_file(&path);
        handed
    }

    /// A result of one part at most: its file, written out (made empty for an empty result).
    fn only_part(&mut self) -> JobResult<PathBuf> {
        self.filling()?;
        let (file, path, _) = self.filling.take().expect("just made").into_file()?;
        drop(file);
        Ok(path)
    }
}

impl Write for ResultWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let part_size = self.part_size;
        let spool = self.filling()?;
        let n = buf.len().min(part_size - spool.len);
        spool.file.write_all(&buf[..n])?;
        spool.len += n;
        if spool.len == part_size {
            self.send_part().map_err(server_side)?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for ResultWriter<'_> {
    /// An unfinished multipart upload is discarded rather than left to the 7-day sweep, once
    /// the parts on their way have landed or failed (a part that lands after the abort would
    /// be kept by the store).
    fn drop(&mut self) {
        for part in self.sending.drain(..) {
            let _ = part.join();
        }
        if let Some(spool) = self.filling.take() {
            let _ = std::fs::remove_file(&spool.path);
        }
        if let Some(upload_id) = self.upload_id.take() {
            let _ = self.context.ask::<()>(&Request::AbortUpload { upload_id });
        }
    }
}
