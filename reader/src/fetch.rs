//! The one object the reader may read, through its presigned GET: a first look that tells a
//! store that does not hand it over from a file that cannot be read, whole downloads within
//! [`MAX_DOWNLOAD_BYTES`], and byte ranges.

use std::path::Path;
use std::time::Duration;

use drive_domain::read::MAX_DOWNLOAD_BYTES;
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::RANGE;
use tokio::io::AsyncWriteExt;

use crate::failure::Failure;

pub struct Object {
    client: reqwest::Client,
    url: String,
    pub size: u64,
}

impl Object {
    pub fn new(url: &str, size: u64) -> Result<Object, Failure> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // The object store is the only host asked: a redirect is not followed elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Failure::Fetch(format!("no HTTP client: {e}")))?;
        Ok(Object {
            client,
            url: url.to_string(),
            size,
        })
    }

    /// Asks for the first byte: the store answers with the object, or tells why not.
    pub async fn check(&self) -> Result<(), Failure> {
        if self.size == 0 {
            return Ok(());
        }
        self.range(0, 1).await.map(drop)
    }

    /// Bytes `start` to `start + len` (fewer at the end of the object).
    pub async fn range(&self, start: u64, len: u64) -> Result<Vec<u8>, Failure> {
        if len == 0 || start >= self.size {
            return Ok(Vec::new());
        }
        let last = (start + len - 1).min(self.size - 1);
        let response = self.get(Some(format!("bytes={start}-{last}"))).await?;
        let mut body = response.bytes_stream();
        let mut bytes = Vec::with_capacity((last - start + 1) as usize);
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| Failure::Fetch(format!("the store broke off: {e}")))?;
            // A store that ignored the range sends the whole object: only the range is kept.
            let room = (last - start + 1) as usize - bytes.len();
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if bytes.len() as u64 == last - start + 1 {
                break;
            }
        }
        Ok(bytes)
    }

    /// The whole object, held in memory: a picture or a PDF is parsed from all of it.
    pub async fn whole(&self) -> Result<Vec<u8>, Failure> {
        self.within_limit()?;
        self.range(0, self.size).await
    }

    /// The whole object written to `path`.
    pub async fn download(&self, path: &Path) -> Result<(), Failure> {
        self.within_limit()?;
        let response = self.get(None).await?;
        let mut file = tokio::fs::File::create(path).await?;
        let mut body = response.bytes_stream();
        let mut written = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| Failure::Fetch(format!("the store broke off: {e}")))?;
            written += chunk.len() as u64;
            if written > self.size {
                return Err(Failure::Fetch("the store sent more than the file holds".into()));
            }
            file.write_all(&chunk).await?;
        }
        file.flush().await?;
        Ok(())
    }

    fn within_limit(&self) -> Result<(), Failure> {
        if self.size > MAX_DOWNLOAD_BYTES {
            return Err(Failure::Unreadable(format!(
                "the file is too big to read: over {} MB",
                MAX_DOWNLOAD_BYTES / 1_000_000
            )));
        }
        Ok(())
    }

    async fn get(&self, range: Option<String>) -> Result<reqwest::Response, Failure> {
        let mut request = self.client.get(&self.url);
        if let Some(range) = range {
            request = request.header(RANGE, range);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure::Fetch(format!("the store did not answer: {e}")))?;
        match response.status() {
            StatusCode::OK | StatusCode::PARTIAL_CONTENT => Ok(response),
            status => Err(Failure::Fetch(format!("the store answered {status}"))),
        }
    }
}
