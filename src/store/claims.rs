//! Claims (`004`, "The conflict rule"): every store call claims its path (or pattern) for
//! reading or writing, for the chain that made it. Two claims conflict when they touch the same
//! region, at least one writes, they come from different chains, and neither is ordered before
//! the other.
//!
//! The order comes from exactly two sources (`004`, "Spawn and join"): spawning a task is a fork
//! and delivering its result is a join. Each chain identity carries a vector [`Clock`]: for every
//! chain, the last epoch of that chain's accesses it is ordered after. A chain's own epoch moves
//! on at every fork it makes, so what it does after a spawn is not ordered before the task; a join
//! merges the task's clock into the owner's. An earlier access `(a, epoch)` is ordered before a
//! new access by a chain whose clock is `C` exactly when `epoch <= C[a]`. The verdict depends only
//! on where the forks and joins sit in the prompt, never on which task ran first.

use std::collections::BTreeMap;

use super::path::Pattern;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Region {
    Path(String),
    /// A glob's pattern (as written), which touches every path it matches.
    Pattern(String),
}

/// A chain's view of the run's order (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Clock(BTreeMap<String, u64>);

impl Clock {
    /// The clock of a new chain identity `id` that starts after everything `parent` saw (a fork).
    pub fn forked(parent: &Clock, id: &str) -> Clock {
        let mut c = parent.clone();
        c.0.insert(id.to_string(), 1);
        c
    }

    /// The epoch `id`'s accesses carry now.
    pub fn epoch(&self, id: &str) -> u64 {
        self.0.get(id).copied().unwrap_or(0)
    }

    /// Moves `id`'s own epoch on: called on the owner right after a fork.
    pub fn tick(&mut self, id: &str) {
        *self.0.entry(id.to_string()).or_insert(0) += 1;
    }

    /// A join: everything `other` was ordered after, this clock is now ordered after too.
    pub fn join(&mut self, other: &Clock) {
        for (k, &v) in &other.0 {
            let e = self.0.entry(k.clone()).or_insert(0);
            *e = (*e).max(v);
        }
    }
}

/// Who makes a store access: the chain identity and its clock at that moment.
#[derive(Debug, Clone, Copy)]
pub struct Accessor<'a> {
    pub chain: &'a str,
    pub clock: &'a Clock,
}

/// A detected conflict, worded as the run error reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub message: String,
}

/// One chain's latest access of one kind to one region.
#[derive(Debug, Clone)]
struct Earlier {
    chain: String,
    write: bool,
    epoch: u64,
}

#[derive(Debug, Default)]
pub struct Claims {
    /// Claims on paths, by path: a new path claim looks only at its own path and the globs.
    paths: BTreeMap<String, Vec<Earlier>>,
    /// Claims on glob patterns (reads only).
    patterns: BTreeMap<String, Vec<Earlier>>,
    /// Whether more than one chain has claimed anything (until then nothing can conflict).
    chains_seen: Option<String>,
    many_chains: bool,
}

fn kind(write: bool) -> &'static str {
    if write {
        "write"
    } else {
        "read"
    }
}

impl Claims {
    /// Records an access unless it conflicts with an earlier one.
    pub fn record(&mut self, write: bool, region: &Region, who: Accessor) -> Result<(), Conflict> {
        match &self.chains_seen {
            None => self.chains_seen = Some(who.chain.to_string()),
            Some(c) if c != who.chain => self.many_chains = true,
            Some(_) => {}
        }
        if self.many_chains {
            self.check(write, region, who)?;
        }
        let list = match region {
            Region::Path(p) => self.paths.entry(p.clone()).or_default(),
            Region::Pattern(p) => self.patterns.entry(p.clone()).or_default(),
        };
        let epoch = who.clock.epoch(who.chain);
        match list.iter_mut().find(|e| e.chain == who.chain && e.write == write) {
            Some(e) => e.epoch = e.epoch.max(epoch),
            None => list.push(Earlier { chain: who.chain.to_string(), write, epoch }),
        }
        Ok(())
    }

