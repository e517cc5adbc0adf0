//! Claims (`004`, "The conflict rule"): every store call claims its path (or pattern) for
//! reading or writing, for the chain that made it. Two claims conflict when they touch the same
//! region, at least one writes, they come from different chains, and neither chain is ordered
//! before the other. With one chain (the main walk, H1 included) nothing can conflict; tasks will
//! add chains and the order between them (fork at spawn, join at delivery).

use std::collections::{BTreeMap, BTreeSet};

use super::path::Pattern;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Region {
    Path(String),
    /// A glob's pattern (as written), which touches every path it matches.
    Pattern(String),
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Claim {
    pub write: bool,
    pub region: Region,
    /// The chain identity (`0` is the main chain; tasks are `0.k`, ...).
    pub chain: String,
}

/// A detected conflict, worded as the run error reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Claims {
    seen: BTreeSet<Claim>,
    /// Claims per chain: a new claim is compared with other chains' claims only, so a run with
    /// one chain pays nothing per call.
    by_chain: BTreeMap<String, Vec<Claim>>,
}

fn touches(a: &Region, b: &Region) -> bool {
    let matches = |pattern: &str, path: &str| super::path::parse_pattern(pattern).map(|p: Pattern| p.matches(path)).unwrap_or(false);
    match (a, b) {
        (Region::Path(x), Region::Path(y)) => x == y,
        (Region::Pattern(p), Region::Path(x)) | (Region::Path(x), Region::Pattern(p)) => matches(p, x),
        (Region::Pattern(_), Region::Pattern(_)) => false, // two globs only read
    }
}

impl Claims {
    /// Records `claim` unless it conflicts with an earlier one; `ordered(a, b)` says whether chain
    /// `a`'s earlier accesses come before chain `b`'s (always true for the same chain).
    pub fn record(&mut self, claim: Claim, ordered: impl Fn(&str, &str) -> bool) -> Result<(), Conflict> {
        if self.seen.contains(&claim) {
            return Ok(());
        }
        let others = self.by_chain.iter().filter(|(chain, _)| **chain != claim.chain);
        for earlier in others.flat_map(|(_, claims)| claims) {
            if !(earlier.write || claim.write) || !touches(&earlier.region, &claim.region) {
                continue;
            }
            if ordered(&earlier.chain, &claim.chain) {
                continue;
            }
            let kind = |w: bool| if w { "write" } else { "read" };
            let path = match &claim.region {
                Region::Path(p) | Region::Pattern(p) => p.clone(),
            };
            return Err(Conflict {
                message: format!(
                    "store determinism violation: {} on {} by {} conflicts with a {} claim by {}",
                    kind(claim.write),
                    path,
                    claim.chain,
                    kind(earlier.write),
                    earlier.chain
                ),
            });
        }
        self.seen.insert(claim.clone());
        self.by_chain.entry(claim.chain.clone()).or_default().push(claim);
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(write: bool, region: Region, chain: &str) -> Claim {
        Claim { write, region, chain: chain.into() }
    }

    #[test]
    fn same_chain_and_reads_never_conflict() {
        let mut c = Claims::default();
        let unordered = |a: &str, b: &str| a == b;
        c.record(claim(true, Region::Path("a".into()), "0"), unordered).unwrap();
        c.record(claim(true, Region::Path("a".into()), "0"), unordered).unwrap();
        c.record(claim(false, Region::Path("b".into()), "0.0"), unordered).unwrap();
        c.record(claim(false, Region::Path("b".into()), "0.1"), unordered).unwrap();
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn unordered_writers_conflict_and_the_second_reports() {
        let mut c = Claims::default();
        let unordered = |a: &str, b: &str| a == b;
        c.record(claim(true, Region::Path("log.txt".into()), "0.0"), unordered).unwrap();
        let e = c.record(claim(true, Region::Path("log.txt".into()), "0.1"), unordered).unwrap_err();
        assert_eq!(e.message, "store determinism violation: write on log.txt by 0.1 conflicts with a write claim by 0.0");
        // A glob racing a sibling's write to a matching path.
        let e = c.record(claim(false, Region::Pattern("*.txt".into()), "0.2"), unordered).unwrap_err();
        assert!(e.message.starts_with("store determinism violation: read on *.txt by 0.2"));
        // A join orders the sibling's write before the owner's read.
        c.record(claim(false, Region::Path("log.txt".into()), "0"), |a, b| a == b || b == "0").unwrap();
    }
}
