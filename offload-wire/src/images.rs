//! The device-image container that `cargo offload build` embeds in an executable.
//!
//! liboffload neither unwraps LLVM's offload-binary format nor JITs bitcode, so we embed raw
//! images (PTX, cubin, HSACO) in a small container of our own and pick among them at run
//! time. Layout (little endian):
//!
//! ```text
//! "OFFLDIMG"  u32 version  u32 image count  u64 total length (header included)
//! per image:  u8 kind  str target  str arch  str content-hash  u32 n  n × str kernel
//!             u32 m  m × site  u32 stack bytes  u64 data length  zero padding to a 16-byte
//!             offset  data
//! site:       str function  str file  u32 line  u32 column  str kind
//! str:        u32 length  UTF-8 bytes
//! ```
//!
//! Sites are the image's panic sites ([`TrapSite`]): site `i` (from 1; 0 is "unknown") is the
//! number a trapping thread leaves in the runtime's trap record.
//!
//! PTX data ends in a NUL byte, as `olCreateProgram` expects of text images.

use std::fmt;

/// First bytes of every container.
pub const MAGIC: &[u8; 8] = b"OFFLDIMG";
/// Layout version written by this crate.
pub const VERSION: u32 = 3;
/// Name of the symbol through which the runtime finds the embedded container.
pub const SYMBOL: &str = "__offload_images";

/// What an image holds. Serialised (and named in file extensions) as `ptx`, `cubin`,
/// `hsaco`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// PTX assembly text (NVIDIA), JIT-compiled by the driver.
    Ptx,
    /// A CUDA binary for one `sm_XX`, assembled by `ptxas`.
    Cubin,
    /// An AMD HSA code object (ELF, `EM_AMDGPU`) for one `gfxXXX`.
    Hsaco,
}

// By hand rather than derived: see `record.rs`.
#[cfg(feature = "read")]
impl serde::Serialize for ImageKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.extension())
    }
}

#[cfg(feature = "read")]
impl<'de> serde::Deserialize<'de> for ImageKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ImageKind, D::Error> {
        let name = String::deserialize(d)?;
        [ImageKind::Ptx, ImageKind::Cubin, ImageKind::Hsaco]
            .into_iter()
            .find(|k| k.extension() == name)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("unknown image kind `{name}` (ptx, cubin or hsaco)"))
            })
    }
}

impl ImageKind {
    /// The file extension of such an image: `ptx`, `cubin`, `hsaco`.
    pub fn extension(self) -> &'static str {
        match self {
            ImageKind::Ptx => "ptx",
            ImageKind::Cubin => "cubin",
            ImageKind::Hsaco => "hsaco",
        }
    }

    fn code(self) -> u8 {
        match self {
            ImageKind::Ptx => 1,
            ImageKind::Cubin => 2,
            ImageKind::Hsaco => 3,
        }
    }

    fn from_code(code: u8) -> Option<ImageKind> {
        Some(match code {
            1 => ImageKind::Ptx,
            2 => ImageKind::Cubin,
            3 => ImageKind::Hsaco,
            _ => return None,
        })
    }
}

impl fmt::Display for ImageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ImageKind::Ptx => "PTX",
            ImageKind::Cubin => "cubin",
            ImageKind::Hsaco => "AMD code object",
        })
    }
}

/// One device image, borrowed from a container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image<'a> {
    /// What the data is.
    pub kind: ImageKind,
    /// Target triple it was compiled for, e.g. `nvptx64-nvidia-cuda`.
    pub target: &'a str,
    /// GPU architecture, e.g. `sm_90` or `gfx90a`.
    pub arch: &'a str,
    /// Hash of the sources and settings the image was built from.
    pub hash: &'a str,
    /// Kernel entry-point symbols the image defines.
    pub kernels: Vec<&'a str>,
    /// The image's panic sites: site `i` is `sites[i - 1]`.
    pub sites: Vec<TrapSite<'a>>,
    /// Bytes of stack per thread that a kernel of the image may need beyond what the driver
    /// sizes by itself: calls through function pointers (`core::fmt`) leave the call graph's
    /// depth unknown to `ptxas`, and the CUDA driver then gives each thread only its default
    /// stack (1 KiB). An upper bound for call graphs without recursion; 0 when every kernel's
    /// stack is known (the driver's own sizing suffices) or the image is not a cubin.
    pub stack_bytes: u32,
    /// The image itself.
    pub data: &'a [u8],
}

