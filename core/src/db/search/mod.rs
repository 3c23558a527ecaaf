//! Library search by metadata (`/search-files` without `query`), and storing what metadata
//! extraction finds, which is what the search filters read.

use crate::file::FileKind;
use crate::id::{FileId, FolderId, TagId, UserId};
use crate::storage::Bucket;
use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Postgres, QueryBuilder};

use crate::metadata::{Metadata, MetadataState, Mode, MusicalKey};

mod page;
pub use page::{After, SortKey, Start};

/// Stores what extraction found about a file, and that it was read: the one path by which
/// metadata arrives.
pub async fn store_metadata<'e>(
    db: impl sqlx::PgExecutor<'e>,
    file_id: FileId,
    m: &Metadata,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update files set title = $2, artists = $3, album = $4, genre = $5, taken_time = $6,
                duration_seconds = $7, tempo_bpm = $8, key_pitch = $9, key_mode = $10,
                latitude = $11, longitude = $12, width = $13, height = $14,
                video_codec = $15, audio_codec = $16, soundprint = $17,
                metadata_state = 'read', metadata_error = null
         where id = $1",
    )
    .bind(file_id)
    .bind(&m.title)
    .bind((!m.artists.is_empty()).then_some(&m.artists))
    .bind(&m.album)
    .bind(&m.genre)
    .bind(m.taken_time)
    .bind(m.duration_seconds)
    .bind(m.tempo_bpm)
    .bind(m.key.map(|k| i16::from(k.pitch)))
    .bind(m.key.and_then(|k| k.mode).map(|mode| mode.as_str()))
    .bind(m.location.map(|l| l.latitude))
    .bind(m.location.map(|l| l.longitude))
    .bind(m.width)
    .bind(m.height)
    .bind(&m.video_codec)
    .bind(&m.audio_codec)
    .bind(&m.soundprint)
    .execute(db)
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    Newest,
    Oldest,
    Largest,
    Smallest,
    Name,
}

/// A box on the map; `west` past `east` crosses the antimeridian.
#[derive(Debug, Clone, Copy)]
pub struct BoundingBox {
    pub south: f64,
    pub west: f64,
    pub north: f64,
    pub east: f64,
}

/// Whose files a search looks at: the caller's own (the default), theirs and those others share
/// with them, or only the shared ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Whose {
    #[default]
    Own,
    OwnAndShared,
    Shared,
}

/// Every filter is optional; each one given narrows the result.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub whose: Whose,
    /// Words (lower case) that must all appear in a file's words.
    pub words: Vec<String>,
    pub kinds: Option<Vec<String>>,
    /// Tag names, all of which a file must carry (case-insensitive).
    pub tags: Vec<String>,
    /// A folder's stored path (`None`: the top): files in it or below.
    pub folder: Option<String>,
    /// Only the files directly in `folder` (at the top, when it is `None`), not below it.
    pub folder_only: bool,
    pub is_public: Option<bool>,
    pub uploaded_after: Option<DateTime<Utc>>,
    pub uploaded_before: Option<DateTime<Utc>>,
    pub taken_after: Option<DateTime<Utc>>,
    pub taken_before: Option<DateTime<Utc>>,
    pub min_duration: Option<f64>,
    pub max_duration: Option<f64>,
    pub min_size: Option<i64>,
    pub max_size: Option<i64>,
    pub min_tempo: Option<f64>,
    pub max_tempo: Option<f64>,
    pub key: Option<MusicalKey>,
    pub within: Option<BoundingBox>,
    /// Only these files.
    pub ids: Option<Vec<FileId>>,
    /// Only files of exactly this name.
    pub file_name: Option<String>,
}

