//! The kernels of the suite, their RAJAPerf defaults, and the data one run works on.

use crate::checksum;
use serde::Serialize;
use std::fmt;

/// RAJAPerf's kernel groups (the suites the kernels come from).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Group {
    Stream,
    Basic,
    Lcals,
    Apps,
    Polybench,
    Algorithm,
}

impl Group {
    /// Every group, in RAJAPerf's order.
    pub const ALL: [Group; 6] =
        [Group::Stream, Group::Basic, Group::Lcals, Group::Apps, Group::Polybench, Group::Algorithm];

    /// The group's name as RAJAPerf spells it.
    pub fn name(self) -> &'static str {
        match self {
            Group::Stream => "Stream",
            Group::Basic => "Basic",
            Group::Lcals => "Lcals",
            Group::Apps => "Apps",
            Group::Polybench => "Polybench",
            Group::Algorithm => "Algorithm",
        }
    }
}

/// The tuning name of a kernel whose CUDA baseline has one tuning (RAJAPerf's default).
pub const DEFAULT_TUNING: &str = "default";

/// One kernel of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
pub enum KernelId {
    Copy,
    Mul,
    Add,
    Triad,
    Daxpy,
    Init3,
    MulAddSub,
    IfQuad,
    Hydro1d,
    Pressure,
    Fir,
    Ltimes,
    // Tier 1b.
    Eos,
    FirstDiff,
    IntPredict,
    DiffPredict,
    Planckian,
    InitView1d,
    Copy8,
    // Tier 1b, continued.
    NestedInit,
    FirstSum,
    TridiagElim,
    GenLinRecur,
    Energy,
    Vol3d,
    DelDotVec2d,
    ZonalAccumulation3d,
    Matvec3dStencil,
    // Tier 2: reductions and atomics.
    Dot,
    ReduceSum,
    PiReduce,
    TrapInt,
    PiAtomic,
    DaxpyAtomic,
    FirstMin,
    ReduceStruct,
    MultiReduce,
    Histogram,
    NodalAccumulation3d,
    // Tier 3: 2-D and 3-D stencils.
    Hydro2d,
    Jacobi1d,
    Jacobi2d,
    Heat3d,
    // Tier 3: dense matrix products.
    MatMatShared,
    Gemm,
    Mm2,
    // Tier 2, integer data.
    Reduce3Int,
}

/// LTIMES' dimensions other than zones: RAJAPerf's `--ltimes_num_d/g/m` defaults.
pub const LTIMES_NUM_D: usize = 64;
pub const LTIMES_NUM_G: usize = 32;
pub const LTIMES_NUM_M: usize = 25;

/// FIR's filter length (`FIR_COEFFLEN`).
pub const FIR_COEFFLEN: usize = 16;

impl KernelId {
    /// Every kernel, in the order the suite runs them.
    pub const ALL: [KernelId; 47] = [
        KernelId::Copy,
        KernelId::Mul,
        KernelId::Add,
        KernelId::Triad,
        KernelId::Daxpy,
        KernelId::Init3,
        KernelId::MulAddSub,
        KernelId::IfQuad,
        KernelId::Hydro1d,
        KernelId::Pressure,
        KernelId::Fir,
        KernelId::Ltimes,
        KernelId::Eos,
        KernelId::FirstDiff,
        KernelId::IntPredict,
        KernelId::DiffPredict,
        KernelId::Planckian,
        KernelId::InitView1d,
        KernelId::Copy8,
        KernelId::NestedInit,
        KernelId::FirstSum,
        KernelId::TridiagElim,
        KernelId::GenLinRecur,
        KernelId::Energy,
        KernelId::Vol3d,
        KernelId::DelDotVec2d,
        KernelId::ZonalAccumulation3d,
        KernelId::Matvec3dStencil,
        KernelId::Dot,
        KernelId::ReduceSum,
        KernelId::PiReduce,
        KernelId::TrapInt,
        KernelId::PiAtomic,
        KernelId::DaxpyAtomic,
        KernelId::FirstMin,
        KernelId::ReduceStruct,
        KernelId::MultiReduce,
        KernelId::Histogram,
        KernelId::NodalAccumulation3d,
        KernelId::Hydro2d,
        KernelId::Jacobi1d,
        KernelId::Jacobi2d,
        KernelId::Heat3d,
        KernelId::MatMatShared,
        KernelId::Gemm,
        KernelId::Mm2,
        KernelId::Reduce3Int,
    ];

