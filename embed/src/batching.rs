//! Texts asked for by many callers at once, embedded together: one thread owns the model and
//! takes everything asked while it was busy as one batch. A query is a few tokens, so embedding
//! one costs mostly reading the model's weights (40 MB) and candle's work per operation, both
//! paid once for a batch: eight searches at once then wait for about one embedding, not for
//! eight in turn.

use std::sync::mpsc::{self, Receiver, Sender};

use crate::{BATCH, EmbedError, Embedder, Embedding};

/// A text asked for and where its embedding goes.
type Asked = (String, Sender<Result<Embedding, EmbedError>>);

/// The model on a thread of its own, embedding what callers ask in batches. The thread ends
/// once `asked` is dropped with `self`.
pub struct BatchingEmbedder {
    asked: Sender<Asked>,
}

impl BatchingEmbedder {
    /// Starts the thread that holds `embedder`.
    pub fn new(embedder: Embedder) -> Result<BatchingEmbedder, EmbedError> {
        let (asked, waiting) = mpsc::channel();
        std::thread::Builder::new()
            .name("embed-batching".into())
            .spawn(move || serve(&embedder, &waiting))
            .map_err(|e| EmbedError::Run(format!("starting the embedding thread: {e}")))?;
        Ok(BatchingEmbedder { asked })
    }

    /// The embedding of `text`, made with whatever else is asked meanwhile; blocks until it is.
    pub fn embed(&self, text: &str) -> Result<Embedding, EmbedError> {
        let (answer, answered) = mpsc::channel();
        let stopped = || EmbedError::Run("the embedding thread has stopped".into());
        self.asked
            .send((text.to_string(), answer))
            .map_err(|_| stopped())?;
        answered.recv().map_err(|_| stopped())?
    }
}

/// Embeds what is asked until every asker is gone: each batch is the oldest text waiting and
/// all that came after it, up to [`BATCH`]. Answers the number of batches made.
fn serve(embedder: &Embedder, waiting: &Receiver<Asked>) -> usize {
    let mut batches = 0;
    while let Ok(first) = waiting.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH
            && let Ok(next) = waiting.try_recv()
        {
            batch.push(next);
        }
        let texts: Vec<&str> = batch.iter().map(|(text, _)| text.as_str()).collect();
        // A panic in the model fails this batch's askers, not every later one.
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| embedder.embed(&texts)))
            .unwrap_or_else(|_| Err(EmbedError::Run("the model panicked".into())));
        batches += 1;
        match made {
            Ok(embeddings) => {
                for ((_, answer), embedding) in batch.into_iter().zip(embeddings) {
                    let _ = answer.send(Ok(embedding));
                }
            }
            Err(e) => {
                for (_, answer) in batch {
                    let _ = answer.send(Err(EmbedError::Run(e.to_string())));
                }
            }
        }
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosine;
    use crate::tests::embedder;

    #[test]
    fn texts_waiting_together_are_one_batch_each_embedded_as_alone() {
        let texts = [
            "lemon cake",
            "how to fix a flat tyre",
            "the quarterly report",
            "brakes",
        ];
        let embedder = embedder();
        let (asked, waiting) = mpsc::channel();
        let answers: Vec<_> = texts
            .iter()
            .map(|text| {
                let (answer, answered) = mpsc::channel();
                asked.send((text.to_string(), answer)).unwrap();
                answered
            })
            .collect();
        drop(asked);
        // All four were waiting when the thread looked: one batch.
        assert_eq!(serve(&embedder, &waiting), 1);
        for (text, answered) in texts.iter().zip(answers) {
            let batched = answered.recv().unwrap().unwrap();
            let alone = embedder.embed(&[text]).unwrap().pop().unwrap();
            assert!(cosine(&alone, &batched) > 0.9999, "{text}");
        }
    }

    #[test]
    fn callers_on_many_threads_each_get_their_own_text_embedded() {
        let embedder = embedder();
        let texts: Vec<String> = (0..12)
            .map(|i| format!("sentence number {i} about gardens"))
            .collect();
        let alone = embedder.embed(&texts).unwrap();
        let batching = BatchingEmbedder::new(embedder).unwrap();
        std::thread::scope(|s| {
            let asked: Vec<_> = texts
                .iter()
                .map(|t| s.spawn(|| batching.embed(t).unwrap()))
                .collect();
            for (handle, alone) in asked.into_iter().zip(&alone) {
                assert!(cosine(alone, &handle.join().unwrap()) > 0.9999);
            }
        });
    }
}
