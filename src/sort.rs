//! The engine's stable sorts, all through one copy of the standard library's sort.
//!
//! Why: `slice::sort_by` is compiled once per element type and comparison, and each copy is
//! about 4.5 KB of wasm (docs/performance.md, "Size work"). The engine's sorts are few and small
//! (catalog tools, a schema's parameters, error listings), so each sorts the positions of its
//! items through [`order_by`], which is not generic, and then moves the items into that order.

use std::cmp::Ordering;

/// Sorts `items` stably by `cmp`, as `items.sort_by(cmp)` would.
pub fn sort_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let order = order_by(items.len(), &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    // `order` is a permutation of the positions, so every slot is taken exactly once.
    items.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// The positions `0..len` in the stable order `cmp` gives them (`cmp` compares two positions).
pub fn order_by(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_like_the_standard_sort() {
        let mut items: Vec<(u8, &str)> = vec![(3, "a"), (1, "b"), (3, "c"), (2, "d"), (1, "e"), (0, "f")];
        let mut expected = items.clone();
        expected.sort_by_key(|a| a.0);
        sort_by(&mut items, |a, b| a.0.cmp(&b.0));
        assert_eq!(items, expected);
        assert_eq!(items.iter().map(|i| i.1).collect::<String>(), "fbedac");
        let mut empty: Vec<String> = Vec::new();
        sort_by(&mut empty, |a, b| a.cmp(b));
        assert!(empty.is_empty());
        assert_eq!(order_by(4, &|a, b| (a % 2).cmp(&(b % 2))), [0, 2, 1, 3]);
    }
}