/// Where a panic in device code happens: the place a trapping thread's site number names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrapSite<'a> {
    /// The function the trap is in (a kernel's entry point, or a function not inlined into it).
    pub function: &'a str,
    /// The source file, as the user names it (`src/main.rs`), or the path of a library's.
    pub file: &'a str,
    /// 1-based line, as a panic message gives it.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What failed, e.g. "index out of bounds" or "explicit panic".
    pub kind: &'a str,
}

/// Names shared by the device linker, which numbers the panic sites, and the runtime, which
/// reads what a trapping thread recorded.
pub mod trap {
    /// The device function every panic site calls with its number before it traps.
    pub const RECORD_FN: &str = "__offload_trap_at";
    /// The device global holding the host address of the trap record (set after loading).
    pub const RECORD_PTR: &str = "__offload_trap_record";
    /// A recorded site number with this bit set names the function of site `number & !bit`,
    /// not the site itself: the default build gives each function one failure path (so that its
    /// checks fold as without sites), and any of the function's sites may have failed.
    pub const ANY_SITE_OF_FUNCTION: u32 = 1 << 31;
    /// Whether and how the device linker records panic sites, read from the environment of
    /// `cargo offload build`: `off` (the default: a trap reports the kernel only, and the code
    /// is what it was without sites), `kernel` (one failure path per function, which records
    /// the block, the thread and the function's sites) or `line` (a failure path per source
    /// line: the exact place, at the cost of checks that no longer fold into one).
    pub const SITES_ENV: &str = "OFFLOAD_PANIC_SITES";
    /// Bytes of the trap record: `u32` written flag, `u32` site, `[u32; 3]` block,
    /// `[u32; 3]` thread.
    pub const RECORD_BYTES: usize = 32;
}

/// A malformed container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerError(pub String);

impl fmt::Display for ContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed device-image container: {}", self.0)
    }
}

impl std::error::Error for ContainerError {}

/// Serialises images into a container.
pub fn write(images: &[Image<'_>]) -> Vec<u8> {
    fn put_str(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(images.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    for image in images {
        out.push(image.kind.code());
        put_str(&mut out, image.target);
        put_str(&mut out, image.arch);
        put_str(&mut out, image.hash);
        out.extend_from_slice(&(image.kernels.len() as u32).to_le_bytes());
        for k in &image.kernels {
            put_str(&mut out, k);
        }
        out.extend_from_slice(&(image.sites.len() as u32).to_le_bytes());
        for site in &image.sites {
            put_str(&mut out, site.function);
            put_str(&mut out, site.file);
            out.extend_from_slice(&site.line.to_le_bytes());
            out.extend_from_slice(&site.column.to_le_bytes());
            put_str(&mut out, site.kind);
        }
        out.extend_from_slice(&image.stack_bytes.to_le_bytes());
        out.extend_from_slice(&(image.data.len() as u64).to_le_bytes());
        out.resize(out.len().next_multiple_of(16), 0);
        out.extend_from_slice(image.data);
    }
    let total = out.len() as u64;
    out[16..24].copy_from_slice(&total.to_le_bytes());
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ContainerError> {
        let end =
            self.pos.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
                ContainerError(format!("truncated at byte {} while reading {what}", self.pos))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self, what: &str) -> Result<u32, ContainerError> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self, what: &str) -> Result<u64, ContainerError> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }
    fn str(&mut self, what: &str) -> Result<&'a str, ContainerError> {
        let n = self.u32(what)? as usize;
        std::str::from_utf8(self.take(n, what)?).map_err(|_| ContainerError(format!("{what} is not UTF-8")))
    }
}

/// Length of the container that starts with `header` (at least 24 bytes), or `None` when
/// the header is not a container's.
pub fn container_len(header: &[u8]) -> Option<usize> {
    if header.len() < 24 || &header[..8] != MAGIC {
        return None;
    }
    Some(u64::from_le_bytes(header[16..24].try_into().ok()?) as usize)
}

