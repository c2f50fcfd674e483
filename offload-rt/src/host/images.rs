//! The device images this executable carries: the container format is `offload_wire::images`;
//! this finds the container `cargo offload build` linked in.

pub use offload_wire::images::*;

/// The container `cargo offload build` linked into this executable, if any.
pub fn embedded() -> Option<&'static [u8]> {
    unsafe extern "C" {
        // Weak: a program built with plain `cargo build` has no images and this is null.
        #[linkage = "extern_weak"]
        static __offload_images: *const u8;
    }
    // SAFETY: reading the address of a weak symbol is always allowed; it is null when no
    // object defines the symbol.
    let start = unsafe { __offload_images };
    if start.is_null() {
        return None;
    }
    // SAFETY: cargo-offload defines the symbol at the start of a container of at least its
    // 24-byte header, in read-only data that lives as long as the program.
    let header = unsafe { std::slice::from_raw_parts(start, 24) };
    let len = container_len(header)?;
    // SAFETY: the header's length field covers the whole container, written as one block.
    Some(unsafe { std::slice::from_raw_parts(start, len) })
}

/// Whether this executable links a kernels module (its records, which the kernels macro puts in
/// every executable that links one, are in its file). Read once, from the executable's file,
/// and only asked when it carries no images: a program without kernels (buffers, copies, BLAS)
/// needs none, one built with plain `cargo build` does. When the file cannot be read or parsed,
/// it is taken to have kernels (the stricter answer).
pub fn executable_has_kernels() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .ok()
            .and_then(|file| offload_wire::record::elf_has_records(&file).ok())
            .unwrap_or(true)
    })
}
