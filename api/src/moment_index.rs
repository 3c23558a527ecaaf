//! Searching inside files, in memory: each searched account's moments by meaning (their
//! embeddings against the query's, from the model the readForSearch jobs embed with, loaded
//! once at start from `DRIVE_MODELS`) and by words (their `tsvector`s against the query's
//! `websearch_to_tsquery`, [`drive_words`]).
//!
//! PostgreSQL here has no vector index, fetching an account's 100,000 embeddings per query would
//! cost far more than scoring them, and ranking a common word's 100,000 matches there reads
//! every one of their rows; so each API process keeps the accounts it searched in memory:
//! embeddings packed ([`drive_embed::Packed`], 490 bytes a moment: `i8` numbers, their signs,
//! and from 50,000 moments their cell and a copy of their signs in it, so that a query weighs
//! only the cells nearest it) and words as an index of lexemes to moments and positions.
//! A copy is brought up to date before each query: one row (`moment_generations`) says whether
//! anything changed; if so, the list of the account's moment ids says which moments to drop and
//! which few to fetch (moments are only added and removed, never changed). The least recently
//! searched accounts are dropped past `DRIVE_SEARCH_CACHE_BYTES`. An account is brought up to
//! date by one caller at a time: those who find it out of date meanwhile wait for that reading
//! and use it (eight first queries of a million moments at once would otherwise be eight
//! readings and eight copies in memory). Reading rows is the database's work; packing them is
//! done off the async threads, as the searches are.
//!
//! Queries are embedded on the model's own thread, those asked meanwhile in one batch
//! ([`BatchingEmbedder`]): callers at once share the cost of one embedding.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Instant;

use drive_core::db::{PgPool, moments};
use drive_core::id::{FileId, UserId};
use drive_embed::{BatchingEmbedder, Embedder, Embedding, Packed};
use drive_words::{Search, Words};
use tokio::sync::Semaphore;

use crate::error::ApiError;

pub struct MomentIndex {
    embedder: BatchingEmbedder,
    accounts: Mutex<HashMap<UserId, Arc<Account>>>,
    /// Each account being brought up to date: its turn, held by the caller reading it.
    turns: Mutex<HashMap<UserId, Arc<tokio::sync::Mutex<()>>>>,
    cache_bytes: usize,
}

/// Searches of accounts' copies running at once: one a core. Milliseconds of computing each at
/// a million moments; more at once than cores only share them out, each taking longer and
/// evicting the others' moments from the caches, where in turn the first come end first.
static SEARCHES: LazyLock<Semaphore> =
    LazyLock::new(|| Semaphore::new(std::thread::available_parallelism().map_or(1, usize::from)));

/// Moments this process has read from the database into its accounts' copies
/// (`drive_search_moments_read_total`).
static MOMENTS_READ: AtomicU64 = AtomicU64::new(0);

pub fn moments_read() -> u64 {
    MOMENTS_READ.load(Ordering::Relaxed)
}

/// One account's moments as last read: their ids, files, embeddings and words, moment `i` the
/// `i`-th of each. Those kept from the copy before come first, in its order, then those
/// fetched since, ascending. A query takes it once ([`MomentIndex::account`]) for both its
/// rankings: one look at the account's generation, and both rankings of the same moments.
pub struct Account {
    generation: i64,
    ids: Vec<i64>,
    /// Each moment's file, as its place in `files`: a search among some files then tells a
    /// moment in or out by one look in a list, not by hashing its file's id.
    file_of: Vec<u32>,
    /// The files the moments are in, each once.
    files: Vec<FileId>,
    packed: Packed,
    words: Words,
    used: Mutex<Instant>,
}

/// A moment a ranking found, with the file it is in as the copy has it: enough to choose the
/// moments a query answers before fetching them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ranked {
    pub id: i64,
    pub file: FileId,
}

/// An account's copy being made: the account, and where each of its files stands in `files`.
struct Filling {
    account: Account,
    places: HashMap<FileId, u32>,
}

