//! Zeroed host memory, 256-byte aligned (enough for any kernel element type), freed on drop:
//! the CPU backend's device memory and its stand-in for pinned memory.

use crate::host::error::{Error, Result};
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

const ALIGN: usize = 256;

#[derive(Debug)]
pub(crate) struct HostBlock {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: the block is owned by this value alone, like a `Box<[u8]>`.
unsafe impl Send for HostBlock {}
// SAFETY: as above; shared access only reads the address.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    /// `bytes` zeroed bytes, or an error naming `what` when the host cannot provide them.
    pub fn zeroed(bytes: usize, what: &str) -> Result<HostBlock> {
        if bytes == 0 {
            return Ok(HostBlock {
                ptr: NonNull::without_provenance(ALIGN.try_into().expect("non-zero")),
                bytes,
            });
        }
        let refused = |why: &str| Error::OutOfMemory {
            what: what.to_owned(),
            request: format!("{bytes} bytes of host memory: {why}"),
        };
        let layout = Layout::from_size_align(bytes, ALIGN)
            .map_err(|_| refused("more than the address space holds"))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr =
            NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or_else(|| refused("the allocator refused"))?;
        Ok(HostBlock { ptr, bytes })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        if self.bytes > 0 {
            // SAFETY: allocated by `zeroed` with this layout, freed once.
            unsafe { dealloc(self.ptr.as_ptr(), Layout::from_size_align_unchecked(self.bytes, ALIGN)) };
        }
    }
}
