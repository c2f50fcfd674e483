//! Atomic loads and stores with acquire and release ordering at a scope, and fences: what
//! [`Atomics::load_acquire`](crate::Atomics::load_acquire),
//! [`Atomics::store_release`](crate::Atomics::store_release) and [`fence`](crate::fence) are
//! made of. On NVIDIA the scope is the instruction's (`.cta`, `.gpu`, `.sys`); elsewhere the
//! host's atomics at system scope, which order with every thread (stronger than asked).

use crate::atomic::MemoryScope;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A 32- or 64-bit word that atomic elements are stored as.
pub(crate) trait Word: Copy {
    /// Loads `*p` with acquire ordering at `scope`.
    ///
    /// # Safety
    ///
    /// `p` is valid and aligned, and only accessed atomically while others may access it.
    unsafe fn load_acquire(p: *mut Self, scope: MemoryScope) -> Self;
    /// Stores `v` to `*p` with release ordering at `scope`.
    ///
    /// # Safety
    ///
    /// As for [`Word::load_acquire`].
    unsafe fn store_release(p: *mut Self, v: Self, scope: MemoryScope);
    /// Stores `v` to `*p` with relaxed ordering.
    ///
    /// # Safety
    ///
    /// As for [`Word::load_acquire`].
    unsafe fn store_relaxed(p: *mut Self, v: Self);
}

macro_rules! word {
    ($t:ty, $atomic:ident, $reg:ident, $bits:literal) => {
        impl Word for $t {
            #[inline(always)]
            unsafe fn load_acquire(p: *mut Self, scope: MemoryScope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                {
                    let v: $t;
                    // SAFETY: the caller's contract; a generic-address load of an aligned word.
                    unsafe {
                        match scope {
                            MemoryScope::Block => core::arch::asm!(concat!("ld.acquire.cta.b", $bits, " {0}, [{1}];"), out($reg) v, in(reg64) p),
                            MemoryScope::Device => core::arch::asm!(concat!("ld.acquire.gpu.b", $bits, " {0}, [{1}];"), out($reg) v, in(reg64) p),
                            MemoryScope::System => core::arch::asm!(concat!("ld.acquire.sys.b", $bits, " {0}, [{1}];"), out($reg) v, in(reg64) p),
                        }
                    }
                    v
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the caller's contract.
                    unsafe { $atomic::from_ptr(p) }.load(Ordering::Acquire)
                }
            }

            #[inline(always)]
            unsafe fn store_release(p: *mut Self, v: Self, scope: MemoryScope) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: the caller's contract; a generic-address store of an aligned word.
                unsafe {
                    match scope {
                        MemoryScope::Block => core::arch::asm!(concat!("st.release.cta.b", $bits, " [{0}], {1};"), in(reg64) p, in($reg) v),
                        MemoryScope::Device => core::arch::asm!(concat!("st.release.gpu.b", $bits, " [{0}], {1};"), in(reg64) p, in($reg) v),
                        MemoryScope::System => core::arch::asm!(concat!("st.release.sys.b", $bits, " [{0}], {1};"), in(reg64) p, in($reg) v),
                    }
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the caller's contract.
                    unsafe { $atomic::from_ptr(p) }.store(v, Ordering::Release)
                }
            }

            #[inline(always)]
            unsafe fn store_relaxed(p: *mut Self, v: Self) {
                // SAFETY: the caller's contract.
                unsafe { $atomic::from_ptr(p) }.store(v, Ordering::Relaxed)
            }
        }
    };
}

word!(u32, AtomicU32, reg32, "32");
word!(u64, AtomicU64, reg64, "64");

/// A fence among the threads of `scope`: `Acquire`, `Release` and `AcqRel` order like C++'s
/// fences of those orderings, `SeqCst` also joins the single total order; `Relaxed` orders
/// nothing.
#[inline(always)]
pub(crate) fn fence(order: Ordering, scope: MemoryScope) {
    if order == Ordering::Relaxed {
        return;
    }
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence has no operands and no memory-safety preconditions.
    unsafe {
        match (order == Ordering::SeqCst, scope) {
            (false, MemoryScope::Block) => core::arch::asm!("fence.acq_rel.cta;"),
            (false, MemoryScope::Device) => core::arch::asm!("fence.acq_rel.gpu;"),
            (false, MemoryScope::System) => core::arch::asm!("fence.acq_rel.sys;"),
            (true, MemoryScope::Block) => core::arch::asm!("fence.sc.cta;"),
            (true, MemoryScope::Device) => core::arch::asm!("fence.sc.gpu;"),
            (true, MemoryScope::System) => core::arch::asm!("fence.sc.sys;"),
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = scope;
        core::sync::atomic::fence(order);
    }
}
