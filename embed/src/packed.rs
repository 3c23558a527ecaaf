//! Many embeddings kept small in memory and searched without scoring them all: each number
//! packed to `i8`, scored exactly, and its signs (48 bytes), weighed against the query's a
//! machine word at a time by a rough pass that keeps the ten thousand the exact pass scores.
//! Below [`CELLS_FROM`] embeddings the rough pass weighs them all; from there, they are grouped
//! in cells (`crate::cells`) and it weighs those of the cells nearest the query. At a million
//! embeddings the rough pass over all read 48 MB (scoring them all would read 388 MB) and took
//! most of a query's 11 ms (`scripts/bench reading`).

use std::sync::Arc;

use crate::DIMENSIONS;
use crate::cells::{CELLS_FROM, Centres, Members, UNPLACED};

/// Machine words of an embedding's signs: a bit a number, set where it is above 0.
pub(crate) const SIGN_WORDS: usize = DIMENSIONS / 64;

/// Embeddings the rough pass keeps for the exact one (or as many as are asked for, if more;
/// `/search-files` asks for 200). Up to this many, every embedding is scored
/// exactly (the rough pass would keep them all). At a million moments of `scripts/bench
/// reading` (a thousand sentences, each a thousand times with noise of its own), 4,000 found
/// 89 % of the exact scan's nearest 200 and 10,000 found 98 %; signs weighed alike, 76 % and
/// 89 %.
const SHORTLIST: usize = 10_000;

/// The share of the embeddings the rough pass weighs from the cells nearest the query: whole
/// cells, nearest first, until this many are allowed. Fewer find less: at a million blended
/// moments (`drive-embed`'s recall test made ten times larger, in an experiment not kept),
/// 8, 10, 15 and 20 % found 94.6, 96.0, 97.0 and 97.1 % of the exact scan's nearest 200,
/// weighing all of them 97.4 %, in 2.7, 2.9, 3.0, 3.6 and 8.3 ms.
const FROM_CELLS_PERCENT: usize = 15;

/// Embeddings packed: each number as an `i8` of its vector's own scale (384 bytes and a scale
/// a vector, a quarter of `f32`s), and its signs (48 bytes). Rankings by the `i8` scores match
/// the exact cosine's but for near ties.
#[derive(Debug, Default, Clone)]
pub struct Packed {
    codes: Vec<i8>,
    scales: Vec<f32>,
    signs: Vec<u64>,
    /// Each embedding's cell ([`UNPLACED`] until [`Packed::index`] places it), the centres of
    /// the cells (shared by the copies [`Packed::keeping`] makes), and the cells' members as
    /// `index` last listed them (of every embedding once it has).
    pub(crate) cell_of: Vec<u16>,
    pub(crate) centres: Option<Arc<Centres>>,
    pub(crate) members: Members,
}

/// The query's side of the rough pass: its signs, and how much a sign differing from each
/// weighs: 2 where the query's number is among its largest third, 1 in its middle third, 0 in
/// its smallest (a number near 0 adds almost nothing to the cosine, whatever sign it meets).
/// A cell's centre is weighed against embeddings' signs the same way.
#[derive(Debug)]
pub(crate) struct RoughQuery {
    signs: [u64; SIGN_WORDS],
    largest: [u64; SIGN_WORDS],
    middle: [u64; SIGN_WORDS],
}

/// The most a rough distance can be (every sign differing, all weighing 2).
const MOST_DIFFERING: usize = 2 * DIMENSIONS;

impl RoughQuery {
    pub(crate) fn new(query: &[f32]) -> RoughQuery {
        let mut sizes: Vec<f32> = query.iter().map(|x| x.abs()).collect();
        sizes.sort_unstable_by(f32::total_cmp);
        let (middle_from, largest_from) = (sizes[DIMENSIONS / 3], sizes[DIMENSIONS * 2 / 3]);
        let (mut largest, mut middle) = ([0u64; SIGN_WORDS], [0u64; SIGN_WORDS]);
        for (d, x) in query.iter().enumerate() {
            let bit = 1 << (d % 64);
            if x.abs() >= largest_from {
                largest[d / 64] |= bit;
            } else if x.abs() >= middle_from {
                middle[d / 64] |= bit;
            }
        }
        RoughQuery {
            signs: signs(query),
            largest,
            middle,
        }
    }
}

