//! The model and one context, owned by a thread of their own (llama.cpp's context is neither
//! `Send` nor cheap): requests wait their turn in a channel, one at a time, which is what two
//! cores can give anyway.
//!
//! The context keeps what it read last. An agent's turns share their start (the instructions,
//! the tools, the conversation so far), so each request reads only what follows the longest
//! start it has in common with the one before: the system prompt is read once, not every turn.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::mpsc;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::oneshot;

/// Tokens read in one step.
const BATCH: usize = 512;

#[derive(Debug, Clone)]
pub struct EngineSettings {
    pub model: PathBuf,
    /// Tokens the context holds: the prompt and the answer together.
    pub context: u32,
    /// Threads generating (one token at a time: memory-bound, one thread is nearly as fast).
    pub threads: i32,
    /// Threads reading a prompt (compute-bound: every core helps).
    pub batch_threads: i32,
}

/// One completion asked for.
pub struct Request {
    pub prompt: String,
    /// A GBNF grammar the answer must follow (its rule `root`).
    pub grammar: Option<String>,
    pub max_tokens: usize,
}

#[derive(Debug)]
pub struct Completion {
    pub text: String,
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    /// Whether it stopped at `max_tokens` rather than ending its turn.
    pub cut_short: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "the prompt is {prompt} tokens; with max_tokens {max_tokens} that is more than the {context} the context holds"
    )]
    TooLong {
        prompt: usize,
        max_tokens: usize,
        context: usize,
    },
    #[error("the grammar does not parse")]
    Grammar,
    #[error("llama.cpp failed: {0}")]
    Llama(String),
    #[error("the model's thread has stopped")]
    Stopped,
}

struct Job {
    request: Request,
    answer: oneshot::Sender<Result<Completion, EngineError>>,
}

#[derive(Clone)]
pub struct Engine {
    jobs: mpsc::Sender<Job>,
}

impl Engine {
    /// Loads the model and makes its context on a new thread; answers once both are ready.
    pub fn start(settings: EngineSettings) -> anyhow::Result<Engine> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, loaded) = mpsc::channel::<anyhow::Result<()>>();
        std::thread::Builder::new()
            .name("model".into())
            .spawn(move || serve(settings, queue, ready))?;
        loaded
            .recv()
            .map_err(|_| anyhow::anyhow!("the model's thread ended while loading"))??;
        Ok(Engine { jobs })
    }

    pub async fn complete(&self, request: Request) -> Result<Completion, EngineError> {
        let (answer, answered) = oneshot::channel();
        self.jobs
            .send(Job { request, answer })
            .map_err(|_| EngineError::Stopped)?;
        answered.await.map_err(|_| EngineError::Stopped)?
    }
}

fn serve(settings: EngineSettings, queue: mpsc::Receiver<Job>, ready: mpsc::Sender<anyhow::Result<()>>) {
    let loaded = (|| -> anyhow::Result<_> {
        let mut backend = LlamaBackend::init()?;
        // llama.cpp narrates every load and step on stderr; what matters is logged by the server.
        backend.void_logs();
        let model = LlamaModel::load_from_file(&backend, &settings.model, &LlamaModelParams::default())
            .map_err(|e| anyhow::anyhow!("loading {}: {e}", settings.model.display()))?;
        Ok((backend, model))
    })();
    let (backend, model) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(settings.context))
        .with_n_batch(BATCH as u32)
        .with_n_threads(settings.threads)
        .with_n_threads_batch(settings.batch_threads);
    let mut context = match model.new_context(&backend, params) {
        Ok(context) => context,
        Err(e) => {
            let _ = ready.send(Err(anyhow::anyhow!("making the model's context: {e}")));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let mut state = Reader {
        model: &model,
        cached: Vec::new(),
        size: settings.context as usize,
    };
    for job in queue {
        let result = state.complete(&mut context, &job.request, &job.answer);
        if result.is_err() {
            // What the context holds is no longer known: read everything again next time.
            state.cached.clear();
            let _ = context.clear_kv_cache_seq(None, None, None);
        }
        let _ = job.answer.send(result);
    }
}

struct Reader<'m> {
    model: &'m LlamaModel,
    /// The tokens the context holds, in order.
    cached: Vec<LlamaToken>,
    size: usize,
}

impl Reader<'_> {
    fn complete(
        &mut self,
        context: &mut LlamaContext<'_>,
        request: &Request,
        answer: &oneshot::Sender<Result<Completion, EngineError>>,
    ) -> Result<Completion, EngineError> {
        let vocab = self.model.vocab();
        let prompt = vocab.tokenize(request.prompt.as_bytes(), false, true);
        if prompt.is_empty() || prompt.len() + request.max_tokens > self.size {
            return Err(EngineError::TooLong {
                prompt: prompt.len(),
                max_tokens: request.max_tokens,
                context: self.size,
            });
        }
        let mut sampler = match &request.grammar {
            Some(grammar) => LlamaSampler::chain_simple([
                LlamaSampler::grammar(self.model, grammar, "root").map_err(|_| EngineError::Grammar)?,
                LlamaSampler::greedy(),
            ]),
            None => LlamaSampler::greedy(),
        };
        // Keep the start in common, but read at least the last token again: its logits are
        // what the first answer token is sampled from.
        let common = self
            .cached
            .iter()
            .zip(&prompt)
            .take_while(|(a, b)| a == b)
            .count();
        let keep = common.min(prompt.len() - 1);
        context
            .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
            .map_err(llama)?;
        self.cached.truncate(keep);
        let mut batch = LlamaBatch::new(BATCH, 1);
        let unread = &prompt[keep..];
        for (i, chunk) in unread.chunks(BATCH).enumerate() {
            let last_chunk = (i + 1) * BATCH >= unread.len();
            batch.clear();
            for (j, token) in chunk.iter().enumerate() {
                let logits = last_chunk && j + 1 == chunk.len();
                batch
                    .add(*token, (self.cached.len() + j) as i32, &[0], logits)
                    .map_err(llama)?;
            }
            context.decode(&mut batch).map_err(llama)?;
            self.cached.extend_from_slice(chunk);
        }
        let mut at = batch.n_tokens() - 1;
        let mut text = Vec::new();
        let mut generated = 0;
        let cut_short = loop {
            if generated == request.max_tokens {
                break true;
            }
            if answer.is_closed() {
                // Nobody waits for it any more (the task was canceled): stop spending the cores.
                return Err(EngineError::Llama("the caller went away".into()));
            }
            let token = sampler.sample(context, at);
            if vocab.is_eog(token) {
                break false;
            }
            text.extend(vocab.token_to_piece(token, false, None));
            generated += 1;
            batch.clear();
            batch
                .add(token, self.cached.len() as i32, &[0], true)
                .map_err(llama)?;
            context.decode(&mut batch).map_err(llama)?;
            self.cached.push(token);
            at = 0;
        };
        Ok(Completion {
            text: String::from_utf8_lossy(&text).into_owned(),
            prompt_tokens: prompt.len(),
            completion_tokens: generated,
            cut_short,
        })
    }
}

fn llama(e: impl std::fmt::Display) -> EngineError {
    EngineError::Llama(e.to_string())
}
