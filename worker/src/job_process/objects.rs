//! `Read + Seek` and `Write` over the object store, for the `zip` crate. Neither holds a
//! credential: reads are ranged GETs on the input's presigned URL, writes are PUTs on part
//! URLs the supervisor presigns.
//!
//! - [`ObjectReader`] serves reads from a window fetched with one ranged GET at a time, so a
//!   zip's central directory and its entries are read without downloading the whole archive.
//! - [`ResultWriter`] writes bytes into parts in the job's work folder. Once the result is
//!   known to take a part or more, each part is also streamed to the store as it is written,
//!   in a PUT of the part size, so the store's write overlaps the job's read from the first
//!   byte; a part that ends short (the last) is sent again from its file with its true length,
//!   under a new number, and the upload is completed with the parts named. Memory stays flat
//!   (a few buffers) however large the parts and the result, and the folder holds at most
//!   [`PARTS_IN_FLIGHT`] + 1 parts.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
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

/// Parts of 64 MiB, larger when a result is expected to need more than [`MAX_PARTS`]. A part
/// sent again takes a new number (the last when it ends short, and any whose PUT the store
/// ended early): the store's 10,000 leave a thousand for those.
const PART_SIZE: u64 = 64 * 1024 * 1024;
const MAX_PARTS: u64 = 9_000;

/// The part size doubles every this many parts, up to [`LARGEST_PART`], so that a result
/// longer than expected (an import of unknown length) still fits: 5,000 parts from 64 MiB
/// make 1.9 TiB, the 2 TB a file may be.
const PARTS_A_SIZE: i32 = 1_000;
/// The store takes parts of up to 5 GiB.
const LARGEST_PART: u64 = 4 << 30;

/// The part size for a result of about `bytes` (0 when not known).
fn part_size_for(bytes: u64) -> usize {
    PART_SIZE.max(bytes.div_ceil(MAX_PARTS)) as usize
}

/// The size of part `number` when the first parts are of `first`.
fn part_size_of(first: usize, number: i32) -> usize {
    let doublings = ((number - 1) / PARTS_A_SIZE).clamp(0, 16) as u32;
    (first as u64)
        .saturating_mul(1 << doublings)
        .min(LARGEST_PART.max(first as u64)) as usize
}

/// Writes the job's result at a position as it is made: a multipart upload the supervisor
/// opens under the result's key, or, for a result that fits in one part, a file in the work
/// folder that the supervisor stores. Either way [`ResultWriter::finish`] records it.
pub struct ResultWriter<'a> {
    context: &'a JobContext,
    position: i32,
    name: &'a str,
    folder_id: Option<FolderId>,
    /// The size of the first parts ([`part_size_of`] the others).
    part_size: usize,
    /// Whether a part goes to the store as it is written: from the first byte when the
    /// result is expected to take a part or more, else from the second part on.
    stream_parts: bool,
    upload_id: Option<String>,
    /// The part filling, in the work folder.
    filling: Option<Spool>,
    /// Parts on their way to the store, oldest first; at most [`PARTS_IN_FLIGHT`]. A part
    /// sent from its file removes the file once sent; a streamed part's file is gone once
    /// the part is full.
    sending: VecDeque<JoinHandle<JobResult<()>>>,
    /// The highest part number taken.
    parts: i32,
    /// The numbers of the parts the result is made of, ascending.
    kept: Vec<i32>,
}

/// A part being written to a file of its own and, when it is streamed, to its PUT. Dropped,
/// it breaks its PUT off and removes its file, on every path, errors included.
struct Spool {
    number: i32,
    /// The part size: bytes it holds once full.
    size: usize,
    path: PathBuf,
    file: File,
    /// Bytes gathered before a write to the file (and a chunk to the PUT).
    gathered: Vec<u8>,
    len: usize,
    stream: Option<PartStream>,
    /// Whether a PUT was opened under its number: sent again, the part takes a new one, since
    /// the store may still list what a PUT broken off left under the old.
    streamed: bool,
}