fn signs(embedding: &[f32]) -> [u64; SIGN_WORDS] {
    let mut words = [0u64; SIGN_WORDS];
    for (d, x) in embedding.iter().enumerate() {
        if *x > 0.0 {
            words[d / 64] |= 1 << (d % 64);
        }
    }
    words
}

impl Packed {
    /// Adds an embedding of [`DIMENSIONS`] numbers; it is number `len()` before the call.
    pub fn push(&mut self, embedding: &[f32]) {
        let largest = embedding.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
        self.codes.extend(
            embedding
                .iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
        );
        self.scales.push(scale);
        self.signs.extend(signs(embedding));
        self.cell_of.push(UNPLACED);
    }

    /// A copy of `old`'s embeddings `kept`, in that order, in the cells they were in.
    pub fn keeping(old: &Packed, kept: &[usize]) -> Packed {
        let mut packed = Packed {
            codes: Vec::with_capacity(kept.len() * DIMENSIONS),
            scales: Vec::with_capacity(kept.len()),
            signs: Vec::with_capacity(kept.len() * SIGN_WORDS),
            cell_of: Vec::with_capacity(kept.len()),
            centres: old.centres.clone(),
            members: Members::default(),
        };
        for &i in kept {
            packed
                .codes
                .extend_from_slice(&old.codes[i * DIMENSIONS..(i + 1) * DIMENSIONS]);
            packed.scales.push(old.scales[i]);
            packed.signs.extend_from_slice(old.signs_of(i));
            packed.cell_of.push(old.cell_of[i]);
        }
        packed
    }

    /// Groups the embeddings in cells, once there are [`CELLS_FROM`]: those added since the
    /// last call join the cells of their nearest centres, or, once there are twice as many as
    /// when the centres were made, centres are made anew and every embedding placed again.
    /// Until it is called again after embeddings are added, a search weighs every embedding's
    /// signs, as below [`CELLS_FROM`]: the cells do not list them all.
    pub fn index(&mut self) {
        if self.len() < CELLS_FROM {
            self.centres = None;
            self.members = Members::default();
            return;
        }
        let centres = match &self.centres {
            Some(centres) if self.len() <= 2 * centres.made_at => centres.clone(),
            _ => {
                self.cell_of.fill(UNPLACED);
                Arc::new(Centres::made_for(self))
            }
        };
        let unplaced: Vec<usize> = (0..self.len()).filter(|&i| self.cell_of[i] == UNPLACED).collect();
        for (i, cell) in unplaced.iter().zip(centres.place(self, &unplaced)) {
            self.cell_of[*i] = cell;
        }
        self.members = Members::of(&self.cell_of, centres.len(), &self.signs);
        self.centres = Some(centres);
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Bytes held (the centres counted whole in each copy that shares them).
    pub fn bytes(&self) -> usize {
        self.codes.len()
            + self.scales.len() * 4
            + self.signs.len() * 8
            + self.cell_of.len() * 2
            + self.members.bytes()
            + self.centres.as_ref().map_or(0, |c| c.bytes())
    }

    /// Embedding `i`'s numbers, as packed.
    pub(crate) fn numbers(&self, i: usize) -> impl Iterator<Item = f32> + '_ {
        let scale = self.scales[i];
        self.codes[i * DIMENSIONS..(i + 1) * DIMENSIONS]
            .iter()
            .map(move |&c| f32::from(c) * scale)
    }

    pub(crate) fn signs_of(&self, i: usize) -> &[u64] {
        &self.signs[i * SIGN_WORDS..(i + 1) * SIGN_WORDS]
    }

    /// Asks the CPU to bring embedding `i`'s numbers into its cache while others are scored:
    /// the shortlist is scattered over the whole account, and each embedding read in turn
    /// would wait on memory for most of its score's time.
    fn fetch_ahead(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        for line in self.codes[i * DIMENSIONS..(i + 1) * DIMENSIONS].chunks(64) {
            // SAFETY: a prefetch is a hint: it reads nothing into the program and cannot fault.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr()) };
        }
    }

