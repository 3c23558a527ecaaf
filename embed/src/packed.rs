//! Many embeddings kept small in memory and searched in two passes: a rough one over every
//! embedding's signs (48 bytes each, compared a machine word at a time), then the exact one,
//! by numbers packed to `i8`, over the ten thousand the rough pass kept. At a million
//! embeddings the rough pass reads 48 MB where scoring them all would read 388 MB, and takes a
//! tenth of the time (`scripts/bench reading`).

use crate::DIMENSIONS;

/// Machine words of an embedding's signs: a bit a number, set where it is above 0.
const SIGN_WORDS: usize = DIMENSIONS / 64;

/// Embeddings the rough pass keeps for the exact one (or as many as are asked for, if more;
/// `/search-files` asks for 200). Up to this many, every embedding is scored
/// exactly (the rough pass would keep them all). At a million moments of `scripts/bench
/// reading` (a thousand sentences, each a thousand times with noise of its own), 4,000 found
/// 89 % of the exact scan's nearest 200 and 10,000 found 98 %; signs weighed alike, 76 % and
/// 89 %.
const SHORTLIST: usize = 10_000;

/// Embeddings packed: each number as an `i8` of its vector's own scale (384 bytes and a scale
/// a vector, a quarter of `f32`s), and its signs (48 bytes). Rankings by the `i8` scores match
/// the exact cosine's but for near ties.
#[derive(Debug, Default, Clone)]
pub struct Packed {
    codes: Vec<i8>,
    scales: Vec<f32>,
    signs: Vec<u64>,
}

/// The query's side of the rough pass: its signs, and how much a sign differing from each
/// weighs: 2 where the query's number is among its largest third, 1 in its middle third, 0 in
/// its smallest (a number near 0 adds almost nothing to the cosine, whatever sign it meets).
struct RoughQuery {
    signs: [u64; SIGN_WORDS],
    largest: [u64; SIGN_WORDS],
    middle: [u64; SIGN_WORDS],
}

/// The most a rough distance can be (every sign differing, all weighing 2).
const MOST_DIFFERING: usize = 2 * DIMENSIONS;

impl RoughQuery {
    fn new(query: &[f32]) -> RoughQuery {
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
    }

    /// Adds `other`'s embedding `i` as it is.
    pub fn push_packed(&mut self, other: &Packed, i: usize) {
        self.codes
            .extend_from_slice(&other.codes[i * DIMENSIONS..(i + 1) * DIMENSIONS]);
        self.scales.push(other.scales[i]);
        self.signs
            .extend_from_slice(&other.signs[i * SIGN_WORDS..(i + 1) * SIGN_WORDS]);
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.scales.len() * 4 + self.signs.len() * 8
    }

    /// The cosine of embedding `i` and `query` (an embedding of length 1).
    pub fn score(&self, i: usize, query: &[f32]) -> f32 {
        let codes = &self.codes[i * DIMENSIONS..(i + 1) * DIMENSIONS];
        // Sixteen running sums rather than one: one sum is a chain of dependent additions the
        // compiler may not reorder, so it stays scalar; independent lanes let it use vector
        // instructions (`scripts/bench reading`'s query latencies halved).
        let mut lanes = [0f32; 16];
        for (c, q) in codes.chunks_exact(16).zip(query.chunks_exact(16)) {
            for ((lane, &c), &q) in lanes.iter_mut().zip(c).zip(q) {
                *lane += f32::from(c) * q;
            }
        }
        lanes.iter().sum::<f32>() * self.scales[i]
    }

    /// The `n` embeddings nearest `query` among those `keep` allows, nearest first: exactly
    /// among up to [`SHORTLIST`] of them, else among those the rough pass keeps.
    pub fn nearest(&self, query: &[f32], n: usize, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let shortlist = SHORTLIST.max(n);
        let candidates = if self.len() <= shortlist {
            (0..self.len()).filter(|&i| keep(i)).collect()
        } else {
            self.shortlist(query, shortlist, keep)
        };
        let mut scored: Vec<(f32, usize)> = candidates
            .into_iter()
            .map(|i| (self.score(i, query), i))
            .collect();
        let by_score = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if scored.len() > n {
            scored.select_nth_unstable_by(n, by_score);
            scored.truncate(n);
        }
        scored.sort_unstable_by(by_score);
        scored.into_iter().map(|(_, i)| i).collect()
    }

    /// The rough pass: the `size` embeddings `keep` allows whose signs differ least from the
    /// query's (weighed as [`RoughQuery`] says: for vectors of length 1, fewer differing signs
    /// means a smaller angle, roughly), in index order.
    fn shortlist(&self, query: &[f32], size: usize, keep: impl Fn(usize) -> bool) -> Vec<usize> {
        let mut distances = vec![0u16; self.len()];
        differing_signs(&self.signs, &RoughQuery::new(query), &mut distances);
        // How many lie at each distance, so one more pass takes the nearest without sorting.
        let mut at = [0usize; MOST_DIFFERING + 1];
        for (i, d) in distances.iter_mut().enumerate() {
            if keep(i) {
                at[*d as usize] += 1;
            } else {
                *d = u16::MAX;
            }
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
        let (bound, mut room) = (bound as u16, size - nearer);
        let mut list = Vec::with_capacity(size);
        for (i, &d) in distances.iter().enumerate() {
            if d < bound || (d == bound && room > 0) {
                room -= usize::from(d == bound);
                list.push(i);
            }
        }
        list
    }
}

/// For each embedding's signs, how much they differ from `query`'s.
fn differing_signs(signs: &[u64], query: &RoughQuery, out: &mut [u16]) {
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
        let mut sum = 0;
        for (k, word) in words.iter().enumerate() {
            let differing = word ^ query.signs[k];
            sum +=
                2 * (differing & query.largest[k]).count_ones() + (differing & query.middle[k]).count_ones();
        }
        *d = sum as u16;
    }
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
        let query = [1.0; DIMENSIONS];
        assert_eq!(packed.shortlist(&query, 3, |_| true), [0, 1, 10]);
        assert_eq!(packed.shortlist(&query, 2, |_| true), [0, 10]);
        assert_eq!(packed.shortlist(&query, 4, |i| i % 2 == 1), [1, 3, 5, 7]);
        assert_eq!(packed.shortlist(&query, 50, |i| i < 3), [0, 1, 2]);
        assert_eq!(packed.shortlist(&query, 3, |_| false), Vec::<usize>::new());
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