/// Parses a container.
pub fn parse(bytes: &[u8]) -> Result<Vec<Image<'_>>, ContainerError> {
    let mut r = Reader { bytes, pos: 0 };
    if r.take(8, "magic")? != MAGIC {
        return Err(ContainerError("bad magic".into()));
    }
    let version = r.u32("version")?;
    if version != VERSION {
        return Err(ContainerError(format!(
            "layout version {version}, this runtime reads version {VERSION}; rebuild with a matching cargo-offload"
        )));
    }
    let count = r.u32("image count")?;
    let total = r.u64("total length")? as usize;
    if total != bytes.len() {
        return Err(ContainerError(format!("length field says {total} bytes, have {}", bytes.len())));
    }
    // (Each image takes at least 33 bytes: no more can follow than the bytes left allow, so a
    // damaged count cannot ask for a huge vector.)
    let mut images = Vec::with_capacity((count as usize).min((bytes.len() - r.pos) / 33));
    for _ in 0..count {
        let code = r.take(1, "image kind")?[0];
        let kind =
            ImageKind::from_code(code).ok_or_else(|| ContainerError(format!("unknown image kind {code}")))?;
        let target = r.str("target")?;
        let arch = r.str("arch")?;
        let hash = r.str("hash")?;
        let n = r.u32("kernel count")?;
        let kernels = (0..n).map(|_| r.str("kernel name")).collect::<Result<Vec<_>, _>>()?;
        let m = r.u32("site count")?;
        let sites = (0..m)
            .map(|_| {
                Ok(TrapSite {
                    function: r.str("site function")?,
                    file: r.str("site file")?,
                    line: r.u32("site line")?,
                    column: r.u32("site column")?,
                    kind: r.str("site kind")?,
                })
            })
            .collect::<Result<Vec<_>, ContainerError>>()?;
        let stack_bytes = r.u32("stack bytes")?;
        let len = r.u64("data length")? as usize;
        let pad = r.pos.next_multiple_of(16) - r.pos;
        if r.take(pad, "padding")?.iter().any(|&b| b != 0) {
            return Err(ContainerError(format!("non-zero padding before byte {}", r.pos)));
        }
        let data = r.take(len, "image data")?;
        images.push(Image { kind, target, arch, hash, kernels, sites, stack_bytes, data });
    }
    if r.pos != bytes.len() {
        return Err(ContainerError(format!("{} bytes after the last image", bytes.len() - r.pos)));
    }
    Ok(images)
}

/// The architecture name (`sm_90`, `gfx90a:sramecc+:xnack-`) among the strings a GPU's driver
/// reports for it (liboffload's device name and product name): the first word that is one,
/// or empty. What [`select`] then matches against the images' `arch`.
pub fn arch_in(strings: &[&str]) -> String {
    strings
        .iter()
        .flat_map(|s| s.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')'))
        .find(|w| {
            w.strip_prefix("sm_").is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                || w.strip_prefix("gfx").is_some_and(|v| !v.is_empty())
        })
        .unwrap_or_default()
        .to_owned()
}

/// Numeric part of an `sm_XX` architecture name.
pub fn sm_version(arch: &str) -> Option<u32> {
    arch.strip_prefix("sm_")?.trim_end_matches(['a', 'f']).parse().ok()
}

/// The image that best fits a device of architecture `arch`: for NVIDIA the cubin for
/// exactly that `sm`, else the PTX of the newest `sm` not above it (which the driver JITs);
/// for AMD the code object for that `gfx` name (target features after `:` ignored).
pub fn select<'i, 'a>(images: &'i [Image<'a>], arch: &str) -> Option<&'i Image<'a>> {
    let base = |a: &str| a.split(':').next().unwrap_or("").to_owned();
    if let Some(want) = sm_version(arch) {
        if let Some(cubin) = images.iter().find(|i| i.kind == ImageKind::Cubin && i.arch == arch) {
            return Some(cubin);
        }
        return images
            .iter()
            .filter(|i| i.kind == ImageKind::Ptx)
            .filter_map(|i| sm_version(i.arch).filter(|&v| v <= want).map(|v| (v, i)))
            .max_by_key(|(v, _)| *v)
            .map(|(_, i)| i);
    }
    images.iter().find(|i| i.kind == ImageKind::Hsaco && base(i.arch) == base(arch))
}