impl Filling {
    /// A copy at `generation` holding what `old` holds of `now` (the account's moment ids), in
    /// `old`'s order; answers it and the ids it still has to read.
    fn keeping(generation: i64, old: Option<&Account>, now: Vec<i64>) -> (Filling, Vec<i64>) {
        let present: HashSet<i64> = now.iter().copied().collect();
        let kept: Vec<usize> = old
            .map(|old| {
                (0..old.ids.len())
                    .filter(|&i| present.contains(&old.ids[i]))
                    .collect()
            })
            .unwrap_or_default();
        let had: HashSet<i64> = old
            .map(|old| kept.iter().map(|&i| old.ids[i]).collect())
            .unwrap_or_default();
        let missing: Vec<i64> = now.into_iter().filter(|id| !had.contains(id)).collect();
        let mut filling = Filling {
            account: Account {
                generation,
                ids: Vec::with_capacity(present.len()),
                file_of: Vec::with_capacity(present.len()),
                files: Vec::new(),
                packed: old
                    .map(|old| Packed::keeping(&old.packed, &kept))
                    .unwrap_or_default(),
                words: old
                    .map(|old| Words::keeping(&old.words, &kept))
                    .unwrap_or_default(),
                used: Mutex::new(Instant::now()),
            },
            places: HashMap::new(),
        };
        if let Some(old) = old {
            for &i in &kept {
                filling.push(old.ids[i], old.file(i));
            }
        }
        (filling, missing)
    }

    /// Adds the moments read, in id order.
    fn add(&mut self, mut rows: Vec<moments::Searchable>) -> Result<(), ApiError> {
        MOMENTS_READ.fetch_add(rows.len() as u64, Ordering::Relaxed);
        rows.sort_unstable_by_key(|row| row.id);
        for row in rows {
            let Some(embedding) = drive_embed::from_bytes(&row.embedding) else {
                continue;
            };
            self.account.words.push(&row.words)?;
            self.account.packed.push(&embedding);
            self.push(row.id, row.file_id);
        }
        Ok(())
    }

    fn push(&mut self, id: i64, file: FileId) {
        let account = &mut self.account;
        let place = *self.places.entry(file).or_insert_with(|| {
            account.files.push(file);
            (account.files.len() - 1) as u32
        });
        account.file_of.push(place);
        account.ids.push(id);
    }
}

/// `work` on a thread for blocking work: milliseconds of computing at a million moments, which
/// would hold up every request an async thread serves.
async fn off_async<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::Panic(format!("searching inside files: {e}")))
}

impl Account {
    /// The `n` moments nearest `query`, nearest first, among the files `within` when given,
    /// leaving out those too far to be related ([`MIN_SIMILARITY`]).
    pub async fn nearest(
        self: &Arc<Self>,
        query: &[f32],
        within: Option<&[FileId]>,
        n: usize,
    ) -> Result<Vec<Ranked>, ApiError> {
        let query = query.to_vec();
        self.among(within, move |account, keep| {
            account
                .packed
                .nearest(&query, n, |i| keep.allows(i))
                .into_iter()
                .filter(|&i| account.packed.score(i, &query) >= MIN_SIMILARITY)
                .collect()
        })
        .await
    }

    /// The `n` moments whose words match `search` best, best first, among the files `within`
    /// when given.
    pub async fn by_words(
        self: &Arc<Self>,
        search: &Search,
        within: Option<&[FileId]>,
        n: usize,
    ) -> Result<Vec<Ranked>, ApiError> {
        let search = search.clone();
        self.among(within, move |account, keep| {
            account.words.best(&search, n, |i| keep.allows(i))
        })
        .await
    }

    /// What `search` answers (moments, as places in the account) over the moments in the files
    /// `within` (all when `None`), as moments with their files. Milliseconds of work at a
    /// million moments: off the async threads.
    async fn among(
        self: &Arc<Self>,
        within: Option<&[FileId]>,
        search: impl FnOnce(&Account, &Keep) -> Vec<usize> + Send + 'static,
    ) -> Result<Vec<Ranked>, ApiError> {
        let account = self.clone();
        let within: Option<HashSet<FileId>> = within.map(|w| w.iter().copied().collect());
        let _turn = SEARCHES.acquire().await;
        off_async(move || {
            let keep = Keep {
                allowed: within.map(|within| account.files.iter().map(|f| within.contains(f)).collect()),
                file_of: &account.file_of,
            };
            search(&account, &keep)
                .into_iter()
                .map(|i| Ranked {
                    id: account.ids[i],
                    file: account.file(i),
                })
                .collect()
        })
        .await
    }

    fn bytes(&self) -> usize {
        self.packed.bytes() + self.words.bytes() + self.ids.len() * (8 + 4) + self.files.len() * 16
    }

    /// The file of moment `i`.
    fn file(&self, i: usize) -> FileId {
        self.files[self.file_of[i] as usize]
    }
}