    /// RAJAPerf's name (without the group prefix).
    pub fn name(self) -> &'static str {
        match self {
            KernelId::Copy => "COPY",
            KernelId::Mul => "MUL",
            KernelId::Add => "ADD",
            KernelId::Triad => "TRIAD",
            KernelId::Daxpy => "DAXPY",
            KernelId::Init3 => "INIT3",
            KernelId::MulAddSub => "MULADDSUB",
            KernelId::IfQuad => "IF_QUAD",
            KernelId::Hydro1d => "HYDRO_1D",
            KernelId::Pressure => "PRESSURE",
            KernelId::Fir => "FIR",
            KernelId::Ltimes => "LTIMES",
            KernelId::Eos => "EOS",
            KernelId::FirstDiff => "FIRST_DIFF",
            KernelId::IntPredict => "INT_PREDICT",
            KernelId::DiffPredict => "DIFF_PREDICT",
            KernelId::Planckian => "PLANCKIAN",
            KernelId::InitView1d => "INIT_VIEW1D",
            KernelId::Copy8 => "COPY8",
            KernelId::NestedInit => "NESTED_INIT",
            KernelId::FirstSum => "FIRST_SUM",
            KernelId::TridiagElim => "TRIDIAG_ELIM",
            KernelId::GenLinRecur => "GEN_LIN_RECUR",
            KernelId::Energy => "ENERGY",
            KernelId::Vol3d => "VOL3D",
            KernelId::DelDotVec2d => "DEL_DOT_VEC_2D",
            KernelId::ZonalAccumulation3d => "ZONAL_ACCUMULATION_3D",
            KernelId::Matvec3dStencil => "MATVEC_3D_STENCIL",
            KernelId::Dot => "DOT",
            KernelId::ReduceSum => "REDUCE_SUM",
            KernelId::PiReduce => "PI_REDUCE",
            KernelId::TrapInt => "TRAP_INT",
            KernelId::PiAtomic => "PI_ATOMIC",
            KernelId::DaxpyAtomic => "DAXPY_ATOMIC",
            KernelId::FirstMin => "FIRST_MIN",
            KernelId::ReduceStruct => "REDUCE_STRUCT",
            KernelId::MultiReduce => "MULTI_REDUCE",
            KernelId::Histogram => "HISTOGRAM",
            KernelId::NodalAccumulation3d => "NODAL_ACCUMULATION_3D",
            KernelId::Hydro2d => "HYDRO_2D",
            KernelId::Jacobi1d => "JACOBI_1D",
            KernelId::Jacobi2d => "JACOBI_2D",
            KernelId::Heat3d => "HEAT_3D",
            KernelId::MatMatShared => "MAT_MAT_SHARED",
            KernelId::Gemm => "GEMM",
            KernelId::Mm2 => "2MM",
            KernelId::Reduce3Int => "REDUCE3_INT",
        }
    }

    /// The kernel named `name` (case-insensitive; RAJAPerf's `Group_NAME` form also works).
    pub fn from_name(name: &str) -> Option<KernelId> {
        let name = name.trim();
        KernelId::ALL.into_iter().find(|k| {
            name.eq_ignore_ascii_case(k.name())
                || name.eq_ignore_ascii_case(&format!("{}_{}", k.group().name(), k.name()))
        })
    }

    /// The group the kernel belongs to.
    pub fn group(self) -> Group {
        match self {
            KernelId::Copy | KernelId::Mul | KernelId::Add | KernelId::Triad | KernelId::Dot => Group::Stream,
            KernelId::Daxpy
            | KernelId::Init3
            | KernelId::MulAddSub
            | KernelId::IfQuad
            | KernelId::InitView1d
            | KernelId::Copy8
            | KernelId::NestedInit
            | KernelId::PiReduce
            | KernelId::TrapInt
            | KernelId::PiAtomic
            | KernelId::DaxpyAtomic
            | KernelId::ReduceStruct
            | KernelId::MultiReduce
            | KernelId::MatMatShared
            | KernelId::Reduce3Int => Group::Basic,
            KernelId::Hydro1d
            | KernelId::Eos
            | KernelId::FirstDiff
            | KernelId::IntPredict
            | KernelId::DiffPredict
            | KernelId::Planckian
            | KernelId::FirstSum
            | KernelId::TridiagElim
            | KernelId::GenLinRecur
            | KernelId::FirstMin
            | KernelId::Hydro2d => Group::Lcals,
            KernelId::Pressure
            | KernelId::Fir
            | KernelId::Ltimes
            | KernelId::Energy
            | KernelId::Vol3d
            | KernelId::DelDotVec2d
            | KernelId::ZonalAccumulation3d
            | KernelId::Matvec3dStencil
            | KernelId::NodalAccumulation3d => Group::Apps,
            KernelId::Jacobi1d | KernelId::Jacobi2d | KernelId::Heat3d | KernelId::Gemm | KernelId::Mm2 => {
                Group::Polybench
            }
            KernelId::ReduceSum | KernelId::Histogram => Group::Algorithm,
        }
    }

    /// RAJAPerf's default problem size (`setDefaultProblemSize`).
    pub fn default_size(self) -> usize {
        match self {
            // num_d · num_g · num_z with num_z rounded from a target of one million.
            KernelId::Ltimes => LTIMES_NUM_D * LTIMES_NUM_G * ltimes_num_z(1_000_000),
            _ => 1_000_000,
        }
    }

    /// The Base_CUDA tunings of the kernel that the CUDA baseline implements, in RAJAPerf
    /// v2024.07's names and order (`setCudaTuningDefinitions`, block size 256);
    /// `[DEFAULT_TUNING]` for a kernel with one. The runner times every one and compares the
    /// Rust kernel with the fastest. `cuda/runners.h` lists the same names.
    pub fn cuda_tunings(self) -> &'static [&'static str] {
        // Block-atomic reductions on a direct grid, or on an occupancy-sized grid-stride one.
        const REDUCE: &[&str] = &["blkatm_direct_256", "blkatm_occgs_256"];
        // Atomics on replicated bins: (shared copies per block, global copies).
        const ATOMIC: [&str; 2] = ["atomic_shared(0)_global(1)_256", "atomic_shared(16)_global(2)_256"];
        match self {
            KernelId::Dot
            | KernelId::PiReduce
            | KernelId::TrapInt
            | KernelId::Reduce3Int
            | KernelId::ReduceStruct => REDUCE,
            KernelId::ReduceSum => &["cub", "blkatm_direct_256", "blkatm_occgs_256"],
            KernelId::FirstMin => &["blkhst_direct_256", "blkhst_occgs_256"],
            KernelId::MultiReduce => &ATOMIC,
            KernelId::Histogram => &["cub", ATOMIC[0], ATOMIC[1]],
            _ => &[DEFAULT_TUNING],
        }
    }

    /// RAJAPerf's default repetition count (`setDefaultReps`).
    pub fn default_reps(self) -> usize {
        match self {
            KernelId::Copy | KernelId::Mul => 1800,
            KernelId::InitView1d => 2500,
            KernelId::FirstDiff | KernelId::FirstSum | KernelId::Dot | KernelId::Jacobi2d => 2000,
            KernelId::Jacobi1d => 1600,
            KernelId::Heat3d => 400,
            KernelId::MatMatShared => 5,
            KernelId::Gemm => 4,
            KernelId::Mm2 => 2,
            KernelId::Add
            | KernelId::Triad
            | KernelId::Hydro1d
            | KernelId::NestedInit
            | KernelId::TridiagElim => 1000,
            KernelId::Daxpy
            | KernelId::Init3
            | KernelId::Eos
            | KernelId::GenLinRecur
            | KernelId::DaxpyAtomic => 500,
            KernelId::Energy => 130,
            KernelId::Vol3d
            | KernelId::DelDotVec2d
            | KernelId::ZonalAccumulation3d
            | KernelId::Matvec3dStencil
            | KernelId::FirstMin
            | KernelId::NodalAccumulation3d
            | KernelId::Hydro2d => 100,
            KernelId::IntPredict => 400,
            KernelId::DiffPredict => 200,
            KernelId::MulAddSub => 350,
            KernelId::IfQuad => 180,
            KernelId::Pressure => 700,
            KernelId::Fir => 160,
            KernelId::Ltimes
            | KernelId::Planckian
            | KernelId::Copy8
            | KernelId::ReduceSum
            | KernelId::PiReduce
            | KernelId::TrapInt
            | KernelId::PiAtomic
            | KernelId::ReduceStruct
            | KernelId::MultiReduce
            | KernelId::Histogram
            | KernelId::Reduce3Int => 50,
        }
    }

    /// Whether a repetition reads what the previous one wrote (`+=` into an output), so that
    /// the result depends on the number of repetitions.
    pub fn accumulates(self) -> bool {
        // GEN_LIN_RECUR carries stb5 from one repetition to the next.
        // DOT and TRAP_INT add each repetition's reduction to the result.
        matches!(
            self,
            KernelId::Daxpy
                | KernelId::Ltimes
                | KernelId::DiffPredict
                | KernelId::GenLinRecur
                | KernelId::Dot
                | KernelId::TrapInt
                | KernelId::Reduce3Int
                | KernelId::DaxpyAtomic
                | KernelId::NodalAccumulation3d
                | KernelId::Hydro2d
                | KernelId::Jacobi1d
                | KernelId::Jacobi2d
                | KernelId::Heat3d
        )
    }

    /// Bytes one repetition reads plus writes in device memory, RAJAPerf's
    /// `getBytesReadPerRep() + getBytesWrittenPerRep()` counting the arrays only, for the
    /// stream-like kernels whose bandwidth is compared with the device copy bandwidth (the
    /// dense streams of one pass over `actual` elements); `None` for the others.
    pub fn bytes_per_rep(self, actual: usize) -> Option<u64> {
        // (arrays read, arrays written), each `actual` doubles.
        let (read, written) = match self {
            KernelId::Copy | KernelId::Mul => (1, 1),
            KernelId::Add | KernelId::Triad | KernelId::Daxpy | KernelId::DaxpyAtomic => (2, 1),
            KernelId::Dot => (2, 0),
            KernelId::Init3 | KernelId::MulAddSub => (2, 3),
            KernelId::InitView1d => (0, 1),
            KernelId::Copy8 => (8, 8),
            _ => return None,
        };
        Some((read + written) * 8 * actual as u64)
    }

    /// RAJAPerf's `checksum_scale_factor` for a run of `actual` size.
    pub fn checksum_scale(self, actual: usize) -> f64 {
        let relative = self.default_size() as f64 / actual as f64;
        match self {
            KernelId::IfQuad | KernelId::Fir | KernelId::Eos => 0.0001 * relative,
            KernelId::Hydro1d
            | KernelId::Ltimes
            | KernelId::Vol3d
            | KernelId::ZonalAccumulation3d
            | KernelId::NodalAccumulation3d
            | KernelId::Hydro2d
            | KernelId::Gemm => 0.001 * relative,
            KernelId::MatMatShared | KernelId::Mm2 => 1e-6 * relative,
            KernelId::Jacobi1d | KernelId::Jacobi2d | KernelId::Heat3d => 0.0001 * relative,
            KernelId::GenLinRecur => 0.01 * relative,
            KernelId::Matvec3dStencil => relative,
            _ => 1.0,
        }
    }
}