    /// The cosine of embedding `i` and `query` (an embedding of length 1).
    pub fn score(&self, i: usize, query: &[f32]) -> f32 {
        let codes = &self.codes[i * DIMENSIONS..(i + 1) * DIMENSIONS];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has both, as just checked. With them the numbers are widened
            // and multiplied eight at a time; without, four, and widened one by one.
            return unsafe { dot_avx2(codes, query) } * self.scales[i];
        }
        dot(codes, query) * self.scales[i]
    }

    /// The `n` embeddings nearest `query` among those `keep` allows, nearest first: up to
    /// [`SHORTLIST`] of them all scored exactly; past that, the [`SHORTLIST`] the rough pass
    /// puts nearest, weighing every embedding allowed or, once cells list them all, those of
    /// the cells nearest `query` (whole cells until [`FROM_CELLS_PERCENT`] of all are allowed).
    pub fn nearest(&self, query: &[f32], n: usize, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let shortlist = SHORTLIST.max(n);
        let candidates: Vec<usize> = if self.len() <= shortlist {
            (0..self.len()).filter(|&i| keep(i)).collect()
        } else {
            let rough = RoughQuery::new(query);
            match &self.centres {
                Some(centres) if self.members.len() == self.len() => {
                    let (listed, distances) = self.members.weighed(
                        centres.nearest_to(query),
                        &rough,
                        (self.len() * FROM_CELLS_PERCENT / 100).max(shortlist),
                        keep,
                    );
                    least_distant(&distances, shortlist)
                        .map(|k| listed[k] as usize)
                        .collect()
                }
                _ => {
                    let mut distances = vec![0u16; self.len()];
                    differing_signs(&self.signs, &rough, &mut distances);
                    for (i, d) in distances.iter_mut().enumerate() {
                        if !keep(i) {
                            *d = LEFT_OUT;
                        }
                    }
                    least_distant(&distances, shortlist).collect()
                }
            }
        };
        let mut scored: Vec<(f32, usize)> = candidates
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                if let Some(&ahead) = candidates.get(k + SCORED_AHEAD) {
                    self.fetch_ahead(ahead);
                }
                (self.score(i, query), i)
            })
            .collect();
        let by_score = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if scored.len() > n {
            scored.select_nth_unstable_by(n, by_score);
            scored.truncate(n);
        }
        scored.sort_unstable_by(by_score);
        scored.into_iter().map(|(_, i)| i).collect()
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn dot_avx2(codes: &[i8], query: &[f32]) -> f32 {
    dot(codes, query)
}

#[inline(always)]
fn dot(codes: &[i8], query: &[f32]) -> f32 {
    // Sixteen running sums rather than one: one sum is a chain of dependent additions the
    // compiler may not reorder, so it stays scalar; independent lanes let it use vector
    // instructions (`scripts/bench reading`'s query latencies halved).
    let mut lanes = [0f32; 16];
    for (c, q) in codes.chunks_exact(16).zip(query.chunks_exact(16)) {
        for ((lane, &c), &q) in lanes.iter_mut().zip(c).zip(q) {
            *lane += f32::from(c) * q;
        }
    }
    lanes.iter().sum::<f32>()
}

/// How many embeddings ahead of the one being scored are fetched into the cache.
const SCORED_AHEAD: usize = 4;

/// A rough distance that stands for an embedding the search leaves out.
pub(crate) const LEFT_OUT: u16 = u16::MAX;

/// The rough pass's choice: the places in `distances` of the `size` least (all but those
/// [`LEFT_OUT`] if fewer), in order. How many lie at each distance is counted first, so one
/// more pass takes the nearest without sorting; of those at the farthest distance taken, the
/// first come are.
fn least_distant(distances: &[u16], size: usize) -> impl Iterator<Item = usize> + '_ {
    let mut at = [0usize; MOST_DIFFERING + 1];
    for &d in distances.iter().filter(|&&d| d != LEFT_OUT) {
        at[usize::from(d)] += 1;
    }
    let (mut nearer, mut bound) = (0, MOST_DIFFERING);
    for (d, &count) in at.iter().enumerate() {
        if nearer + count >= size {
            bound = d;
            break;
        }
        nearer += count;
    }
    // All nearer than the bound, and as many at it as there is room for.
    let (bound, mut room) = (bound as u16, size.saturating_sub(nearer));
    distances.iter().enumerate().filter_map(move |(k, &d)| {
        let taken = d < bound || (d == bound && room > 0);
        room -= usize::from(taken && d == bound);
        taken.then_some(k)
    })
}