/// Which moments a search of an account weighs: those in the files allowed, or all. A type
/// the searches are compiled for, not a `dyn Fn`: it is asked for each of the hundreds of
/// thousands of moments a query weighs, and a call through a pointer each time was about a
/// tenth of the API's samples under eight callers (`perf` during `scripts/bench reading`).
struct Keep<'a> {
    /// By the place of each file in the account's `files`.
    allowed: Option<Vec<bool>>,
    file_of: &'a [u32],
}

impl Keep<'_> {
    #[inline]
    fn allows(&self, moment: usize) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|allowed| allowed[self.file_of[moment] as usize])
    }
}

/// The least cosine a moment needs to be found by meaning: unrelated sentences score about
/// 0 to 0.15 with this model, paraphrases 0.5 and above.
const MIN_SIMILARITY: f32 = 0.25;

/// Moments fetched in one query at most, so a large first read does not hold one huge
/// answer in memory twice.
const FETCH: usize = 10_000;

impl MomentIndex {
    /// Loads the model from `models` (`DRIVE_MODELS`); keeps at most `cache_bytes` of
    /// accounts' moments.
    pub fn load(models: &Path, cache_bytes: usize) -> Result<MomentIndex, drive_embed::EmbedError> {
        Ok(MomentIndex {
            embedder: BatchingEmbedder::new(Embedder::load(models)?)?,
            accounts: Mutex::new(HashMap::new()),
            turns: Mutex::new(HashMap::new()),
            cache_bytes,
        })
    }

    /// The embedding of `text`, waited for off the async threads.
    pub async fn embed(self: &Arc<Self>, text: &str) -> Result<Embedding, ApiError> {
        let (index, text) = (self.clone(), text.to_string());
        tokio::task::spawn_blocking(move || index.embedder.embed(&text))
            .await
            .map_err(|e| ApiError::Embedding(e.to_string()))?
            .map_err(|e| ApiError::Embedding(e.to_string()))
    }

    /// The account's moments, brought up to date: by this caller, or by the one whose turn it
    /// is when this one asks.
    pub async fn account(&self, db: &PgPool, user_id: UserId) -> Result<Arc<Account>, ApiError> {
        let generation = moments::generation(db, user_id).await?;
        if let Some(account) = self.current(user_id, generation) {
            return Ok(account);
        }
        let turn = self.lock_turns().entry(user_id).or_default().clone();
        let read = async {
            let _turn = turn.lock().await;
            self.read(db, user_id).await
        }
        .await;
        // The turn is dropped with its last holder: those waiting on it hold it too.
        let mut turns = self.lock_turns();
        if Arc::strong_count(&turn) == 2 {
            turns.remove(&user_id);
        }
        read
    }

    /// The account's copy when it is at `generation`.
    fn current(&self, user_id: UserId, generation: i64) -> Option<Arc<Account>> {
        let account = self.lock().get(&user_id).cloned()?;
        (account.generation == generation).then(|| {
            *account.used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            account
        })
    }

    /// Reads what changed in the account since its copy, on the caller's turn.
    async fn read(&self, db: &PgPool, user_id: UserId) -> Result<Arc<Account>, ApiError> {
        // Again: the turn before may have read it.
        let generation = moments::generation(db, user_id).await?;
        if let Some(account) = self.current(user_id, generation) {
            return Ok(account);
        }
        let old = self.lock().get(&user_id).cloned();
        // Read after the generation: a change in between is read now and read again next time.
        let ids = moments::ids(db, user_id).await?;
        let (mut filling, missing) =
            off_async(move || Filling::keeping(generation, old.as_deref(), ids)).await?;
        for chunk in missing.chunks(FETCH) {
            // Those removed since the id list was read are not there.
            let rows = moments::searchable(db, user_id, chunk).await?;
            filling = off_async(move || {
                let mut filling = filling;
                filling.add(rows).map(|()| filling)
            })
            .await??;
        }
        // The cells of those added since (and, as the account doubles, cells made anew: 2 s at
        // a million moments, `scripts/bench reading`).
        let account = off_async(move || {
            let mut account = filling.account;
            account.packed.index();
            Arc::new(account)
        })
        .await?;
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

    fn lock_turns(&self) -> std::sync::MutexGuard<'_, HashMap<UserId, Arc<tokio::sync::Mutex<()>>>> {
        self.turns.lock().unwrap_or_else(|e| e.into_inner())
    }
}
