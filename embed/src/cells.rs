//! Many embeddings grouped into cells around centres (k-means on the cosine: an inverted file
//! index, as vector databases call it), so that a query's rough pass weighs the embeddings of
//! the cells whose centres are nearest it rather than every embedding: 15 % of them, read in
//! one run a cell (`scripts/bench reading`). The centres are made from a sample, and kept
//! while the embeddings grow to twice as many: each embedding added meanwhile joins the cell
//! of its nearest centre. Below [`CELLS_FROM`] embeddings there are no cells; the rough pass over
//! every embedding's signs ([`crate::Packed`]) costs less than a millisecond there.

use crate::DIMENSIONS;
use crate::packed::{LEFT_OUT, Packed, RoughQuery, SIGN_WORDS, differing_signs, rough_distance};

/// Embeddings from which cells are made.
pub(crate) const CELLS_FROM: usize = 50_000;

/// Embeddings a cell holds on average when the centres are made, within
/// [`FEWEST_CELLS`]..=[`MOST_CELLS`] cells. Placing an embedding weighs its signs against every
/// centre's, so more cells cost more to place (at a million: 122 cells, 2 s to make them and
/// place every embedding, `scripts/bench reading`).
const PER_CELL: usize = 8_192;
const FEWEST_CELLS: usize = 8;
const MOST_CELLS: usize = 128;

/// Embeddings of the sample the centres are made from, per centre, and the rounds of k-means.
const SAMPLE_PER_CENTRE: usize = 64;
const ROUNDS: usize = 8;

/// Of the centres an embedding's signs put nearest, how many are weighed exactly to place it.
const ROUGH_CHOICES: usize = 4;

/// A cell of an embedding not placed yet.
pub(crate) const UNPLACED: u16 = u16::MAX;

/// The centres, each of length 1.
#[derive(Debug)]
pub(crate) struct Centres {
    numbers: Vec<f32>,
    /// Each centre's signs, weighed as a query's: where an embedding's signs differ least from
    /// them, its nearest centre is among the few.
    rough: Vec<RoughQuery>,
    /// The embeddings there were when they were made: they are made anew past twice as many.
    pub(crate) made_at: usize,
}

impl Centres {
    /// Centres for `packed`'s embeddings: k-means on a sample spread over all of them, each
    /// round moving every centre to the mean direction of the sample's embeddings nearest it.
    pub(crate) fn made_for(packed: &Packed) -> Centres {
        let count = (packed.len() / PER_CELL).clamp(FEWEST_CELLS, MOST_CELLS);
        let step = (packed.len() / (count * SAMPLE_PER_CENTRE)).max(1);
        let sample: Vec<usize> = (0..packed.len())
            .step_by(step)
            .take(count * SAMPLE_PER_CENTRE)
            .collect();
        // The first centres: embeddings spread evenly over the sample.
        let mut numbers = Vec::with_capacity(count * DIMENSIONS);
        for c in 0..count {
            numbers.extend(packed.numbers(sample[c * sample.len() / count]));
        }
        let mut centres = Centres::new(numbers, packed.len());
        for _ in 0..ROUNDS {
            let mut sums = vec![0f32; count * DIMENSIONS];
            for (&i, c) in sample.iter().zip(centres.place(packed, &sample)) {
                let c = usize::from(c);
                let sum = &mut sums[c * DIMENSIONS..(c + 1) * DIMENSIONS];
                for (s, x) in sum.iter_mut().zip(packed.numbers(i)) {
                    *s += x;
                }
            }
            // A centre nothing was nearest keeps its place.
            for (sum, old) in sums
                .chunks_exact_mut(DIMENSIONS)
                .zip(centres.numbers.chunks_exact(DIMENSIONS))
            {
                let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    sum.iter_mut().for_each(|x| *x /= norm);
                } else {
                    sum.copy_from_slice(old);
                }
            }
            centres = Centres::new(sums, packed.len());
        }
        centres
    }

    fn new(numbers: Vec<f32>, made_at: usize) -> Centres {
        let rough = numbers.chunks_exact(DIMENSIONS).map(RoughQuery::new).collect();
        Centres {
            numbers,
            rough,
            made_at,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.rough.len()
    }

    pub(crate) fn bytes(&self) -> usize {
        self.numbers.len() * 4 + self.rough.len() * std::mem::size_of::<RoughQuery>()
    }

    /// The cells of `packed`'s embeddings `which`, in order.
    pub(crate) fn place(&self, packed: &Packed, which: &[usize]) -> Vec<u16> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has the instruction, as just checked. Without it, weighing an
            // embedding's signs against every centre's takes three times as long.
            return unsafe { self.place_popcnt(packed, which) };
        }
        self.place_each(packed, which)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn place_popcnt(&self, packed: &Packed, which: &[usize]) -> Vec<u16> {
        self.place_each(packed, which)
    }

    #[inline(always)]
    fn place_each(&self, packed: &Packed, which: &[usize]) -> Vec<u16> {
        which.iter().map(|&i| self.nearest(packed, i)).collect()
    }

    /// The cell of `packed`'s embedding `i`: of the [`ROUGH_CHOICES`] centres whose signs its
    /// own differ least from, the one nearest it.
    #[inline(always)]
    fn nearest(&self, packed: &Packed, i: usize) -> u16 {
        let signs = packed.signs_of(i);
        // The few least distant, nearest first; the rest of the array unused until filled.
        let mut choices = [(u32::MAX, 0usize); ROUGH_CHOICES];
        for (c, rough) in self.rough.iter().enumerate() {
            let distance = rough_distance(signs, rough);
            if distance < choices[ROUGH_CHOICES - 1].0 {
                let at = choices.partition_point(|&(d, _)| d <= distance);
                choices.copy_within(at..ROUGH_CHOICES - 1, at + 1);
                choices[at] = (distance, c);
            }
        }
        let best = choices
            .iter()
            .filter(|&&(d, _)| d != u32::MAX)
            .map(|&(_, c)| (packed.score(i, self.centre(c)), c))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .map_or(0, |(_, c)| c);
        best as u16
    }

    /// The cells in order of their centres' nearness to `query`, nearest first.
    pub(crate) fn nearest_to(&self, query: &[f32]) -> Vec<usize> {
        let mut order: Vec<(f32, usize)> = (0..self.len())
            .map(|c| (crate::cosine(self.centre(c), query), c))
            .collect();
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        order.into_iter().map(|(_, c)| c).collect()
    }

    fn centre(&self, c: usize) -> &[f32] {
        &self.numbers[c * DIMENSIONS..(c + 1) * DIMENSIONS]
    }
}