impl From<KernelId> for &'static str {
    fn from(k: KernelId) -> &'static str {
        k.name()
    }
}

impl fmt::Display for KernelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// LTIMES' zone count for a target size: the nearest whole number of `num_d · num_g` slabs,
/// at least one.
pub fn ltimes_num_z(target: usize) -> usize {
    let slab = LTIMES_NUM_D * LTIMES_NUM_G;
    ((target + slab / 2) / slab).max(1)
}

/// A named array of a problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// RAJAPerf's name for it (`m_a` is `a`).
    pub name: &'static str,
    /// Its contents.
    pub data: Vec<f64>,
    /// How many leading elements enter the checksum (0: not checksummed).
    pub checksum_len: usize,
    /// Subtracted from every checksummed element first (INT_PREDICT's `m_px_initval`).
    pub checksum_offset: f64,
    /// A scalar result that RAJAPerf adds to the checksum as it is (`checksum += m_dot`)
    /// rather than through `calcChecksum`'s weights (times the scale factor, which is 1 for
    /// every such kernel).
    pub plain: bool,
}

/// A named read-only integer array of a problem: an index list (RAJAPerf's `Index_type`
/// arrays, 64-bit, such as the real-zone lists of the Apps kernels) or integer data
/// (RAJAPerf's 32-bit `Int_type`, such as REDUCE3_INT's vector).
#[derive(Clone, Debug, PartialEq)]
pub struct IndexArray {
    /// RAJAPerf's name for it (`m_real_zones` is `real_zones`).
    pub name: &'static str,
    /// Its contents.
    pub data: Vec<i64>,
    /// Whether the kernels read it as 32-bit `Int_type` (every value fits) rather than as
    /// 64-bit `Index_type`.
    pub int32: bool,
    /// Whether it names each element of the outputs at most once (the real-zone lists): the
    /// Rust variant checks that once, on the host, and its kernels write through the list
    /// without atomics (`offload::UniqueIndices`).
    pub distinct: bool,
}