/// A part's PUT, of the part size, fed chunk by chunk as the part is written. Its file is
/// kept while it fills: a part that ends short (the result's last) or whose PUT the store
/// ends early (an idle request closed while the job's input stalled: S3 allows about 20 s)
/// goes again from it. A full part's file is removed at once: should its PUT then fail, the
/// job fails and the farm tries it again, as with a part sent from its file.
struct PartStream {
    chunks: tokio::sync::mpsc::Sender<io::Result<Vec<u8>>>,
    put: JoinHandle<JobResult<()>>,
}

impl Spool {
    fn create(number: i32, size: usize, path: PathBuf) -> io::Result<Spool> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Spool {
            number,
            size,
            path,
            file,
            gathered: Vec::with_capacity(SPOOL_BUFFER),
            len: 0,
            stream: None,
            streamed: false,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.gathered.extend_from_slice(bytes);
        self.len += bytes.len();
        if self.gathered.len() >= SPOOL_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes what is gathered to the file and hands it to the PUT, if there is one.
    fn flush(&mut self) -> io::Result<()> {
        if self.gathered.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.gathered)?;
        let Some(stream) = &self.stream else {
            self.gathered.clear();
            return Ok(());
        };
        let chunk = std::mem::replace(&mut self.gathered, Vec::with_capacity(SPOOL_BUFFER));
        if stream.chunks.blocking_send(Ok(chunk)).is_err() {
            // The PUT has ended early: the part goes whole from its file once written.
            let ended = self.stream.take().expect("just used");
            let _ = ended.put.join();
        }
        Ok(())
    }

    /// Ends the part's PUT unfinished, if there is one: an error in its body breaks the
    /// request off, and the store keeps nothing of a part short of its length.
    fn stop_stream(&mut self) {
        if let Some(stream) = self.stream.take() {
            let _ = stream
                .chunks
                .blocking_send(Err(io::Error::other("the part ended short")));
            drop(stream.chunks);
            let _ = stream.put.join();
        }
    }

    /// Writes the part out, its PUT broken off if it had one, and rewinds its file, to be
    /// read from its start.
    fn written_out(&mut self) -> io::Result<()> {
        self.stop_stream();
        self.flush()?;
        self.gathered = Vec::new();
        self.file.seek(SeekFrom::Start(0))?;
        Ok(())
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.stop_stream();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bytes gathered before a write to a part's file (and a chunk to its PUT).
const SPOOL_BUFFER: usize = 1024 * 1024;

/// Chunks handed to a streamed part's PUT and not yet sent: the job's writes wait beyond.
const CHUNKS_IN_FLIGHT: usize = 4;

/// Bytes read from a part's file at a time as it is sent.
const SEND_CHUNK: usize = 1024 * 1024;

/// What a part's PUT sends: its finished file, or the chunks of a part being written.
enum PartBody {
    File(File),
    Chunks(tokio::sync::mpsc::Receiver<io::Result<Vec<u8>>>),
}

/// PUTs a part of `len` bytes to its presigned URL on a runtime of the sending thread's own,
/// a file read [`SEND_CHUNK`] at a time. Not the blocking client's `Read` body: its pump
/// moves 8 KiB at a time, each a wake of the client's thread, and that cost the job more CPU
/// than the bytes' copy (BENCHMARKS.md, the import and the stored zip).
fn put_part(url: String, body: PartBody, len: u64) -> JobResult<()> {
    let put = || -> Result<(), Box<dyn std::error::Error>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let body = match body {
                PartBody::File(file) => reqwest::Body::wrap_stream(
                    tokio_util::io::ReaderStream::with_capacity(tokio::fs::File::from_std(file), SEND_CHUNK),
                ),
                PartBody::Chunks(chunks) => {
                    reqwest::Body::wrap_stream(futures::stream::unfold(chunks, |mut chunks| async move {
                        chunks.recv().await.map(|chunk| (chunk, chunks))
                    }))
                }
            };
            // A client of this runtime's own: a pooled connection's task lives on the runtime
            // that opened it, and each part's runtime ends with its PUT.
            reqwest::Client::new()
                .put(url)
                // With the length in the header the body goes as those bytes (what the store's
                // part PUT wants), not in chunked encoding as a stream's would.
                .header(reqwest::header::CONTENT_LENGTH, len)
                .body(body)
                .send()
                .await?
                .error_for_status()?;
            Ok(())
        })
    };
    put().map_err(|e| JobError::Server(format!("sending a part to the store: {e}")))
}

