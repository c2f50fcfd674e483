//! Sizes and host allocations that come from user input: checked, and a request that cannot
//! be met is an [`Error::OutOfMemory`], never a wrapped size, a panic or an abort.

use super::error::{Error, Result};

/// The bytes of `len` values of `T`, for `what` (in the error).
pub(crate) fn bytes_of<T>(len: usize, what: &str) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| Error::OutOfMemory {
        what: what.to_owned(),
        request: format!(
            "{len} elements of {} bytes: more bytes than the address space holds",
            size_of::<T>()
        ),
    })
}

/// A vector of `len` copies of `value`, or an error when the host cannot hold it.
pub(crate) fn try_vec<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let bytes = bytes_of::<T>(len, what)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|e| Error::OutOfMemory {
        what: what.to_owned(),
        request: format!("{bytes} bytes of host memory: {e}"),
    })?;
    v.resize(len, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors() {
        let e = bytes_of::<u64>((1 << 61) + 1, "a buffer").unwrap_err().to_string();
        assert!(e.contains("a buffer") && e.contains("address space"), "{e}");
        let e = try_vec(usize::MAX / 8, 0u64, "a vector").unwrap_err().to_string();
        assert!(e.contains("a vector"), "{e}");
        assert_eq!(try_vec(3, 7u8, "v").unwrap(), [7, 7, 7]);
    }

    /// (Miri stops at a request this large instead of refusing it.)
    #[test]
    #[cfg_attr(miri, ignore = "Miri stops at allocations beyond its limit")]
    fn more_than_a_machine_has_is_an_error() {
        // The byte count fits in a usize; no machine has it.
        let e = try_vec(1usize << 60, 0u8, "a vector").unwrap_err().to_string();
        assert!(e.contains("host memory"), "{e}");
    }
}
