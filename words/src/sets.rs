//! Sets of moments as ascending lists.

pub(crate) fn intersection(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

pub(crate) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len().max(b.len())));
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] < b[j]) {
            out.push(a[i]);
            i += 1;
        } else {
            if i < a.len() && a[i] == b[j] {
                i += 1;
            }
            out.push(b[j]);
            j += 1;
        }
    }
    out
}

/// What is in `a` and not in `b`.
pub(crate) fn difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut j = 0;
    a.iter()
        .copied()
        .filter(|&x| {
            while j < b.len() && b[j] < x {
                j += 1;
            }
            j == b.len() || b[j] != x
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{difference, intersection, union};

    #[test]
    fn sets_of_ascending_lists() {
        let (a, b) = ([1, 3, 5, 7], [3, 4, 7, 9]);
        assert_eq!(intersection(&a, &b), [3, 7]);
        assert_eq!(union(&a, &b), [1, 3, 4, 5, 7, 9]);
        assert_eq!(difference(&a, &b), [1, 5]);
        assert_eq!(difference(&b, &a), [4, 9]);
        assert_eq!(union(&[], &b), b);
        assert_eq!(intersection(&a, &[]), [] as [u32; 0]);
    }
}