/// The embeddings of each cell, in index order: cell `c`'s are `members[starts[c]..starts[c + 1]]`,
/// their signs copied beside them in that order, so that the rough pass reads a cell's signs
/// in one run (read by index, scattered over the whole account, they cost five times as much).
#[derive(Debug, Default, Clone)]
pub(crate) struct Members {
    starts: Vec<u32>,
    members: Vec<u32>,
    signs: Vec<u64>,
}

impl Members {
    /// Lists each embedding under its cell (`cell_of`, every one placed), with its signs (of
    /// `signs`, [`SIGN_WORDS`] words an embedding).
    pub(crate) fn of(cell_of: &[u16], cells: usize, signs: &[u64]) -> Members {
        let mut starts = vec![0u32; cells + 1];
        for &c in cell_of {
            starts[usize::from(c) + 1] += 1;
        }
        for c in 0..cells {
            starts[c + 1] += starts[c];
        }
        let mut next = starts.clone();
        let mut members = vec![0u32; cell_of.len()];
        for (i, &c) in cell_of.iter().enumerate() {
            let at = &mut next[usize::from(c)];
            members[*at as usize] = i as u32;
            *at += 1;
        }
        let signs = members
            .iter()
            .flat_map(|&i| &signs[i as usize * SIGN_WORDS..(i as usize + 1) * SIGN_WORDS])
            .copied()
            .collect();
        Members {
            starts,
            members,
            signs,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    pub(crate) fn bytes(&self) -> usize {
        (self.starts.len() + self.members.len()) * 4 + self.signs.len() * 8
    }

    /// The members of the cells in `order`, whole cells until `size` of them are allowed by
    /// `keep`, and how much each one's signs differ from `rough` ([`LEFT_OUT`] where `keep`
    /// refuses it).
    pub(crate) fn weighed(
        &self,
        order: impl IntoIterator<Item = usize>,
        rough: &RoughQuery,
        size: usize,
        keep: impl Fn(usize) -> bool,
    ) -> (Vec<u32>, Vec<u16>) {
        let (mut listed, mut distances) = (Vec::with_capacity(size), Vec::with_capacity(size));
        let mut allowed = 0;
        for c in order {
            let (from, to) = (self.starts[c] as usize, self.starts[c + 1] as usize);
            let at = distances.len();
            distances.resize(at + to - from, 0);
            differing_signs(
                &self.signs[from * SIGN_WORDS..to * SIGN_WORDS],
                rough,
                &mut distances[at..],
            );
            for (d, &i) in distances[at..].iter_mut().zip(&self.members[from..to]) {
                match keep(i as usize) {
                    true => allowed += 1,
                    false => *d = LEFT_OUT,
                }
            }
            listed.extend_from_slice(&self.members[from..to]);
            if allowed >= size {
                break;
            }
        }
        (listed, distances)
    }

    #[cfg(test)]
    fn of_cell(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        self.members[self.starts[c] as usize..self.starts[c + 1] as usize]
            .iter()
            .map(|&i| i as usize)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// `count` embeddings about 64 topics: each a topic's direction with noise of its own.
    fn about_topics(count: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed;
        let mut random = move || {
            // SplitMix64, from -0.5 to 0.5.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let topics: Vec<Vec<f32>> = (0..64)
            .map(|_| (0..DIMENSIONS).map(|_| random()).collect())
            .collect();
        (0..count)
            .map(|n| {
                let mut v: Vec<f32> = topics[n % 64].iter().map(|x| x + 0.6 * random()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    fn packed(embeddings: &[Vec<f32>]) -> Packed {
        let mut packed = Packed::default();
        embeddings.iter().for_each(|v| packed.push(v));
        packed
    }

    #[test]
    fn members_list_each_embedding_once_under_its_cell_in_order() {
        // Each embedding's signs: its own number, in every word.
        let signs: Vec<u64> = (0..6u64).flat_map(|i| [i; SIGN_WORDS]).collect();
        let members = Members::of(&[2, 0, 2, 1, 0, 2], 4, &signs);
        let cell = |c| members.of_cell(c).collect::<Vec<_>>();
        assert_eq!(
            (cell(0), cell(1), cell(2), cell(3)),
            (vec![1, 4], vec![3], vec![0, 2, 5], vec![])
        );
        assert_eq!(members.len(), 6);
        let copied: Vec<u64> = [1, 4, 3, 0, 2, 5].iter().flat_map(|&i| [i; SIGN_WORDS]).collect();
        assert_eq!(members.signs, copied);
    }

    #[test]
    fn an_embedding_joins_the_cell_of_its_nearest_centre() {
        let mut packed = packed(&about_topics(CELLS_FROM, 1));
        packed.index();
        let centres = packed.centres.clone().expect("cells from CELLS_FROM embeddings");
        assert_eq!(centres.len(), FEWEST_CELLS.max(CELLS_FROM / PER_CELL));
        assert_eq!(packed.members.len(), packed.len());
        // Weighing signs first may pass over the nearest centre; it seldom does.
        let nearest = (0..packed.len())
            .filter(|&i| {
                let best = (0..centres.len())
                    .max_by(|&a, &b| {
                        let score = |c| packed.score(i, centres.centre(c));
                        score(a).total_cmp(&score(b))
                    })
                    .unwrap();
                usize::from(packed.cell_of[i]) == best
            })
            .count();
        assert!(
            nearest * 100 >= packed.len() * 97,
            "{nearest} of {}",
            packed.len()
        );
        // Every cell is used, and none holds most of them.
        for c in 0..centres.len() {
            let held = packed.members.of_cell(c).count();
            assert!(held > 0 && held < packed.len() / 2, "cell {c} holds {held}");
        }
    }

    #[test]
    fn cells_are_kept_as_embeddings_come_and_go_and_made_anew_at_twice_as_many() {
        let embeddings = about_topics(2 * CELLS_FROM + 3, 2);
        let mut packed = packed(&embeddings[..CELLS_FROM + 1]);
        packed.index();
        let made = packed.centres.clone().unwrap();
        assert_eq!(made.made_at, CELLS_FROM + 1);

        // A copy keeping some, in another order: the same centres, each in the cell it was in.
        let kept: Vec<usize> = (0..packed.len()).rev().filter(|i| i % 7 != 0).collect();
        let mut copy = Packed::keeping(&packed, &kept);
        assert!(Arc::ptr_eq(copy.centres.as_ref().unwrap(), &made));
        for (k, &i) in kept.iter().enumerate() {
            assert_eq!(copy.cell_of[k], packed.cell_of[i]);
        }
        // Not listed until indexed (searched by the rough pass meanwhile); then placed, the
        // centres kept.
        for v in &embeddings[CELLS_FROM + 1..2 * CELLS_FROM + 1] {
            copy.push(v);
        }
        assert!(copy.members.len() < copy.len());
        copy.index();
        assert!(Arc::ptr_eq(copy.centres.as_ref().unwrap(), &made));
        assert_eq!(copy.members.len(), copy.len());
        assert!(copy.cell_of.iter().all(|&c| c != UNPLACED));

        // Past twice as many as the centres were made from: made anew.
        let mut grown = packed.clone();
        for v in &embeddings[CELLS_FROM + 1..] {
            grown.push(v);
        }
        grown.index();
        let remade = grown.centres.as_ref().unwrap();
        assert!(!Arc::ptr_eq(remade, &made));
        assert_eq!(remade.made_at, 2 * CELLS_FROM + 3);

        // Fewer than CELLS_FROM: no cells.
        let mut few = Packed::keeping(&packed, &(0..CELLS_FROM - 1).collect::<Vec<_>>());
        few.index();
        assert!(few.centres.is_none() && few.members.len() == 0);
    }
}
