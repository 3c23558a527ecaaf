//! Search by meaning: the query's embedding (the same model the readForSearch jobs embed with,
//! loaded once at start from `DRIVE_MODELS`) against the moments of the account.
//!
//! PostgreSQL here has no vector index, and fetching an account's 100,000 embeddings per query
//! would cost far more than scoring them, so each API process keeps the accounts it searched
//! in memory, packed ([`drive_embed::Packed`], 436 bytes a moment: `i8` numbers and their
//! signs, searched in two passes), and brings a copy up to date before each query: one row
//! (`moment_generations`) says whether anything changed; if so, the list of the account's moment
//! ids says which moments to drop and which few to fetch (moments are only added and removed,
//! never changed). The least recently searched accounts are dropped past
//! `DRIVE_SEARCH_CACHE_BYTES`.
//!
//! Queries are embedded on the model's own thread, those asked meanwhile in one batch
//! ([`BatchingEmbedder`]): callers at once share the cost of one embedding.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use drive_core::db::{PgPool, moments};
use drive_core::id::{FileId, UserId};
use drive_embed::{BatchingEmbedder, Embedder, Embedding, Packed};

use crate::error::ApiError;

pub struct Meaning {
    embedder: BatchingEmbedder,
    accounts: Mutex<HashMap<UserId, Arc<Account>>>,
    cache_bytes: usize,
}

/// One account's moments as last read: ids ascending, their files, their embeddings.
struct Account {
    generation: i64,
    ids: Vec<i64>,
    /// Each moment's file, as its place in `files`: a search among some files then tells a
    /// moment in or out by one look in a list, not by hashing its file's id.
    file_of: Vec<u32>,
    /// The files the moments are in, each once.
    files: Vec<FileId>,
    packed: Packed,
    used: Mutex<Instant>,
}

impl Account {
    fn bytes(&self) -> usize {
        self.packed.bytes() + self.ids.len() * (8 + 4) + self.files.len() * 16
    }

    /// The file of moment `i`.
    fn file(&self, i: usize) -> FileId {
        self.files[self.file_of[i] as usize]
    }
}

/// The least cosine a moment needs to be found by meaning: unrelated sentences score about
/// 0 to 0.15 with this model, paraphrases 0.5 and above.
const MIN_SIMILARITY: f32 = 0.25;

/// Embeddings fetched in one query at most, so a large first read does not hold one huge
/// answer in memory twice.
const FETCH: usize = 10_000;

impl Meaning {
    /// Loads the model from `models` (`DRIVE_MODELS`); keeps at most `cache_bytes` of
    /// accounts' embeddings.
    pub fn load(models: &Path, cache_bytes: usize) -> Result<Meaning, drive_embed::EmbedError> {
        Ok(Meaning {
            embedder: BatchingEmbedder::new(Embedder::load(models)?)?,
            accounts: Mutex::new(HashMap::new()),
            cache_bytes,
        })
    }

    /// The embedding of `text`, waited for off the async threads.
    pub async fn embed(self: &Arc<Self>, text: &str) -> Result<Embedding, ApiError> {
        let (meaning, text) = (self.clone(), text.to_string());
        tokio::task::spawn_blocking(move || meaning.embedder.embed(&text))
            .await
            .map_err(|e| ApiError::Embedding(e.to_string()))?
            .map_err(|e| ApiError::Embedding(e.to_string()))
    }

    /// The ids of the `n` moments of `user_id` nearest `query`, nearest first, among the files
    /// `within` when given, leaving out those too far to be related ([`MIN_SIMILARITY`]).
    pub async fn nearest(
        &self,
        db: &PgPool,
        user_id: UserId,
        query: &[f32],
        within: Option<&[FileId]>,
        n: usize,
    ) -> Result<Vec<i64>, ApiError> {
        let account = self.account(db, user_id).await?;
        let within: Option<HashSet<FileId>> = within.map(|w| w.iter().copied().collect());
        let query = query.to_vec();
        // Milliseconds of scanning at a million moments: off the async threads.
        tokio::task::spawn_blocking(move || {
            let allowed: Option<Vec<bool>> =
                within.map(|within| account.files.iter().map(|f| within.contains(f)).collect());
            let keep = |i: usize| {
                allowed
                    .as_ref()
                    .is_none_or(|allowed| allowed[account.file_of[i] as usize])
            };
            account
                .packed
                .nearest(&query, n, keep)
                .into_iter()
                .filter(|&i| account.packed.score(i, &query) >= MIN_SIMILARITY)
                .map(|i| account.ids[i])
                .collect()
        })
        .await
        .map_err(|e| ApiError::Panic(format!("searching by meaning: {e}")))
    }

    /// The account's moments, brought up to date.
    async fn account(&self, db: &PgPool, user_id: UserId) -> Result<Arc<Account>, sqlx::Error> {
        let generation = moments::generation(db, user_id).await?;
        let cached = self.lock().get(&user_id).cloned();
        if let Some(account) = &cached
            && account.generation == generation
        {
            *account.used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            return Ok(account.clone());
        }
        // Read after the generation: a change in between is read now and read again next time.
        let ids = moments::ids(db, user_id).await?;
        let old = cached.as_deref();
        let kept: HashMap<i64, usize> = old
            .map(|a| a.ids.iter().enumerate().map(|(i, id)| (*id, i)).collect())
            .unwrap_or_default();
        let missing: Vec<i64> = ids.iter().copied().filter(|id| !kept.contains_key(id)).collect();
        let mut fetched = HashMap::new();
        for chunk in missing.chunks(FETCH) {
            for row in moments::embeddings(db, user_id, chunk).await? {
                if let Some(embedding) = drive_embed::from_bytes(&row.embedding) {
                    fetched.insert(row.id, (row.file_id, embedding));
                }
            }
        }
        let mut account = Account {
            generation,
            ids: Vec::with_capacity(ids.len()),
            file_of: Vec::with_capacity(ids.len()),
            files: Vec::new(),
            packed: Packed::default(),
            used: Mutex::new(Instant::now()),
        };
        let mut places: HashMap<FileId, u32> = HashMap::new();
        for id in ids {
            let file = if let (Some(old), Some(&i)) = (old, kept.get(&id)) {
                account.packed.push_packed(&old.packed, i);
                old.file(i)
            } else if let Some((file, embedding)) = fetched.remove(&id) {
                account.packed.push(&embedding);
                file
            } else {
                // Removed since the id list was read.
                continue;
            };
            let place = *places.entry(file).or_insert_with(|| {
                account.files.push(file);
                (account.files.len() - 1) as u32
            });
            account.file_of.push(place);
            account.ids.push(id);
        }
        let account = Arc::new(account);
        let mut accounts = self.lock();
        accounts.insert(user_id, account.clone());
        self.evict(&mut accounts, user_id);
        Ok(account)
    }

    /// Drops the least recently searched accounts (never `keep`) until the rest fit.
    fn evict(&self, accounts: &mut HashMap<UserId, Arc<Account>>, keep: UserId) {
        let mut total: usize = accounts.values().map(|a| a.bytes()).sum();
        while total > self.cache_bytes {
            let oldest = accounts
                .iter()
                .filter(|(user, _)| **user != keep)
                .min_by_key(|(_, a)| *a.used.lock().unwrap_or_else(|e| e.into_inner()))
                .map(|(user, a)| (*user, a.bytes()));
            let Some((user, bytes)) = oldest else { break };
            accounts.remove(&user);
            total -= bytes;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<UserId, Arc<Account>>> {
        self.accounts.lock().unwrap_or_else(|e| e.into_inner())
    }
}