    fn check(&self, write: bool, region: &Region, who: Accessor) -> Result<(), Conflict> {
        let conflict =
            |earlier: &Earlier| earlier.chain != who.chain && (earlier.write || write) && earlier.epoch > who.clock.epoch(&earlier.chain);
        let report = |earlier: &Earlier, path: &str| Conflict {
            message: format!(
                "store determinism violation: {} on {} by {} conflicts with a {} claim by {}",
                kind(write),
                path,
                who.chain,
                kind(earlier.write),
                earlier.chain
            ),
        };
        match region {
            Region::Path(p) => {
                if let Some(e) = self.paths.get(p).into_iter().flatten().find(|e| conflict(e)) {
                    return Err(report(e, p));
                }
                // Globs only read: they matter to a write.
                if write {
                    for (pattern, list) in &self.patterns {
                        if !matches(pattern, p) {
                            continue;
                        }
                        if let Some(e) = list.iter().find(|e| conflict(e)) {
                            return Err(report(e, p));
                        }
                    }
                }
            }
            Region::Pattern(pattern) => {
                let Ok(parsed) = super::path::parse_pattern(pattern) else { return Ok(()) };
                for (p, list) in &self.paths {
                    if !parsed.matches(p) {
                        continue;
                    }
                    if let Some(e) = list.iter().find(|e| e.write && conflict(e)) {
                        return Err(report(e, pattern));
                    }
                }
            }
        }
        Ok(())
    }
}

fn matches(pattern: &str, path: &str) -> bool {
    super::path::parse_pattern(pattern).map(|p: Pattern| p.matches(path)).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Region {
        Region::Path(p.into())
    }

    #[test]
    fn same_chain_and_reads_never_conflict() {
        let mut c = Claims::default();
        let main = Clock::forked(&Clock::default(), "0");
        let a = Clock::forked(&main, "0.0");
        let b = Clock::forked(&main, "0.1");
        c.record(true, &path("a"), Accessor { chain: "0", clock: &main }).unwrap();
        c.record(true, &path("a"), Accessor { chain: "0", clock: &main }).unwrap();
        c.record(false, &path("b"), Accessor { chain: "0.0", clock: &a }).unwrap();
        c.record(false, &path("b"), Accessor { chain: "0.1", clock: &b }).unwrap();
        // A task reads what its owner wrote before the fork.
        c.record(false, &path("a"), Accessor { chain: "0.0", clock: &a }).unwrap();
    }

    #[test]
    fn siblings_conflict_and_a_join_orders() {
        let mut main = Clock::forked(&Clock::default(), "0");
        let a = Clock::forked(&main, "0.0");
        main.tick("0");
        let b = Clock::forked(&main, "0.1");
        main.tick("0");
        let mut c = Claims::default();
        c.record(true, &path("log.txt"), Accessor { chain: "0.0", clock: &a }).unwrap();
        let e = c.record(true, &path("log.txt"), Accessor { chain: "0.1", clock: &b }).unwrap_err();
        assert_eq!(e.message, "store determinism violation: write on log.txt by 0.1 conflicts with a write claim by 0.0");
        // A glob racing a sibling's write to a matching path.
        let e = c.record(false, &Region::Pattern("*.txt".into()), Accessor { chain: "0.1", clock: &b }).unwrap_err();
        assert!(e.message.starts_with("store determinism violation: read on *.txt by 0.1"));
        // Before the join the owner conflicts; after it, it reads freely.
        assert!(c.record(false, &path("log.txt"), Accessor { chain: "0", clock: &main }).is_err());
        main.join(&a);
        c.record(false, &path("log.txt"), Accessor { chain: "0", clock: &main }).unwrap();
    }

    #[test]
    fn an_owner_write_after_the_spawn_conflicts_with_the_task() {
        let mut main = Clock::forked(&Clock::default(), "0");
        let task = Clock::forked(&main, "0.0");
        main.tick("0");
        let mut c = Claims::default();
        c.record(false, &path("shared.txt"), Accessor { chain: "0.0", clock: &task }).unwrap();
        assert!(c.record(true, &path("shared.txt"), Accessor { chain: "0", clock: &main }).is_err());
    }
}
