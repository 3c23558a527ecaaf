//! Which lane a worker serves next. Smooth weighted round robin (the way nginx spreads requests
//! over weighted upstreams) over the lanes that have a job waiting: each lane gets its weight's
//! share of the picks, interleaved: between two turns of a lane, a lane of no greater weight has
//! one turn at most. A lane that had nothing waiting at the
//! last pick is served first when a job arrives in it: its next job waits for one slot at most.
//! And a job that has waited past the aging time goes before the next turn (no starvation,
//! whatever the weights), though never twice in a row: under a backlog older than the aging
//! time every pick would otherwise be its oldest job, and the farm a FIFO again.

use std::collections::{BTreeMap, BTreeSet};

use drive_core::db::jobs::Candidate;
use drive_core::job::Lane;

pub struct LaneTurns {
    weights: BTreeMap<Lane, i64>,
    /// Each lane's standing: its weight added at every pick it competes in, the weights of all
    /// that competed taken away when it is served.
    current: BTreeMap<Lane, i64>,
    /// The lanes that had a job waiting at the last pick.
    waiting: BTreeSet<Lane>,
    /// The last pick was an aged job.
    aged_last: bool,
}

impl LaneTurns {
    pub fn new(weights: &BTreeMap<Lane, u32>) -> LaneTurns {
        LaneTurns {
            weights: weights
                .iter()
                .map(|(&lane, &w)| (lane, i64::from(w.max(1))))
                .collect(),
            current: BTreeMap::new(),
            waiting: BTreeSet::new(),
            aged_last: false,
        }
    }

    /// The job to claim of `candidates` (each lane's next by the accounts' turns, and perhaps
    /// an aged one); `None` when nothing waits.
    pub fn pick<'a>(&mut self, candidates: &'a [Candidate]) -> Option<&'a Candidate> {
        let turns: Vec<&Candidate> = candidates.iter().filter(|c| !c.aged).collect();
        let present: BTreeSet<Lane> = turns.iter().map(|c| c.lane).collect();
        let weight = |lane: &Lane| self.weights.get(lane).copied().unwrap_or(1);
        let total: i64 = present.iter().map(weight).sum();
        for lane in Lane::ALL {
            let standing = self.current.entry(lane).or_insert(0);
            if present.contains(&lane) {
                *standing += weight(&lane);
            } else {
                *standing = 0;
            }
        }
        // Ties go by `Lane::ALL`'s order: interactive, system, bulk.
        let by_weight_then_order = |lane: &Lane| (weight(lane), std::cmp::Reverse(order(*lane)));
        let arrived = present
            .iter()
            .filter(|lane| !self.waiting.contains(lane))
            .max_by_key(|lane| by_weight_then_order(lane));
        let aged = candidates
            .iter()
            .find(|c| c.aged)
            .filter(|_| !self.aged_last && arrived.is_none());
        let chosen = aged.or_else(|| {
            let lane = arrived.copied().or_else(|| {
                present
                    .iter()
                    .max_by_key(|lane| (self.current[*lane], std::cmp::Reverse(order(**lane))))
                    .copied()
            })?;
            turns.into_iter().find(|c| c.lane == lane)
        });
        self.waiting = present;
        let chosen = chosen?;
        self.aged_last = chosen.aged;
        if let Some(standing) = self.current.get_mut(&chosen.lane) {
            *standing -= total;
        }
        Some(chosen)
    }
}

fn order(lane: Lane) -> usize {
    Lane::ALL.iter().position(|&l| l == lane).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drive_core::id::JobId;

    fn waiting(lanes: &[Lane]) -> Vec<Candidate> {
        lanes
            .iter()
            .map(|&lane| Candidate {
                id: JobId::random(),
                lane,
                waited: 1.0,
                aged: false,
            })
            .collect()
    }

    fn default_weights() -> BTreeMap<Lane, u32> {
        BTreeMap::from([(Lane::System, 2), (Lane::Interactive, 2), (Lane::Bulk, 1)])
    }

    /// Every lane busy for good: each gets its weight's share, and between two turns of a lane
    /// each other lane of no greater weight has at most one.
    #[test]
    fn busy_lanes_share_by_weight_and_interleave() {
        let mut turns = LaneTurns::new(&default_weights());
        let all = waiting(&Lane::ALL);
        let picked: Vec<Lane> = (0..100).map(|_| turns.pick(&all).unwrap().lane).collect();
        let count = |lane| picked.iter().filter(|&&l| l == lane).count();
        assert_eq!(
            (count(Lane::Interactive), count(Lane::System), count(Lane::Bulk)),
            (40, 40, 20)
        );
        for lane in Lane::ALL {
            let at: Vec<usize> = (0..picked.len()).filter(|&i| picked[i] == lane).collect();
            for pair in at.windows(2) {
                let between = &picked[pair[0] + 1..pair[1]];
                let weights = default_weights();
                for other in Lane::ALL
                    .into_iter()
                    .filter(|&o| o != lane && weights[&o] <= weights[&lane])
                {
                    let n = between.iter().filter(|&&l| l == other).count();
                    assert!(
                        n <= 1,
                        "{n} turns of {other:?} between two of {lane:?}: {picked:?}"
                    );
                }
            }
        }
    }

    /// A lane whose first job arrives while others are busy is served at the next pick.
    #[test]
    fn a_lane_that_was_empty_goes_next() {
        let mut turns = LaneTurns::new(&default_weights());
        let busy = waiting(&[Lane::System, Lane::Bulk]);
        for _ in 0..7 {
            turns.pick(&busy);
        }
        let all = waiting(&Lane::ALL);
        assert_eq!(turns.pick(&all).unwrap().lane, Lane::Interactive);
    }

    /// However skewed the weights, a lane is never starved: an aged job goes before the next
    /// turn, but not twice in a row.
    #[test]
    fn an_aged_job_goes_before_the_next_turn() {
        let weights = BTreeMap::from([(Lane::System, 1), (Lane::Interactive, 50), (Lane::Bulk, 1)]);
        let mut turns = LaneTurns::new(&weights);
        let mut candidates = waiting(&Lane::ALL);
        turns.pick(&candidates);
        assert_eq!(turns.pick(&candidates).unwrap().lane, Lane::Interactive);
        let mut aged = waiting(&[Lane::Bulk]);
        aged[0].aged = true;
        let aged_id = aged[0].id;
        candidates.extend(aged);
        assert_eq!(turns.pick(&candidates).unwrap().id, aged_id);
        assert_eq!(turns.pick(&candidates).unwrap().lane, Lane::Interactive);
        assert_eq!(turns.pick(&candidates).unwrap().id, aged_id);
        assert!(turns.pick(&[]).is_none());
    }
}