/// Everything one run of a kernel reads and writes, initialised as RAJAPerf's `setUp` does.
/// Every variant starts from a clone of the same `Problem`.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// The kernel.
    pub kernel: KernelId,
    /// RAJAPerf's actual problem size for the requested target size.
    pub size: usize,
    /// Arrays the kernel only reads, in the order the variants receive them.
    pub inputs: Vec<Array>,
    /// Arrays the kernel writes (holding their initial contents until it runs).
    pub outputs: Vec<Array>,
    /// Integer arrays the kernel only reads (index lists), after the inputs.
    pub indices: Vec<IndexArray>,
    /// Floating-point parameters.
    pub scalars: Vec<(&'static str, f64)>,
    /// Integer parameters (loop bounds, dimensions).
    pub params: Vec<(&'static str, usize)>,
}

impl Problem {
    /// The input named `name`.
    ///
    /// # Panics
    ///
    /// When the kernel has no such input (a programming error in this crate).
    pub fn input(&self, name: &str) -> &[f64] {
        &self.inputs.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no input {name}")).data
    }

    /// The output named `name` (see [`Problem::input`] for panics).
    pub fn output(&self, name: &str) -> &[f64] {
        &self.outputs.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no output {name}")).data
    }

    /// The index list named `name` (see [`Problem::input`] for panics).
    pub fn index_list(&self, name: &str) -> &[i64] {
        &self.indices.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no index list {name}")).data
    }

    /// The scalar named `name` (see [`Problem::input`] for panics).
    pub fn scalar(&self, name: &str) -> f64 {
        self.scalars.iter().find(|s| s.0 == name).unwrap_or_else(|| panic!("no scalar {name}")).1
    }

    /// The integer parameter named `name`, if the kernel has one.
    pub fn param_opt(&self, name: &str) -> Option<usize> {
        self.params.iter().find(|s| s.0 == name).map(|s| s.1)
    }

    /// The integer parameter named `name` (see [`Problem::input`] for panics).
    pub fn param(&self, name: &str) -> usize {
        self.params.iter().find(|s| s.0 == name).unwrap_or_else(|| panic!("no parameter {name}")).1
    }

    /// RAJAPerf's checksum of the current outputs: the scaled checksums of the checksummed
    /// arrays, added.
    pub fn checksum(&self) -> f64 {
        self.checksum_of(false)
    }

    /// The checksum's magnitude: the same sum over the terms' absolute values. Checksums are
    /// compared relative to it, as the elements are compared with a slack relative to the
    /// array's largest value: FIR's outputs, say, cancel to a checksum far smaller than its
    /// terms, and last-bit differences of the elements (nvcc's contracted multiply-adds) move
    /// such a checksum by more than 1e-10 of itself.
    pub fn checksum_magnitude(&self) -> f64 {
        self.checksum_of(true).abs()
    }

    /// What the element check's absolute slack (a fraction of each array's largest value)
    /// allows the checksum: `Σ_arrays |scale| · max|x| · Σ_j weight(j)`. Multiplied by
    /// `ELEMENT_ATOL`, it lets a checksum of outputs that are mostly near zero (FIR's at 2^25)
    /// differ as much as elements that pass the element check may add up to.
    pub fn checksum_slack(&self) -> f64 {
        let scale = self.kernel.checksum_scale(self.size).abs();
        self.outputs
            .iter()
            .filter(|a| a.checksum_len > 0)
            .map(|a| {
                let data = &a.data[..a.checksum_len];
                let largest = data.iter().fold(0.0f64, |m, x| m.max((x - a.checksum_offset).abs()));
                let weights = if a.plain {
                    data.len() as f64
                } else {
                    checksum::array_checksum(&vec![1.0; data.len()], 1.0)
                };
                scale * largest * weights
            })
            .sum()
    }

    /// The checksum, of the elements' absolute values when `abs` (after removing the offset).
    fn checksum_of(&self, abs: bool) -> f64 {
        let scale = self.kernel.checksum_scale(self.size);
        let f = |x: f64| if abs { x.abs() } else { x };
        self.outputs
            .iter()
            .filter(|a| a.checksum_len > 0)
            .map(|a| {
                let data = &a.data[..a.checksum_len];
                if a.plain {
                    data.iter().map(|&x| f(x)).sum::<f64>() * scale
                } else if a.checksum_offset == 0.0 && !abs {
                    checksum::array_checksum(data, scale)
                } else {
                    let shifted: Vec<f64> = data.iter().map(|x| f(x - a.checksum_offset)).collect();
                    checksum::array_checksum(&shifted, scale)
                }
            })
            .sum()
    }

    /// Bytes of all inputs and outputs (what a variant copies to the device).
    pub fn bytes_in(&self) -> usize {
        let index_bytes: usize =
            self.indices.iter().map(|a| a.data.len() * if a.int32 { 4 } else { 8 }).sum();
        self.inputs.iter().chain(&self.outputs).map(|a| a.data.len() * 8).sum::<usize>() + index_bytes
    }
}

/// Where the time of one variant run went. Times are totals, not per repetition.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Timing {
    /// All repetitions, from a synchronised start to a synchronised end.
    pub kernel_seconds: f64,
    /// Copying inputs and initial outputs to the device.
    pub h2d_seconds: f64,
    /// Copying outputs back.
    pub d2h_seconds: f64,
    /// Bytes copied to the device.
    pub h2d_bytes: u64,
    /// Bytes copied back.
    pub d2h_bytes: u64,
    /// Copies to the device (one per array; the Rust runtime's own count).
    pub h2d_copies: u64,
    /// Copies back.
    pub d2h_copies: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_with_and_without_group() {
        for k in KernelId::ALL {
            assert_eq!(KernelId::from_name(k.name()), Some(k));
            assert_eq!(KernelId::from_name(&k.name().to_lowercase()), Some(k));
        }
        assert_eq!(KernelId::from_name("Apps_LTIMES"), Some(KernelId::Ltimes));
        assert_eq!(KernelId::from_name("NOPE"), None);
    }

    #[test]
    fn cuda_tunings_are_named_once_each() {
        let mut several = 0;
        for k in KernelId::ALL {
            let tunings = k.cuda_tunings();
            assert!(!tunings.is_empty(), "{k}");
            for (i, t) in tunings.iter().enumerate() {
                assert!(!tunings[..i].contains(t), "{k}: {t} twice");
            }
            if tunings.len() == 1 {
                assert_eq!(tunings, [DEFAULT_TUNING], "{k}: a kernel with one tuning has the default");
            } else {
                several += 1;
                assert!(!tunings.contains(&DEFAULT_TUNING), "{k}: RAJAPerf's names only");
            }
        }
        assert_eq!(several, 9);
        assert_eq!(KernelId::ReduceSum.cuda_tunings(), ["cub", "blkatm_direct_256", "blkatm_occgs_256"]);
        assert_eq!(KernelId::Histogram.cuda_tunings()[0], "cub");
    }

    #[test]
    fn ltimes_sizes_follow_rajaperf() {
        assert_eq!(ltimes_num_z(1_000_000), 488);
        assert_eq!(KernelId::Ltimes.default_size(), 999_424);
        assert_eq!(ltimes_num_z(10), 1);
        assert_eq!(KernelId::Ltimes.checksum_scale(999_424), 0.001);
    }
}
