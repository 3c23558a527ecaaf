//! `/search-files` with `query`: inside the files the owner has had read, by words and by
//! meaning, the two rankings fused.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use drive_core::db::moments::{self, EntryType, Moment};
use drive_core::db::search::{self, Filters, Hit, Whose};
use drive_core::id::{FileId, UserId};
use drive_words::Search;
use serde::Serialize;
use utoipa::ToSchema;

use super::{SearchAnswer, results};
use crate::error::{ApiError, ApiResult};
use crate::moment_index::Ranked;
use crate::state::AppState;

/// A place inside a file where the query was found.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MomentHit {
    file_id: FileId,
    /// `text` (written words, OCR included), `speech` (what is said) or `visual` (what a model saw).
    entry_type: EntryType,
    text: String,
    /// Seconds into a recording where it starts and ends; null for documents.
    at: Option<f64>,
    until: Option<f64>,
    /// The document's page, from 1; null when the file has no pages.
    page: Option<i32>,
}

/// Moments answered at most, whatever `limit` says, and at most from one file.
const MAX_MOMENTS: i64 = 50;
const MOMENTS_PER_FILE: usize = 3;

/// Moments each ranking hands the fusion.
const CANDIDATES: usize = 200;

/// Reciprocal rank fusion's constant: a moment scores `1 / (K + rank)` in each ranking it is
/// in. 60 is the value of the method's paper; it keeps one ranking's first places from
/// drowning what both rankings agree on.
const RRF_K: f64 = 60.0;

/// Searches inside the read files the caller may look in for `query`: the moments whose words
/// match (PostgreSQL's web-search syntax and English stemming, ranked by BM25) and those nearest
/// in meaning (cosine of embeddings), fused by rank.
pub(super) async fn inside(
    state: &AppState,
    user_id: UserId,
    query: &str,
    filters: &Filters,
    limit: i64,
) -> ApiResult<SearchAnswer> {
    let narrowed = !filters.words.is_empty()
        || filters.folder.is_some()
        || filters.folder_only
        || filters.narrows_by_content();
    // Each account's moments are searched on their own, among the files of its the caller may
    // look in: the caller's own (all of them unless narrowed), and those others share.
    let mut accounts: Vec<(UserId, Option<Vec<FileId>>)> = Vec::new();
    if narrowed || filters.whose != Whose::Own {
        let mut by_owner: HashMap<UserId, Vec<FileId>> = HashMap::new();
        for (file, owner) in search::file_ids(&state.db, user_id, filters).await? {
            by_owner.entry(owner).or_default().push(file);
        }
        if filters.whose != Whose::Shared && !narrowed {
            accounts.push((user_id, None));
            by_owner.remove(&user_id);
        }
        accounts.extend(by_owner.into_iter().map(|(owner, files)| (owner, Some(files))));
    } else {
        accounts.push((user_id, None));
    }
    // Every account's two rankings, of one copy of its moments: the words' while the model
    // embeds the query, then the moments nearest in meaning.
    let embedding = state.moments.embed(query);
    let words = async {
        let search = Search::parse(&words_query(state, query).await?)?;
        let (mut copies, mut rankings) = (Vec::new(), Vec::new());
        for (account, within) in &accounts {
            let copy = state.moments.account(&state.db, *account).await?;
            rankings.push(copy.by_words(&search, within.as_deref(), CANDIDATES).await?);
            copies.push(copy);
        }
        Ok::<_, ApiError>((copies, rankings))
    };
    let (embedding, by_words) = tokio::join!(embedding, words);
    let (embedding, (copies, mut rankings)) = (embedding?, by_words?);
    for (copy, (_, within)) in copies.iter().zip(&accounts) {
        rankings.push(copy.nearest(&embedding, within.as_deref(), CANDIDATES).await?);
    }
    let ranked = fuse(&rankings);
    let owners: Vec<UserId> = accounts.iter().map(|(account, _)| *account).collect();
    let picked = pick(state, &owners, &ranked, limit.min(MAX_MOMENTS) as usize).await?;
    let mut file_ids: Vec<FileId> = Vec::new();
    for m in &picked {
        if !file_ids.contains(&m.file_id) {
            file_ids.push(m.file_id);
        }
    }
    let mut hits: HashMap<FileId, Hit> = search::hits(&state.db, user_id, &file_ids)
        .await?
        .into_iter()
        .map(|h| (h.id, h))
        .collect();
    Ok(SearchAnswer {
        files: results(
            file_ids.iter().filter_map(|id| hits.remove(id)).collect(),
            state,
            user_id,
        )
        .await?,
        next_offset: None,
        next_cursor: None,
        folders: None,
        moments: Some(
            picked
                .into_iter()
                .map(|m| MomentHit {
                    file_id: m.file_id,
                    entry_type: m.entry_type,
                    text: m.text,
                    at: m.at,
                    until: m.until,
                    page: m.page,
                })
                .collect(),
        ),
    })
}

