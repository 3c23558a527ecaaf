//! The local models readForSearch jobs use, run by the supervisor: Whisper (`drive-speech`)
//! and the embedding model (`drive-embed`), read from `DRIVE_MODELS` the first time a job needs
//! each and kept for the worker's life, not loaded again by every job (Whisper base costs about
//! a second and 300 MB to load).
//!
//! They run on blocking threads, on what a job process hands over: sound it decoded to samples,
//! passages of text it read. The uploaded bytes themselves are still parsed only by the job
//! process, which holds no credential; the supervisor checks what it is given as hostile
//! (sizes, finite numbers) before a model sees it.

use std::path::PathBuf;
use std::sync::Arc;

use drive_domain::moment::Said;
use drive_embed::{Embedder, Embedding};
use drive_speech::{Segment, SpeechError, Transcriber};
use tokio::sync::{OnceCell, mpsc};
use tokio::task::JoinHandle;

use crate::protocol::{JobError, JobResult};
use crate::supervisor::metrics::WorkerMetrics;

pub struct LocalModels {
    /// `DRIVE_MODELS`.
    folder: PathBuf,
    transcriber: OnceCell<Arc<Transcriber>>,
    embedder: OnceCell<Arc<Embedder>>,
    metrics: Arc<WorkerMetrics>,
}

/// Sound handed over and not yet transcribed, at most, in pieces: the job process waits for
/// room, so the supervisor holds a bounded amount whatever the recording's length.
const PIECES_WAITING: usize = 2;

impl LocalModels {
    pub fn new(folder: PathBuf, metrics: Arc<WorkerMetrics>) -> LocalModels {
        LocalModels {
            folder,
            transcriber: OnceCell::new(),
            embedder: OnceCell::new(),
            metrics,
        }
    }

    /// One embedding per text, in order (a file with nothing to read loads no model).
    pub async fn embed(&self, texts: Vec<String>) -> JobResult<Vec<Embedding>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let embedder = self
            .embedder
            .get_or_try_init(|| {
                self.load("embedding", {
                    let folder = self.folder.clone();
                    move || Embedder::load(&folder)
                })
            })
            .await?
            .clone();
        tokio::task::spawn_blocking(move || embedder.embed(&texts))
            .await
            .map_err(|e| JobError::machine("embedding", e))?
            .map_err(|e| JobError::machine("embedding", e))
    }

    /// A transcription, fed by [`Listening::hear`] on a thread of its own.
    pub async fn listen(&self) -> JobResult<Listening> {
        let transcriber = self
            .transcriber
            .get_or_try_init(|| {
                self.load("speech", {
                    let folder = self.folder.join(drive_speech::MODEL_FOLDER);
                    move || Transcriber::load(&folder)
                })
            })
            .await?
            .clone();
        let (samples, mut heard) = mpsc::channel(PIECES_WAITING);
        let transcript = tokio::task::spawn_blocking(move || {
            let mut stream = transcriber.stream();
            loop {
                match heard.blocking_recv() {
                    Some(Heard::Samples(samples)) => stream.push(&samples)?,
                    Some(Heard::End) => return stream.finish().map(Some),
                    // The job's process ended without asking for its transcript: nobody
                    // wants the rest.
                    None => return Ok(None),
                }
            }
        });
        Ok(Listening { samples, transcript })
    }

    /// Loads the model `name` by `load` on a blocking thread, counted in the worker's metrics.
    async fn load<M: Send + 'static, E: std::fmt::Display + Send + 'static>(
        &self,
        name: &'static str,
        load: impl FnOnce() -> Result<M, E> + Send + 'static,
    ) -> JobResult<Arc<M>> {
        let model = tokio::task::spawn_blocking(load)
            .await
            .map_err(|e| JobError::machine("loading a model", e))?
            .map_err(|e| JobError::machine(&format!("loading the {name} model"), e))?;
        tracing::info!(model = name, "loaded a local model");
        self.metrics.model_loaded(name);
        Ok(Arc::new(model))
    }
}

enum Heard {
    Samples(Vec<f32>),
    End,
}

/// One recording being transcribed: its samples are heard in the order handed over.
pub struct Listening {
    samples: mpsc::Sender<Heard>,
    transcript: JoinHandle<Result<Option<Vec<Segment>>, SpeechError>>,
}

impl Listening {
    /// Hands `samples` (16 kHz mono) over, once there is room for them.
    pub async fn hear(&self, samples: Vec<f32>) -> JobResult<()> {
        self.samples
            .send(Heard::Samples(samples))
            .await
            .map_err(|_| JobError::machine("transcribing", "the transcription stopped"))
    }

    /// What was said in all the samples heard, seconds from the first.
    pub async fn transcript(self) -> JobResult<Vec<Said>> {
        // When the thread has stopped already, its failure is the answer.
        let _ = self.samples.send(Heard::End).await;
        let segments = self
            .transcript
            .await
            .map_err(|e| JobError::machine("transcribing", e))?
            .map_err(|e| JobError::machine("transcribing", e))?
            .unwrap_or_default();
        Ok(segments
            .into_iter()
            .map(|s| Said {
                at: s.start,
                until: s.end,
                text: s.text,
            })
            .collect())
    }
}