/// For each embedding's signs in `signs`, how much they differ from `query`'s.
pub(crate) fn differing_signs(signs: &[u64], query: &RoughQuery, out: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has the instruction, as just checked. Without it a count of set bits
        // is a dozen instructions a word, the rough pass three times slower.
        return unsafe { differing_signs_popcnt(signs, query, out) };
    }
    count_differing(signs, query, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn differing_signs_popcnt(signs: &[u64], query: &RoughQuery, out: &mut [u16]) {
    count_differing(signs, query, out)
}

#[inline(always)]
fn count_differing(signs: &[u64], query: &RoughQuery, out: &mut [u16]) {
    for (words, d) in signs.chunks_exact(SIGN_WORDS).zip(out) {
        *d = rough_distance(words, query) as u16;
    }
}

/// How much an embedding's signs (`words`) differ from `query`'s, as [`RoughQuery`] weighs them.
#[inline(always)]
pub(crate) fn rough_distance(words: &[u64], query: &RoughQuery) -> u32 {
    let mut sum = 0;
    for (k, word) in words.iter().enumerate() {
        let differing = word ^ query.signs[k];
        sum += 2 * (differing & query.largest[k]).count_ones() + (differing & query.middle[k]).count_ones();
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rough_pass_keeps_the_nearest_signs_and_fills_ties_in_order() {
        // Embedding i has its first i numbers negative: i signs differ from an all-positive
        // query, each weighing 2 (the query's numbers all alike, all its largest).
        let mut packed = Packed::default();
        for i in 0..10 {
            let v: Vec<f32> = (0..DIMENSIONS).map(|d| if d < i { -1.0 } else { 1.0 }).collect();
            packed.push(&v);
        }
        packed.push(&[1.0; DIMENSIONS]);
        let mut distances = [0u16; 11];
        differing_signs(
            &packed.signs,
            &RoughQuery::new(&[1.0; DIMENSIONS]),
            &mut distances,
        );
        assert_eq!(distances, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 0]);
        let least = |distances: &[u16], size| least_distant(distances, size).collect::<Vec<_>>();
        assert_eq!(least(&distances, 3), [0, 1, 10]);
        assert_eq!(least(&distances, 2), [0, 10]);
        let mut odd = distances;
        odd.iter_mut().step_by(2).for_each(|d| *d = LEFT_OUT);
        assert_eq!(least(&odd, 4), [1, 3, 5, 7]);
        assert_eq!(least(&odd, 50), [1, 3, 5, 7, 9]);
        assert_eq!(least(&[LEFT_OUT; 3], 3), Vec::<usize>::new());
    }

    #[test]
    fn a_sign_weighs_by_the_size_of_the_query_s_number() {
        // The query's numbers grow with their place: the first third weighs 0, the middle 1,
        // the last 2.
        let query: Vec<f32> = (0..DIMENSIONS).map(|d| d as f32 + 1.0).collect();
        let rough = RoughQuery::new(&query);
        let flipped = |at: &[usize]| {
            let v: Vec<f32> = (0..DIMENSIONS)
                .map(|d| if at.contains(&d) { -1.0 } else { 1.0 })
                .collect();
            let mut out = [0u16];
            count_differing(&signs(&v), &rough, &mut out);
            out[0]
        };
        assert_eq!(flipped(&[]), 0);
        assert_eq!(flipped(&[0, 127]), 0);
        assert_eq!(flipped(&[128, 255]), 2);
        assert_eq!(flipped(&[256, 383]), 4);
        assert_eq!(
            flipped(&(0..DIMENSIONS).collect::<Vec<_>>()) as usize,
            3 * DIMENSIONS / 3
        );
    }
}