/// The first `limit` moments of `ranked`, at most [`MOMENTS_PER_FILE`] from one file, in
/// library files (not trashed, not derivatives). They are chosen by the files the copies in
/// memory give them, so only the moments answered are fetched: one round trip, and another
/// only when a file chosen has left the library since its moments were read (its moments not
/// yet chosen are passed over, and the next ones ranked take their places).
async fn pick(
    state: &AppState,
    owners: &[UserId],
    ranked: &[Ranked],
    limit: usize,
) -> ApiResult<Vec<Moment>> {
    let mut per_file: HashMap<FileId, usize> = HashMap::new();
    let mut left: HashSet<FileId> = HashSet::new();
    let mut picked = Vec::new();
    let mut next = ranked.iter();
    while picked.len() < limit {
        let mut chosen = Vec::new();
        for moment in next.by_ref() {
            if left.contains(&moment.file) {
                continue;
            }
            let count = per_file.entry(moment.file).or_default();
            if *count < MOMENTS_PER_FILE {
                *count += 1;
                chosen.push(*moment);
                if picked.len() + chosen.len() == limit {
                    break;
                }
            }
        }
        if chosen.is_empty() {
            break;
        }
        let ids: Vec<i64> = chosen.iter().map(|moment| moment.id).collect();
        let mut found: HashMap<i64, Moment> = moments::found(&state.db, owners, &ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        for moment in chosen {
            match found.remove(&moment.id) {
                Some(found) => picked.push(found),
                None => {
                    left.insert(moment.file);
                }
            }
        }
    }
    Ok(picked)
}

/// `query` as PostgreSQL's tsquery text. PostgreSQL refuses more than 31 negations in a row
/// (`--…cat`) with an internal error: that is the query's fault, a 400.
async fn words_query(state: &AppState, query: &str) -> ApiResult<String> {
    moments::words_query(&state.db, query)
        .await
        .map_err(|e| match &e {
            sqlx::Error::Database(d) if d.message().contains("tsquery stack too small") => {
                ApiError::invalid("query", "the query has too many `-` in a row")
            }
            _ => e.into(),
        })
}

/// Rankings (best first) fused into one by reciprocal rank fusion, best first; ties in order.
fn fuse<T: Copy + Ord + Hash>(rankings: &[Vec<T>]) -> Vec<T> {
    let mut scores: HashMap<T, f64> = HashMap::new();
    for ranking in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(T, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(id, _)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::fuse;

    #[test]
    fn what_both_rankings_find_comes_first() {
        // 7 is second in both: above 1 and 5, each first in one ranking only.
        assert_eq!(fuse(&[vec![1, 7, 3], vec![5, 7]]), [7, 1, 5, 3]);
        assert_eq!(fuse(&[vec![], vec![2, 4]]), [2, 4]);
    }
}
