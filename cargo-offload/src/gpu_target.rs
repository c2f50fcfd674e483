//! GPU architectures named on the command line (`--target-gpu sm_90,gfx90a`).

use anyhow::{Result, bail};
use std::fmt;

/// NVIDIA architectures LLVM 22's NVPTX back end accepts and CUDA 13 still assembles.
const NVIDIA: &[&str] = &[
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_101", "sm_103",
    "sm_120", "sm_120a", "sm_121",
];
/// AMD architectures LLVM 22's AMDGPU back end accepts and liboffload's plugin runs.
const AMD: &[&str] = &[
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010",
    "gfx1030", "gfx1031", "gfx1032", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
    "gfx1200", "gfx1201",
];

/// A device target: a triple and an architecture within it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuTarget {
    Nvidia(String),
    Amd(String),
}

impl GpuTarget {
    pub fn parse(name: &str) -> Result<GpuTarget> {
        let name = name.trim();
        if NVIDIA.contains(&name) {
            return Ok(GpuTarget::Nvidia(name.to_owned()));
        }
        if AMD.contains(&name) {
            return Ok(GpuTarget::Amd(name.to_owned()));
        }
        let hint = if name.starts_with("sm") || name.starts_with("compute") {
            format!("NVIDIA architectures: {}", NVIDIA.join(", "))
        } else if name.starts_with("gfx") {
            format!("AMD architectures: {}", AMD.join(", "))
        } else {
            format!("NVIDIA: {}\n  AMD: {}", NVIDIA.join(", "), AMD.join(", "))
        };
        bail!("unknown GPU architecture `{name}` in --target-gpu\n  known {hint}")
    }

    /// Parses a list, keeping the first occurrence of each and refusing an empty list.
    /// `native` stands for the GPUs of this machine, as liboffload finds them.
    pub fn parse_list(names: &[String]) -> Result<Vec<GpuTarget>> {
        let mut out: Vec<GpuTarget> = Vec::new();
        for n in names.iter().flat_map(|n| n.split(',')).filter(|n| !n.trim().is_empty()) {
            let found = if n.trim() == "native" { native()? } else { vec![GpuTarget::parse(n)?] };
            for t in found {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        if out.is_empty() {
            bail!("--target-gpu names no architecture");
        }
        Ok(out)
    }

    pub fn triple(&self) -> &'static str {
        match self {
            GpuTarget::Nvidia(_) => "nvptx64-nvidia-cuda",
            GpuTarget::Amd(_) => "amdgcn-amd-amdhsa",
        }
    }

    pub fn arch(&self) -> &str {
        match self {
            GpuTarget::Nvidia(a) | GpuTarget::Amd(a) => a,
        }
    }
}

impl fmt::Display for GpuTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.arch())
    }
}

/// The architectures of this machine's GPUs (`--target-gpu native`), from liboffload.
fn native() -> Result<Vec<GpuTarget>> {
    let probe = crate::probe::Probe::run().map_err(|e| {
        anyhow::anyhow!("--target-gpu native needs liboffload to find this machine's GPUs: {e}")
    })?;
    if let Some(e) = &probe.init_error {
        bail!("--target-gpu native: liboffload failed to start: {e}");
    }
    let mut out = Vec::new();
    for g in &probe.gpus {
        // AMD names carry target features (`gfx90a:sramecc+:xnack-`); the image is per chip.
        let arch = g.arch.split(':').next().unwrap_or_default();
        if arch.is_empty() {
            bail!(
                "--target-gpu native: liboffload does not say the architecture of {}; name it with --target-gpu",
                g.name
            );
        }
        out.push(GpuTarget::parse(arch)?);
    }
    if out.is_empty() {
        bail!(
            "--target-gpu native: liboffload finds no GPU on this machine; name the GPUs to build for, e.g. --target-gpu sm_90"
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_architectures_parse_and_unknown_ones_explain() {
        let list = GpuTarget::parse_list(&["sm_90,gfx90a".into(), "sm_90".into()]).unwrap();
        assert_eq!(list, [GpuTarget::Nvidia("sm_90".into()), GpuTarget::Amd("gfx90a".into())]);
        assert_eq!(list[1].triple(), "amdgcn-amd-amdhsa");
        let e = GpuTarget::parse("sm_91").unwrap_err().to_string();
        assert!(e.contains("unknown GPU architecture `sm_91`") && e.contains("sm_90"), "{e}");
        let e = GpuTarget::parse("gfx9000").unwrap_err().to_string();
        assert!(e.contains("AMD architectures"), "{e}");
        assert!(GpuTarget::parse_list(&[",".into()]).is_err());
    }
}