/// Parts sent while the next one fills: the store's write and the job's read overlap, for at
/// most this many parts' files in the work folder beyond the one filling.
const PARTS_IN_FLIGHT: usize = 2;

impl<'a> ResultWriter<'a> {
    /// `expected`: about how many bytes the result will be, 0 when not known.
    pub fn new(
        context: &'a JobContext,
        position: i32,
        name: &'a str,
        folder_id: Option<FolderId>,
        expected: u64,
    ) -> ResultWriter<'a> {
        let part_size = part_size_for(expected);
        ResultWriter {
            context,
            position,
            name,
            folder_id,
            part_size,
            stream_parts: expected >= part_size as u64,
            upload_id: None,
            filling: None,
            sending: VecDeque::new(),
            parts: 0,
            kept: Vec::new(),
        }
    }

    /// The multipart upload, opened when there is none.
    fn upload_id(&mut self) -> JobResult<String> {
        if let Some(id) = &self.upload_id {
            return Ok(id.clone());
        }
        let request = Request::StartUpload {
            position: self.position,
            name: self.name.to_string(),
            folder_id: self.folder_id,
        };
        let id: String = self.context.ask(&request)?;
        self.upload_id = Some(id.clone());
        Ok(id)
    }

    /// Makes room for one more part in flight: waits for the oldest when there are
    /// [`PARTS_IN_FLIGHT`] already.
    fn room_in_flight(&mut self) -> JobResult<()> {
        if self.sending.len() >= PARTS_IN_FLIGHT {
            self.wait_for_oldest()?;
        }
        Ok(())
    }

    /// Starts the PUT of part `number`, of `size`, to be fed as the part is written.
    fn open_stream(&mut self, number: i32, size: usize) -> JobResult<PartStream> {
        let upload_id = self.upload_id()?;
        self.room_in_flight()?;
        let url: String = self.context.ask(&Request::PartUrl {
            upload_id,
            number,
            length: size as i64,
        })?;
        let (chunks, receiver) = tokio::sync::mpsc::channel(CHUNKS_IN_FLIGHT);
        let len = size as u64;
        let put = std::thread::spawn(move || put_part(url, PartBody::Chunks(receiver), len));
        Ok(PartStream { chunks, put })
    }

    /// The part filled: a streamed part's PUT gets its end; any other is sent from its file.
    fn part_filled(&mut self) -> JobResult<()> {
        let mut spool = self.filling.take().expect("a part was filling");
        self.stream_parts = true;
        spool.flush()?;
        match spool.stream.take() {
            Some(stream) => {
                drop(stream.chunks);
                self.sending.push_back(stream.put);
                self.kept.push(spool.number);
                Ok(())
            }
            None => self.send_from_file(spool),
        }
    }

    /// Starts sending a part from its file, with its length as written.
    fn send_from_file(&mut self, mut spool: Spool) -> JobResult<()> {
        let upload_id = self.upload_id()?;
        self.room_in_flight()?;
        spool.written_out()?;
        if spool.streamed {
            // No part after it has been started: the order of numbers stays the bytes' order.
            self.parts += 1;
            spool.number = self.parts;
        }
        self.kept.push(spool.number);
        let request = Request::PartUrl {
            upload_id,
            number: spool.number,
            length: spool.len as i64,
        };
        let url: String = self.context.ask(&request)?;
        let file = spool.file.try_clone()?;
        self.sending.push_back(std::thread::spawn(move || {
            let sent = put_part(url, PartBody::File(file), spool.len as u64);
            drop(spool);
            sent
        }));
        Ok(())
    }

    /// The part filling, started when there is none (its PUT too, when parts are streamed).
    fn filling(&mut self) -> io::Result<&mut Spool> {
        if self.filling.is_none() {
            let number = self.parts + 1;
            let path = self
                .context
                .dir
                .join(format!("result-{}-part-{number}", self.position));
            let size = part_size_of(self.part_size, number);
            self.filling = Some(Spool::create(number, size, path)?);
            self.parts = number;
            if self.stream_parts {
                let spool = self.filling.as_mut().expect("just made");
                spool.streamed = true;
                let stream = self.open_stream(number, size).map_err(server_side)?;
                self.filling.as_mut().expect("just made").stream = Some(stream);
            }
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
                let only = self.only_part()?;
                self.context
                    .save(self.position, &only.path, self.name, self.folder_id)
            }
            Some(upload_id) => {
                // The last part, short of the part size: its streamed PUT (of the part size)
                // is broken off and the part sent again with its true length, under a new
                // number.
                if let Some(spool) = self.filling.take() {
                    self.send_from_file(spool)?;
                }
                while !self.sending.is_empty() {
                    self.wait_for_oldest()?;
                }
                self.upload_id = None;
                let parts = std::mem::take(&mut self.kept);
                self.context.ask(&Request::CompleteUpload { upload_id, parts })
            }
        }
    }

    /// Like [`ResultWriter::finish`], but a result of one part is saved ahead
    /// ([`JobContext::save_ahead`]): the job goes on while it is stored.
    pub fn finish_ahead(mut self) -> JobResult<()> {
        if self.upload_id.is_some() {
            return self.finish().map(drop);
        }
        let only = self.only_part()?;
        self.context
            .save_ahead(self.position, &only.path, self.name, self.folder_id)
    }

    /// A result of one part at most, with no upload opened, written out (made empty for an
    /// empty result); its file goes when it is dropped.
    fn only_part(&mut self) -> JobResult<Spool> {
        let mut spool = match self.filling.take() {
            Some(spool) => spool,
            None => {
                let path = self.context.dir.join(format!("result-{}-part-1", self.position));
                Spool::create(1, self.part_size, path)?
            }
        };
        spool.written_out()?;
        Ok(spool)
    }
}

