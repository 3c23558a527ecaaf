//! Blocking `Read + Seek` and `Write` over the object store, for the `zip` crate, which is
//! synchronous. Used from `block_in_place` sections of a job: each call into the store runs
//! on the job's runtime through its handle.
//!
//! - [`ObjectReader`] serves reads from a window fetched with one ranged GET at a time, so a
//!   zip's central directory and its entries are read without downloading the whole archive.
//! - [`ObjectWriter`] collects bytes into parts and sends each as a multipart part when it
//!   fills, while the next fills; memory stays at a few parts however large the object grows.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom, Write};

use drive_core::storage::{Bucket, ByteStream, Storage, StorageError, StoredPart};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// Bytes fetched per ranged GET.
const WINDOW: u64 = 8 * 1024 * 1024;

pub struct ObjectReader<'a> {
    handle: Handle,
    storage: &'a Storage,
    bucket: Bucket,
    key: &'a str,
    size: u64,
    position: u64,
    window_start: u64,
    window: Vec<u8>,
}

impl<'a> ObjectReader<'a> {
    pub fn new(storage: &'a Storage, bucket: Bucket, key: &'a str, size: u64) -> ObjectReader<'a> {
        ObjectReader {
            handle: Handle::current(),
            storage,
            bucket,
            key,
            size,
            position: 0,
            window_start: 0,
            window: Vec::new(),
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        let len = WINDOW.min(self.size - self.position);
        let body = self
            .handle
            .block_on(self.storage.read_span(self.bucket, self.key, self.position, len))
            .map_err(io::Error::other)?;
        self.window = self
            .handle
            .block_on(body.collect())
            .map_err(io::Error::other)?
            .into_bytes()
            .to_vec();
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

/// Where an [`ObjectWriter`] puts its object.
pub struct Target<'a> {
    pub storage: &'a Storage,
    pub key: &'a str,
    pub content_type: &'a str,
    pub content_disposition: &'a str,
}

pub struct ObjectWriter<'a> {
    handle: Handle,
    target: Target<'a>,
    part_size: usize,
    upload_id: Option<String>,
    buffer: Vec<u8>,
    /// Parts on their way to the store, oldest first; at most [`PARTS_IN_FLIGHT`].
    sending: VecDeque<JoinHandle<Result<StoredPart, StorageError>>>,
    parts: Vec<StoredPart>,
    written: u64,
}

/// Parts sent while the next one fills: the store's write and the job's read overlap, for at
/// most this many parts of memory beyond the one filling.
const PARTS_IN_FLIGHT: usize = 2;

impl<'a> ObjectWriter<'a> {
    /// `part_size` at least 5 MiB (the store's minimum for all parts but the last).
    pub fn new(target: Target<'a>, part_size: usize) -> ObjectWriter<'a> {
        ObjectWriter {
            handle: Handle::current(),
            target,
            part_size,
            upload_id: None,
            buffer: Vec::new(),
            sending: VecDeque::new(),
            parts: Vec::new(),
            written: 0,
        }
    }

    /// Starts sending the filled buffer as the next part, first waiting for the oldest part in
    /// flight when there are [`PARTS_IN_FLIGHT`] already.
    fn send_part(&mut self) -> io::Result<()> {
        let storage = self.target.storage;
        let upload_id = match &self.upload_id {
            Some(id) => id.clone(),
            None => {
                let id = self
                    .handle
                    .block_on(storage.create_multipart(
                        Bucket::Private,
                        self.target.key,
                        self.target.content_type,
                        self.target.content_disposition,
                    ))
                    .map_err(io::Error::other)?;
                self.upload_id = Some(id.clone());
                id
            }
        };
        if self.sending.len() >= PARTS_IN_FLIGHT {
            self.wait_for_oldest()?;
        }
        let bytes = std::mem::replace(&mut self.buffer, Vec::with_capacity(self.part_size));
        let number = (self.parts.len() + self.sending.len()) as i32 + 1;
        let (storage, key) = (storage.clone(), self.target.key.to_string());
        self.sending.push_back(self.handle.spawn(async move {
            storage
                .upload_part(Bucket::Private, &key, &upload_id, number, bytes)
                .await
        }));
        Ok(())
    }

    fn wait_for_oldest(&mut self) -> io::Result<()> {
        if let Some(oldest) = self.sending.pop_front() {
            let part = self
                .handle
                .block_on(oldest)
                .map_err(io::Error::other)?
                .map_err(io::Error::other)?;
            self.parts.push(part);
        }
        Ok(())
    }

    /// Stores what was written (one PUT when it fit in a part); answers its length.
    pub fn finish(mut self) -> io::Result<u64> {
        let storage = self.target.storage;
        match self.upload_id.clone() {
            None => {
                let body = ByteStream::from(std::mem::take(&mut self.buffer));
                self.handle
                    .block_on(storage.write(
                        Bucket::Private,
                        self.target.key,
                        body,
                        self.target.content_type,
                        self.target.content_disposition,
                    ))
                    .map_err(io::Error::other)?;
            }
            Some(upload_id) => {
                if !self.buffer.is_empty() {
                    self.send_part()?;
                }
                while !self.sending.is_empty() {
                    self.wait_for_oldest()?;
                }
                self.handle
                    .block_on(storage.complete_multipart(
                        Bucket::Private,
                        self.target.key,
                        &upload_id,
                        &self.parts,
                    ))
                    .map_err(io::Error::other)?;
                self.upload_id = None;
            }
        }
        Ok(self.written)
    }
}

impl Write for ObjectWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.part_size - self.buffer.len();
        let n = buf.len().min(room);
        self.buffer.extend_from_slice(&buf[..n]);
        self.written += n as u64;
        if self.buffer.len() == self.part_size {
            self.send_part()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for ObjectWriter<'_> {
    /// An unfinished multipart upload is discarded rather than left to the 7-day sweep.
    fn drop(&mut self) {
        for part in self.sending.drain(..) {
            part.abort();
        }
        if let Some(upload_id) = self.upload_id.take() {
            let storage = self.target.storage;
            let _ =
                self.handle
                    .block_on(storage.abort_multipart(Bucket::Private, self.target.key, &upload_id));
        }
    }
}