/// One line per image, for error messages: `PTX sm_90, cubin sm_90, AMD code object gfx90a`.
pub fn describe(images: &[Image<'_>]) -> String {
    if images.is_empty() {
        return "no images".into();
    }
    images.iter().map(|i| format!("{} {}", i.kind, i.arch)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_architecture_is_found_in_the_drivers_strings() {
        assert_eq!(arch_in(&["NVIDIA H200", "sm_90"]), "sm_90");
        assert_eq!(arch_in(&["AMD Instinct MI250X (gfx90a:sramecc+:xnack-)"]), "gfx90a:sramecc+:xnack-");
        assert_eq!(arch_in(&["NVIDIA H200", ""]), "");
        assert_eq!(arch_in(&["sm_", "gfx"]), "");
    }

    use super::*;

    fn image(kind: ImageKind, arch: &'static str, data: &'static [u8]) -> Image<'static> {
        let site = TrapSite {
            function: "k1",
            file: "src/main.rs",
            line: 12,
            column: 9,
            kind: "index out of bounds",
        };
        Image {
            kind,
            target: "t",
            arch,
            hash: "h",
            kernels: vec!["k1", "k2"],
            sites: vec![site],
            stack_bytes: 4096,
            data,
        }
    }

    #[test]
    fn round_trip_keeps_every_field_and_aligns_data() {
        let imgs =
            vec![image(ImageKind::Ptx, "sm_90", b"ptx\0"), image(ImageKind::Hsaco, "gfx90a", b"\x7fELF")];
        let bytes = write(&imgs);
        assert_eq!(container_len(&bytes), Some(bytes.len()));
        let back = parse(&bytes).unwrap();
        assert_eq!(back, imgs);
        for i in &back {
            let offset = i.data.as_ptr() as usize - bytes.as_ptr() as usize;
            assert_eq!(offset % 16, 0);
        }
    }

    #[test]
    fn truncated_and_foreign_input_is_rejected() {
        let bytes = write(&[image(ImageKind::Cubin, "sm_90", b"0123456789")]);
        assert!(parse(&bytes[..bytes.len() - 1]).is_err());
        assert!(parse(b"not a container at all, no").is_err());
        let mut bad = bytes.clone();
        bad[8] = 9;
        assert!(parse(&bad).unwrap_err().0.contains("version 9"));
    }

    #[test]
    fn selection_prefers_exact_cubin_then_newest_compatible_ptx() {
        let imgs = vec![
            image(ImageKind::Ptx, "sm_70", b""),
            image(ImageKind::Ptx, "sm_90", b""),
            image(ImageKind::Cubin, "sm_90", b""),
            image(ImageKind::Hsaco, "gfx90a", b""),
        ];
        assert_eq!(select(&imgs, "sm_90").unwrap().kind, ImageKind::Cubin);
        let for_100 = select(&imgs, "sm_100").unwrap();
        assert_eq!((for_100.kind, for_100.arch), (ImageKind::Ptx, "sm_90"));
        assert_eq!(select(&imgs, "sm_80").unwrap().arch, "sm_70");
        assert!(select(&imgs, "sm_60").is_none());
        assert_eq!(select(&imgs, "gfx90a:sramecc+:xnack-").unwrap().kind, ImageKind::Hsaco);
        assert!(select(&imgs, "gfx942").is_none());
    }

    /// The fuzz target's committed seed is a container of this layout (else the fuzzer starts
    /// from inputs the parser rejects at the version).
    #[test]
    fn the_fuzz_seed_is_a_current_container() {
        let seed = include_bytes!("../fuzz/corpus/image_container/two-images");
        let images = parse(seed).expect("the seed parses: regenerate it for this layout version");
        assert_eq!(images.len(), 2);
        assert_eq!((images[0].stack_bytes, images[0].sites.len()), (4096, 1));
    }
}
