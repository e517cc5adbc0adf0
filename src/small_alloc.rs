//! The module's global allocator: the system allocator (Rust's dlmalloc in wasm, the C library's
//! natively) with a cache of freed small blocks in front of it.
//!
//! Why: every section entry builds a fresh Lua state and closes it (isolation is the rule), some
//! 500 allocations and 600 frees, nearly all under 512 bytes; malloc and free were about a
//! quarter of an entry (docs/performance.md, "Decision records"). The blocks one entry frees when
//! its state closes are the blocks the next entry asks for, so a free list per size class turns
//! most of those calls into a pointer pop or push.
//!
//! It sits under mlua's allocator callback, so mlua's memory accounting and the memory ceiling
//! (`effects::memory`) are untouched: Lua's requests are counted before they reach here. What
//! the cache holds is bounded ([`CACHE_BYTES`]); a block freed beyond that goes back to the
//! system allocator. Blocks of a class are always taken from the system allocator at the class's
//! size, so any cached block serves any request of its class.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Size classes are multiples of this.
const GRAIN: usize = 16;
/// Number of classes: requests up to `CLASSES * GRAIN` bytes are cached.
const CLASSES: usize = 32;
/// The largest cached size.
const MAX_SMALL: usize = CLASSES * GRAIN;
/// The alignment the system allocator gives every block without its slower aligned path (two
/// words: dlmalloc's and glibc's malloc alignment); requests asking for more bypass the cache.
const ALIGN: usize = 2 * std::mem::size_of::<usize>();
/// The most the free lists hold, in bytes: a few entries' worth of Lua states.
const CACHE_BYTES: usize = 1 << 20;

/// The free lists: the head of each class's list (each free block's first word points to the
/// next), and the bytes they hold.
struct Lists {
    heads: [*mut u8; CLASSES],
    bytes: usize,
}

/// The allocator: [`Lists`] behind a spin lock (wasm runs one thread, where the lock is two plain
/// stores; native tests run many, and the critical sections are a few instructions).
pub struct SmallAlloc {
    locked: AtomicBool,
    lists: UnsafeCell<Lists>,
}

// SAFETY: `lists` is only touched while `locked` is held (`with_lists`).
unsafe impl Sync for SmallAlloc {}

impl SmallAlloc {
    pub const fn new() -> Self {
        SmallAlloc { locked: AtomicBool::new(false), lists: UnsafeCell::new(Lists { heads: [ptr::null_mut(); CLASSES], bytes: 0 }) }
    }

    fn with_lists<R>(&self, f: impl FnOnce(&mut Lists) -> R) -> R {
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: the lock is held, so this is the only reference.
        let r = f(unsafe { &mut *self.lists.get() });
        self.locked.store(false, Ordering::Release);
        r
    }
}

impl Default for SmallAlloc {
    fn default() -> Self {
        Self::new()
    }
}

/// The class of a request, when the cache serves it.
fn class_of(layout: Layout) -> Option<usize> {
    (layout.size() <= MAX_SMALL && layout.align() <= ALIGN).then(|| layout.size().saturating_sub(1) / GRAIN)
}

/// The layout every block of `class` has in the system allocator.
fn class_layout(class: usize) -> Layout {
    // SAFETY: the size is a positive multiple of GRAIN (at most MAX_SMALL) and ALIGN a power of
    // two, so the layout is valid.
    unsafe { Layout::from_size_align_unchecked((class + 1) * GRAIN, ALIGN) }
}

unsafe impl GlobalAlloc for SmallAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else { return System.alloc(layout) };
        let cached = self.with_lists(|lists| {
            let head = lists.heads[class];
            if !head.is_null() {
                // SAFETY: a cached block is at least GRAIN bytes, aligned to ALIGN, and its first
                // word is the next block of the list.
                lists.heads[class] = unsafe { head.cast::<*mut u8>().read() };
                lists.bytes -= (class + 1) * GRAIN;
            }
            head
        });
        if cached.is_null() {
            System.alloc(class_layout(class))
        } else {
            cached
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if class_of(layout).is_none() {
            return System.alloc_zeroed(layout);
        }
        let p = self.alloc(layout);
        if !p.is_null() {
            p.write_bytes(0, layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(class) = class_of(layout) else { return System.dealloc(ptr, layout) };
        let size = (class + 1) * GRAIN;
        let kept = self.with_lists(|lists| {
            if lists.bytes + size > CACHE_BYTES {
                return false;
            }
            // SAFETY: the block is ours again (the caller gave it up) and at least a word long.
            unsafe { ptr.cast::<*mut u8>().write(lists.heads[class]) };
            lists.heads[class] = ptr;
            lists.bytes += size;
            true
        });
        if !kept {
            System.dealloc(ptr, class_layout(class));
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY (of the layout): the caller guarantees `new_size`, rounded to the alignment,
        // does not overflow.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (class_of(layout), class_of(new_layout)) {
            // A cached block already has its class's whole size.
            (Some(old), Some(new)) if old == new => ptr,
            // Neither is cached: the system allocator may grow or shrink in place.
            (None, None) => System.realloc(ptr, layout, new_size),
            _ => {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks come back from the cache for their class, keep their contents across a realloc
    /// within and across classes, and large blocks bypass the cache.
    #[test]
    fn blocks_are_reused_within_their_class() {
        let a = SmallAlloc::new();
        unsafe {
            let l = Layout::from_size_align(40, 8).unwrap();
            let p = a.alloc(l);
            p.write_bytes(7, 40);
            a.dealloc(p, l);
            // 33..=48 bytes share a class: the block freed is the block given next.
            let q = a.alloc(Layout::from_size_align(48, 8).unwrap());
            assert_eq!(p, q);
            q.write_bytes(9, 48);
            let r = a.realloc(q, Layout::from_size_align(48, 8).unwrap(), 40);
            assert_eq!(r, q, "same class: in place");
            let s = a.realloc(r, Layout::from_size_align(40, 8).unwrap(), 4000);
            assert_eq!(std::slice::from_raw_parts(s, 40), &[9u8; 40][..], "moved with its contents");
            let t = a.realloc(s, Layout::from_size_align(4000, 8).unwrap(), 20);
            assert_eq!(std::slice::from_raw_parts(t, 20), &[9u8; 20][..]);
            a.dealloc(t, Layout::from_size_align(20, 8).unwrap());
            assert_eq!(a.with_lists(|l| l.bytes), 48 + 32);
            // Over-aligned requests are not cached.
            let big = Layout::from_size_align(64, 64).unwrap();
            let u = a.alloc(big);
            assert_eq!(u as usize % 64, 0);
            a.dealloc(u, big);
            assert_eq!(a.with_lists(|l| l.bytes), 48 + 32);
        }
    }

    /// The cache never holds more than its bound: past it, frees go to the system allocator.
    #[test]
    fn the_cache_is_bounded() {
        let a = SmallAlloc::new();
        let l = Layout::from_size_align(MAX_SMALL, 8).unwrap();
        let blocks: Vec<*mut u8> = (0..CACHE_BYTES / MAX_SMALL + 10).map(|_| unsafe { a.alloc(l) }).collect();
        for p in blocks {
            unsafe { a.dealloc(p, l) };
        }
        assert_eq!(a.with_lists(|l| l.bytes), CACHE_BYTES);
    }
}
