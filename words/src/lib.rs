//! The words of an account's moments, matched and ranked in memory: what `/search-files`'
//! `query` finds by words.
//!
//! PostgreSQL stays the judge of what a word is: each moment's `words` (its `tsvector`, English
//! stemming) is read as the server writes it, and a query is the server's
//! `websearch_to_tsquery('english', …)`, also as written. What this crate does in memory is what
//! made a common word slow there: finding the moments that match (an index from each lexeme to
//! the moments it is in and its positions there, phrases checked by position exactly as
//! PostgreSQL's `@@` does) and ranking them by BM25 without reading each match's row. A word in
//! 100,000 moments costs a pass over 100,000 postings, not 100,000 rows.

use std::collections::HashMap;

mod sets;
mod text;

use text::Query;

#[derive(Debug, thiserror::Error)]
pub enum WordsError {
    #[error("expected {expected} at byte {at} of {text:?}")]
    Unexpected {
        expected: String,
        at: usize,
        text: String,
    },
}

/// A query ready to search with: `None` inside for the empty query, which finds nothing.
#[derive(Debug, Clone)]
pub struct Search(Option<Query>);

impl Search {
    /// The query whose tsquery text (as `websearch_to_tsquery` writes it) is `tsquery`.
    pub fn parse(tsquery: &str) -> Result<Search, WordsError> {
        Ok(Search(text::tsquery(tsquery)?))
    }
}

/// BM25's constants, the usual ones: how fast repeating a word stops counting, and how much a
/// long moment's length discounts its words.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The moments' words, moment `i` being the `i`-th pushed.
#[derive(Debug, Default)]
pub struct Words {
    terms: HashMap<Box<str>, u32>,
    postings: Vec<Postings>,
    /// Each moment's count of words (positions): its length for the rank.
    lengths: Vec<u32>,
    /// The sum of `lengths`.
    total_length: u64,
}

/// The moments one lexeme is in, ascending, and its positions in each.
#[derive(Debug, Default)]
struct Postings {
    moments: Vec<u32>,
    /// Where moment `k`'s positions end in `positions` (they start where `k - 1`'s end).
    ends: Vec<u32>,
    positions: Vec<u16>,
}

impl Postings {
    fn positions_at(&self, k: usize) -> &[u16] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        &self.positions[start..self.ends[k] as usize]
    }

    fn push(&mut self, moment: u32, positions: &[u16]) {
        self.moments.push(moment);
        self.positions.extend_from_slice(positions);
        self.ends.push(self.positions.len() as u32);
    }
}

impl Words {
    /// The words of `old`'s moments `kept` (ascending), as moments `0..kept.len()` of a new
    /// index: moments are only ever added and removed, so a copy brought up to date is the
    /// old one less what went, then what came pushed after.
    pub fn keeping(old: &Words, kept: &[usize]) -> Words {
        let mut renumbered = vec![u32::MAX; old.lengths.len()];
        for (new, &i) in kept.iter().enumerate() {
            renumbered[i] = new as u32;
        }
        let mut words = Words::default();
        for (term, &t) in &old.terms {
            let list = &old.postings[t as usize];
            let mut kept_list = Postings::default();
            for (k, &moment) in list.moments.iter().enumerate() {
                let new = renumbered[moment as usize];
                if new != u32::MAX {
                    kept_list.push(new, list.positions_at(k));
                }
            }
            if !kept_list.moments.is_empty() {
                words.terms.insert(term.clone(), words.postings.len() as u32);
                words.postings.push(kept_list);
            }
        }
        for &i in kept {
            words.count(old.lengths[i]);
        }
        words
    }

    /// Adds the next moment, whose words are `tsvector` (as PostgreSQL writes it).
    pub fn push(&mut self, tsvector: &str) -> Result<(), WordsError> {
        let moment = self.lengths.len() as u32;
        let mut length = 0;
        for (lexeme, positions) in text::tsvector(tsvector)? {
            let next = self.postings.len() as u32;
            let t = *self.terms.entry(lexeme.into_boxed_str()).or_insert(next);
            if t == next {
                self.postings.push(Postings::default());
            }
            self.postings[t as usize].push(moment, &positions);
            length += positions.len().max(1) as u32;
        }
        self.count(length);
        Ok(())
    }

    fn count(&mut self, length: u32) {
        self.lengths.push(length);
        self.total_length += u64::from(length);
    }

    /// How many moments there are.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Memory held, roughly.
    pub fn bytes(&self) -> usize {
        let lists: usize = self
            .postings
            .iter()
            .map(|p| p.moments.capacity() * 4 + p.ends.capacity() * 4 + p.positions.capacity() * 2)
            .sum();
        let terms: usize = self.terms.keys().map(|t| t.len() + 24).sum();
        lists + terms + self.lengths.capacity() * 4
    }