impl Filters {
    /// Whether anything but words and folder narrows files by what they are.
    pub fn narrows_by_content(&self) -> bool {
        self.kinds.is_some()
            || self.ids.is_some()
            || self.file_name.is_some()
            || !self.tags.is_empty()
            || self.is_public.is_some()
            || self.uploaded_after.is_some()
            || self.uploaded_before.is_some()
            || self.taken_after.is_some()
            || self.taken_before.is_some()
            || self.min_duration.is_some()
            || self.max_duration.is_some()
            || self.min_size.is_some()
            || self.max_size.is_some()
            || self.min_tempo.is_some()
            || self.max_tempo.is_some()
            || self.key.is_some()
            || self.within.is_some()
    }
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Hit {
    pub id: FileId,
    pub file_name: String,
    pub file_size: i64,
    pub mime_type: String,
    #[sqlx(try_from = "String")]
    pub kind: FileKind,
    pub bucket: Bucket,
    pub object_key: String,
    pub created_at: DateTime<Utc>,
    pub modified_time: Option<DateTime<Utc>>,
    pub description: Option<String>,
    pub folder_id: Option<FolderId>,
    pub folder_path: Option<String>,
    pub owner_id: UserId,
    pub owner_handle: String,
    pub tags: Vec<String>,
    pub title: Option<String>,
    pub artists: Option<Vec<String>>,
    pub album: Option<String>,
    pub genre: Option<String>,
    pub taken_time: Option<DateTime<Utc>>,
    pub duration_seconds: Option<f64>,
    pub tempo_bpm: Option<f64>,
    pub key_pitch: Option<i16>,
    pub key_mode: Option<Mode>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub width: Option<i32>,
    pub height: Option<i32>,
    pub video_codec: Option<String>,
    pub audio_codec: Option<String>,
    pub metadata_state: Option<MetadataState>,
    pub metadata_error: Option<String>,
    pub artwork_id: Option<FileId>,
}

/// A pattern matching `word` anywhere, with LIKE's own characters taken literally.
fn contains(word: &str) -> String {
    let escaped = word.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// Whether the trigram index can narrow a search for `word`: pg_trgm takes trigrams from runs of
/// letters and digits, so a word without three of them in a row ("42", "a-b") gives it none.
fn has_trigram(word: &str) -> bool {
    let mut run = 0;
    for c in word.chars() {
        run = if c.is_alphanumeric() { run + 1 } else { 0 };
        if run == 3 {
            return true;
        }
    }
    false
}

/// One page of the caller's files matching `filters`: `limit + 1` rows at most, so the caller
/// can tell whether more follow.
pub async fn files(
    pool: &PgPool,
    user_id: UserId,
    filters: &Filters,
    sort: Sort,
    limit: i64,
    start: &Start,
) -> Result<Vec<Hit>, sqlx::Error> {
    // Planned for the values given every time, never with a cached generic plan: whether to walk
    // an index in the page's order and filter, or to find the matches first and sort them, depends
    // on how many files the account holds and how common the words and tags are. A generic plan
    // assumes an average account, and for an account of 100,000 files read every one to answer
    // "song 42". And never compiled: a page of a large account can be costed above
    // `jit_above_cost`, and compiling the plan took 40–80 ms, several times what running it does.
    let mut tx = pool
        .begin_with("begin; set local plan_cache_mode = force_custom_plan; set local jit = off")
        .await?;

    let Some(tag_ids) = tags_asked(&mut tx, user_id, filters).await? else {
        return Ok(Vec::new());
    };

    // Sorted by name within a folder, each folder of the subtree gives its first page from its own
    // index in name order (`files_in_folder_by_name`), and only those are sorted together: a page
    // reads at most `limit + 1 + offset` files a folder instead of every file under the folder.
    let by_name_in = match (&filters.folder, sort, filters.whose, filters.folder_only) {
        (Some(folder), Sort::Name, Whose::Own, false) => Some(folder),
        _ => None,
    };

    let mut q: QueryBuilder<Postgres> = QueryBuilder::new(HIT_COLUMNS);
    q.push(if by_name_in.is_some() {
        " from folders d cross join lateral (select f.* from files f where f.folder_id = d.id and"
    } else {
        " from files f left join folders d on d.id = f.folder_id where"
    });
    push_conditions(&mut q, user_id, filters, &tag_ids, by_name_in.is_none());
    let offset = match start {
        Start::Offset(offset) => *offset,
        Start::After(after) => {
            after.push_condition(&mut q);
            0
        }
    };
    if let Some(folder) = by_name_in {
        // Every file of the page is among the first `limit + 1 + offset` of its own folder.
        q.push(" order by lower(f.file_name), f.id limit ")
            .push_bind(limit + 1 + offset)
            .push(") f where d.user_id = ")
            .push_bind(user_id)
            .push(" and path_within(d.path, ")
            .push_bind(folder.clone())
            .push(")");
    }
    q.push(match sort {
        Sort::Newest => " order by f.created_at desc, f.id desc",
        Sort::Oldest => " order by f.created_at, f.id",
        Sort::Largest => " order by f.file_size desc, f.id",
        Sort::Smallest => " order by f.file_size, f.id",
        Sort::Name => " order by lower(f.file_name), f.id",
    });
    q.push(" limit ")
        .push_bind(limit + 1)
        .push(" offset ")
        .push_bind(offset);
    let hits = q.build_query_as().fetch_all(&mut *tx).await?;
    tx.commit().await?;
    Ok(hits)
}

/// The columns of a [`Hit`], over `files f` and `folders d` (its folder).
const HIT_COLUMNS: &str = "select f.id, f.file_name, f.file_size, f.mime_type, f.kind, f.bucket, f.object_key, f.created_at,
                f.modified_time, f.description, f.folder_id, d.path as folder_path,
                f.user_id as owner_id, (select u.handle from users u where u.id = f.user_id) as owner_handle,
                coalesce((select array_agg(t.text order by lower(t.text)) from file_tags ft
                          join tags t on t.id = ft.tag_id where ft.file_id = f.id), '{}') as tags,
                f.title, f.artists, f.album, f.genre, f.taken_time, f.duration_seconds, f.tempo_bpm,
                f.key_pitch, f.key_mode, f.latitude, f.longitude, f.width, f.height,
                f.video_codec, f.audio_codec, f.metadata_state, f.metadata_error,
                coalesce(f.artwork_id,
                         (select a.id from files a where a.derivative_of = f.id and a.file_name not like 'frame %'
                          order by a.file_name limit 1)) as artwork_id";

/// The conditions every search applies after `where`: the library files of `filters.whose`
/// matching `filters` (`tag_ids` the tags asked for, rarest first). The folder is left to the
/// caller unless `folder_in_where`.
fn push_conditions(
    q: &mut QueryBuilder<'_, Postgres>,
    user_id: UserId,
    filters: &Filters,
    tag_ids: &[TagId],
    folder_in_where: bool,
) {
    q.push(" f.trashed_at is null and f.derivative_of is null and ");
    push_whose(q, user_id, filters.whose);
    if !filters.words.is_empty() {
        // `search_text` is the file's words in lower case, kept by triggers (see its migration).
        // Each word the trigram index can narrow by is a condition of its own, which the index
        // takes (`like all` is never an index condition). Words too short for trigrams are only
        // checked on the rows read: given to the index they narrow nothing, yet make the planner
        // believe it narrows to a few rows and read every file with a common word ("song") before
        // sorting, where walking the newest files finds a page of "song 42" after ~10,000 rows.
        let (narrowing, short): (Vec<&String>, Vec<&String>) =
            filters.words.iter().partition(|w| has_trigram(w));
        for word in narrowing {
            q.push(" and f.search_text like ").push_bind(contains(word));
        }
        if !short.is_empty() {
            let patterns: Vec<String> = short.iter().map(|w| contains(w)).collect();
            q.push(" and f.search_text like all(")
                .push_bind(patterns)
                .push(")");
        }
    }
    if let Some(kinds) = &filters.kinds {
        q.push(" and f.kind = any(").push_bind(kinds.clone()).push(")");
    }
    if let Some(ids) = &filters.ids {
        q.push(" and f.id = any(").push_bind(ids.clone()).push(")");
    }
    if let Some(name) = &filters.file_name {
        // The lower-case comparison lets the name index (`files_by_name`) find it.
        q.push(" and lower(f.file_name) = lower(")
            .push_bind(name.clone())
            .push(") and f.file_name = ")
            .push_bind(name.clone());
    }
    if let Some((rarest, others)) = tag_ids.split_first() {
        // Driven by the rarest tag, with its id known to the planner: its statistics say how many
        // files carry it, so a rare tag's few files are read and sorted, while for a common one
        // the newest files are walked and each is looked up in `file_tags`.
        q.push(" and f.id in (select ft.file_id from file_tags ft where ft.tag_id = ")
            .push_bind(*rarest)
            .push(")");
        if !others.is_empty() {
            // The other tags, checked file by file. Not one join per tag: the planner would
            // multiply the tags' shares as if independent, and tags that go together (most files
            // with one have the other) would look rare enough to sort all their files.
            q.push(" and (select count(*) = ")
                .push_bind(others.len() as i64)
                .push(" from file_tags ft where ft.file_id = f.id and ft.tag_id = any(")
                .push_bind(others.to_vec())
                .push("))");
        }
    }
    match (&filters.folder, filters.folder_only, folder_in_where) {
        (Some(folder), false, true) => {
            q.push(" and path_within(d.path, ")
                .push_bind(folder.clone())
                .push(")");
        }
        (Some(folder), true, _) => {
            q.push(" and d.path = ").push_bind(folder.clone());
        }
        (None, true, _) => {
            q.push(" and f.folder_id is null");
        }
        (None, false, _) | (Some(_), false, false) => {}
    }
    if let Some(public) = filters.is_public {
        q.push(" and (f.bucket = 'public') = ").push_bind(public);
    }
    let ranges = [
        ("f.created_at >= ", filters.uploaded_after.map(Bound::Time)),
        ("f.created_at <= ", filters.uploaded_before.map(Bound::Time)),
        ("f.taken_time >= ", filters.taken_after.map(Bound::Time)),
        ("f.taken_time <= ", filters.taken_before.map(Bound::Time)),
        ("f.duration_seconds >= ", filters.min_duration.map(Bound::Number)),
        ("f.duration_seconds <= ", filters.max_duration.map(Bound::Number)),
        ("f.file_size >= ", filters.min_size.map(Bound::Bytes)),
        ("f.file_size <= ", filters.max_size.map(Bound::Bytes)),
        ("f.tempo_bpm >= ", filters.min_tempo.map(Bound::Number)),
        ("f.tempo_bpm <= ", filters.max_tempo.map(Bound::Number)),
    ];
    for (condition, bound) in ranges {
        let Some(bound) = bound else { continue };
        q.push(" and ").push(condition);
        match bound {
            Bound::Time(t) => q.push_bind(t),
            Bound::Number(n) => q.push_bind(n),
            Bound::Bytes(n) => q.push_bind(n),
        };
    }
    if let Some(key) = filters.key {
        q.push(" and f.key_pitch = ").push_bind(i16::from(key.pitch));
        if let Some(mode) = key.mode {
            q.push(" and f.key_mode = ").push_bind(mode.as_str());
        }
    }
    if let Some(b) = filters.within {
        q.push(" and f.latitude between ")
            .push_bind(b.south)
            .push(" and ")
            .push_bind(b.north);
        // A box whose west edge lies east of its east edge wraps around the antimeridian.
        let join = if b.west <= b.east { " and " } else { " or " };
        q.push(" and (f.longitude >= ").push_bind(b.west);
        q.push(join).push("f.longitude <= ").push_bind(b.east).push(")");
    }
}

/// Whose files: the caller's, or (only, or also) those shared with them (`shared_with`, read
/// only among the files of accounts that share something with them).
fn push_whose(q: &mut QueryBuilder<'_, Postgres>, user_id: UserId, whose: Whose) {
    let shared = |q: &mut QueryBuilder<'_, Postgres>| {
        q.push("(f.user_id in (select s.owner_id from file_shares s where s.grantee_id = ")
            .push_bind(user_id)
            .push(") and shared_with(f.id, f.folder_id, ")
            .push_bind(user_id)
            .push("))");
    };
    match whose {
        Whose::Own => {
            q.push("f.user_id = ").push_bind(user_id);
        }
        Whose::OwnAndShared => {
            q.push("(f.user_id = ").push_bind(user_id).push(" or ");
            shared(q);
            q.push(")");
        }
        Whose::Shared => shared(q),
    }
}

/// The files matching `filters`, with their owners, unordered and unpaged: which files a search
/// inside files may look in.
pub async fn file_ids(
    pool: &PgPool,
    user_id: UserId,
    filters: &Filters,
) -> Result<Vec<(FileId, UserId)>, sqlx::Error> {
    let mut tx = pool
        .begin_with("begin; set local plan_cache_mode = force_custom_plan; set local jit = off")
        .await?;
    let Some(tag_ids) = tags_asked(&mut tx, user_id, filters).await? else {
        return Ok(Vec::new());
    };
    let mut q: QueryBuilder<Postgres> = QueryBuilder::new(
        "select f.id, f.user_id from files f left join folders d on d.id = f.folder_id where",
    );
    push_conditions(&mut q, user_id, filters, &tag_ids, true);
    let ids = q.build_query_as().fetch_all(&mut *tx).await?;
    tx.commit().await?;
    Ok(ids)
}

/// The library files `ids` the caller may see (theirs, or shared with them) as search results,
/// in no particular order.
pub async fn hits(pool: &PgPool, user_id: UserId, ids: &[FileId]) -> Result<Vec<Hit>, sqlx::Error> {
    let mut q: QueryBuilder<Postgres> = QueryBuilder::new(HIT_COLUMNS);
    q.push(" from files f left join folders d on d.id = f.folder_id")
        .push(" where f.trashed_at is null and f.derivative_of is null and ");
    push_whose(&mut q, user_id, Whose::OwnAndShared);
    q.push(" and f.id = any(").push_bind(ids.to_vec()).push(")");
    q.build_query_as().fetch_all(pool).await
}

/// The ids of the tags `filters` asks for, the one on the fewest files first; `None` when a name
/// is none of the caller's tags or is asked twice (no file carries one tag for each name).
async fn tags_asked(
    conn: &mut PgConnection,
    user_id: UserId,
    filters: &Filters,
) -> Result<Option<Vec<TagId>>, sqlx::Error> {
    if filters.tags.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let lowered: Vec<String> = filters.tags.iter().map(|t| t.to_lowercase()).collect();
    let ids = tags_rarest_first(conn, user_id, &lowered).await?;
    Ok((ids.len() == lowered.len()).then_some(ids))
}

/// The ids of the caller's tags named `lowered` (lower case), the tag on the fewest files first.
/// Files are counted up to 1,000 a tag: enough to tell a rare tag from a common one, at a bounded
/// cost however many files a tag is on.
async fn tags_rarest_first(
    conn: &mut PgConnection,
    user_id: UserId,
    lowered: &[String],
) -> Result<Vec<TagId>, sqlx::Error> {
    sqlx::query_scalar(
        "select t.id from tags t
         where t.user_id = $1 and lower(t.text) = any($2)
         order by (select count(*) from (select from file_tags ft where ft.tag_id = t.id limit 1000) as upto), t.id",
    )
    .bind(user_id)
    .bind(lowered)
    .fetch_all(conn)
    .await
}

enum Bound {
    Time(DateTime<Utc>),
    Number(f64),
    Bytes(i64),
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FolderHit {
    pub id: FolderId,
    pub path: String,
    pub file_count: i64,
}

/// Up to 20 of the caller's folders whose path holds every word and whose own name holds at
/// least one, inside `within_folder` when given: the one named exactly first, then the
/// shallowest.
pub async fn folders(
    pool: &PgPool,
    user_id: UserId,
    words: &[String],
    exact: &str,
    within_folder: Option<&str>,
) -> Result<Vec<FolderHit>, sqlx::Error> {
    let patterns: Vec<String> = words.iter().map(|w| contains(w)).collect();
    sqlx::query_as(
        "select d.id, d.path,
                (select count(*) from files f where f.folder_id = d.id and f.trashed_at is null) as file_count
         from folders d
         where d.user_id = $1
           and d.path ilike all($2)
           and regexp_replace(d.path, '^.*/', '') ilike any($2)
           and ($4::text is null or (d.path <> $4 and path_within(d.path, $4)))
         order by lower(regexp_replace(d.path, '^.*/', '')) <> lower($3),
                  length(d.path) - length(replace(d.path, '/', '')),
                  d.path
         limit 20",
    )
    .bind(user_id)
    .bind(patterns)
    .bind(exact)
    .bind(within_folder)
    .fetch_all(pool)
    .await
}
