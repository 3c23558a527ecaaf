//! A histogram in Prometheus's text format, as the API's `/metrics` (request latency) and each
//! worker's (how long its jobs waited) count and write one.

use std::fmt::Write;

/// Observations counted against ascending bounds: how many, their sum, and how many fell at or
/// under each bound.
#[derive(Debug, Clone, Copy)]
pub struct Histogram<const N: usize> {
    bounds: &'static [f64; N],
    count: u64,
    sum: f64,
    buckets: [u64; N],
}

impl<const N: usize> Histogram<N> {
    pub fn new(bounds: &'static [f64; N]) -> Self {
        Histogram {
            bounds,
            count: 0,
            sum: 0.0,
            buckets: [0; N],
        }
    }

    pub fn observe(&mut self, value: f64) {
        self.count += 1;
        self.sum += value;
        for (bound, bucket) in self.bounds.iter().zip(self.buckets.iter_mut()) {
            if value <= *bound {
                *bucket += 1;
            }
        }
    }

    /// Adds `other`'s observations (counted against the same bounds) to these.
    pub fn add(&mut self, other: &Histogram<N>) {
        self.count += other.count;
        self.sum += other.sum;
        for (total, n) in self.buckets.iter_mut().zip(other.buckets) {
            *total += n;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Writes its `{name}_bucket` lines, `{name}_sum` and `{name}_count`, each labeled
    /// `labels` (like `lane="bulk"`); the `# HELP` and `# TYPE` lines are the caller's.
    pub fn write(&self, out: &mut String, name: &str, labels: &str) {
        for (bound, n) in self.bounds.iter().zip(self.buckets) {
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {n}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", self.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.count);
    }
}