impl Write for ResultWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let spool = self.filling()?;
        let n = buf.len().min(spool.size - spool.len);
        spool.write(&buf[..n])?;
        if spool.len == spool.size {
            self.part_filled().map_err(server_side)?;
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
        drop(self.filling.take());
        for part in self.sending.drain(..) {
            let _ = part.join();
        }
        if let Some(upload_id) = self.upload_id.take() {
            let _ = self.context.ask::<()>(&Request::AbortUpload { upload_id });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_grow_only_when_a_file_would_need_too_many() {
        const MIB: u64 = 1024 * 1024;
        assert_eq!(part_size_for(0) as u64, PART_SIZE);
        assert_eq!(part_size_for(100 * 1024 * MIB) as u64, PART_SIZE);
        let two_tb = 2 * 1024 * 1024 * MIB;
        assert!(two_tb.div_ceil(part_size_for(two_tb) as u64) <= MAX_PARTS);
    }

    #[test]
    fn parts_of_a_result_longer_than_expected_grow_until_two_tb_fit() {
        const GIB: u64 = 1 << 30;
        let first = part_size_for(0);
        let sizes: Vec<u64> = (1..=MAX_PARTS as i32)
            .map(|n| part_size_of(first, n) as u64)
            .collect();
        assert_eq!(
            (sizes[0], sizes[999], sizes[1000]),
            (PART_SIZE, PART_SIZE, 2 * PART_SIZE)
        );
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*sizes.last().unwrap(), LARGEST_PART);
        let parts_for_2_tb = sizes
            .iter()
            .scan(0, |total, size| {
                *total += size;
                Some(*total)
            })
            .position(|total| total >= 2_000_000_000_000)
            .unwrap()
            + 1;
        assert!(parts_for_2_tb <= 5_000, "{parts_for_2_tb} parts for 2 TB");
        // A part size chosen for a known length beyond the largest stays as it is (5 GiB is
        // the store's limit, checked by the supervisor).
        assert_eq!(part_size_of(5 * GIB as usize, 9_000) as u64, 5 * GIB);
    }
}