    /// The `n` moments that match `search` best, best first (BM25 over the query's words that
    /// are not negated; ties to the moment pushed first), among those `keep` lets through.
    pub fn best(&self, search: &Search, n: usize, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let Some(query) = &search.0 else { return Vec::new() };
        let found = self.matching(query);
        // A moment without words (only stop words) matches a negation, as in PostgreSQL.
        let mut matches: Vec<u32> = if found.negated {
            let all: Vec<u32> = (0..self.len() as u32).collect();
            sets::difference(&all, &found.moments)
        } else {
            found.moments
        };
        matches.retain(|&i| keep(i as usize));
        let mut scores = vec![0.0f64; matches.len()];
        let mut terms: Vec<&str> = Vec::new();
        positive_terms(query, false, &mut terms);
        terms.sort_unstable();
        terms.dedup();
        for term in terms {
            if let Some(list) = self.list(term) {
                self.add_scores(list, &matches, &mut scores);
            }
        }
        let mut ranked: Vec<(f64, u32)> = scores.into_iter().zip(matches).collect();
        let order = |a: &(f64, u32), b: &(f64, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if ranked.len() > n && n > 0 {
            ranked.select_nth_unstable_by(n - 1, order);
        }
        ranked.truncate(n);
        ranked.sort_unstable_by(order);
        ranked.into_iter().map(|(_, i)| i as usize).collect()
    }

    fn list(&self, term: &str) -> Option<&Postings> {
        self.terms.get(term).map(|&t| &self.postings[t as usize])
    }

    /// Adds one term's BM25 share to the scores of `matches` (ascending) it is in.
    fn add_scores(&self, list: &Postings, matches: &[u32], scores: &mut [f64]) {
        let all = self.len().max(1) as f64;
        let having = list.moments.len() as f64;
        let idf = (1.0 + (all - having + 0.5) / (having + 0.5)).ln();
        let average = (self.total_length as f64 / all).max(1.0);
        let mut k = 0;
        for (m, &moment) in matches.iter().enumerate() {
            while k < list.moments.len() && list.moments[k] < moment {
                k += 1;
            }
            if k == list.moments.len() {
                break;
            }
            if list.moments[k] == moment {
                let tf = list.positions_at(k).len().max(1) as f64;
                let length = f64::from(self.lengths[moment as usize]);
                scores[m] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average));
            }
        }
    }

    /// The moments `query` matches, as PostgreSQL's `@@` decides.
    fn matching(&self, query: &Query) -> Found {
        match query {
            Query::Lexeme(term) => Found::of(self.list(term).map(|l| l.moments.clone()).unwrap_or_default()),
            Query::Phrase(chain) => Found::of(self.phrase(chain)),
            Query::Not(inner) => {
                let found = self.matching(inner);
                Found {
                    negated: !found.negated,
                    ..found
                }
            }
            Query::And(a, b) => self.matching(a).and(self.matching(b)),
            Query::Or(a, b) => self.matching(a).or(self.matching(b)),
        }
    }

    /// The moments where each lexeme of `chain` stands its distance after the one before it.
    fn phrase(&self, chain: &[(String, u16)]) -> Vec<u32> {
        let Some(lists) = chain
            .iter()
            .map(|(term, _)| self.list(term))
            .collect::<Option<Vec<_>>>()
        else {
            return Vec::new();
        };
        let mut candidates = lists[0].moments.clone();
        for list in &lists[1..] {
            candidates = sets::intersection(&candidates, &list.moments);
        }
        let mut cursors = vec![0usize; lists.len()];
        let mut ends: Vec<u16> = Vec::new();
        candidates.retain(|&moment| {
            for (cursor, list) in cursors.iter_mut().zip(&lists) {
                while list.moments[*cursor] < moment {
                    *cursor += 1;
                }
            }
            // Where the phrase read so far can end, then where it can end one lexeme further.
            ends.clear();
            ends.extend_from_slice(lists[0].positions_at(cursors[0]));
            for ((_, distance), (list, &cursor)) in chain.iter().zip(lists.iter().zip(&cursors)).skip(1) {
                let before = std::mem::take(&mut ends);
                ends = list
                    .positions_at(cursor)
                    .iter()
                    .copied()
                    .filter(|&p| {
                        p.checked_sub(*distance)
                            .is_some_and(|start| before.contains(&start))
                    })
                    .collect();
                if ends.is_empty() {
                    return false;
                }
            }
            !ends.is_empty()
        });
        candidates
    }
}

/// Moments found: `moments` (ascending), or, when `negated`, every moment but those.
struct Found {
    moments: Vec<u32>,
    negated: bool,
}

impl Found {
    fn of(moments: Vec<u32>) -> Found {
        Found {
            moments,
            negated: false,
        }
    }

    fn and(self, other: Found) -> Found {
        let (a, b) = (&self.moments, &other.moments);
        match (self.negated, other.negated) {
            (false, false) => Found::of(sets::intersection(a, b)),
            (false, true) => Found::of(sets::difference(a, b)),
            (true, false) => Found::of(sets::difference(b, a)),
            (true, true) => Found {
                moments: sets::union(a, b),
                negated: true,
            },
        }
    }

    fn or(self, other: Found) -> Found {
        let (a, b) = (&self.moments, &other.moments);
        match (self.negated, other.negated) {
            (false, false) => Found::of(sets::union(a, b)),
            (false, true) => Found {
                moments: sets::difference(b, a),
                negated: true,
            },
            (true, false) => Found {
                moments: sets::difference(a, b),
                negated: true,
            },
            (true, true) => Found {
                moments: sets::intersection(a, b),
                negated: true,
            },
        }
    }
}

/// The lexemes of `query` not negated (under no `!`, or two): those a match is ranked by.
fn positive_terms<'q>(query: &'q Query, negated: bool, terms: &mut Vec<&'q str>) {
    match query {
        Query::Lexeme(_) | Query::Phrase(_) if negated => {}
        Query::Lexeme(term) => terms.push(term),
        Query::Phrase(chain) => terms.extend(chain.iter().map(|(term, _)| term.as_str())),
        Query::Not(inner) => positive_terms(inner, !negated, terms),
        Query::And(a, b) | Query::Or(a, b) => {
            positive_terms(a, negated, terms);
            positive_terms(b, negated, terms);
        }
    }
}

#[cfg(test)]
mod tests;
