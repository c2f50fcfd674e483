//! RAJAPerf's `ADomain` (`src/apps/AppsData.hpp`, `.cpp`): a structured 2-D or 3-D mesh with
//! two layers of ghost nodes on the low side and one on the high side, its list of real
//! zones, and the mesh positions the Apps kernels of tiers 1b and 2 read.
//!
//! Nodes and zones share one linear numbering: `i + j·jp + k·kp`. A zone's corner nodes are
//! the zone's own index plus the offsets of [`ADomain::corners_3d`] (RAJAPerf's `NDPTRSET`)
//! or [`ADomain::corners_2d`] (`NDSET2D`).

/// Ghost node layers below the real nodes (`NPNL`).
const NPNL: usize = 2;
/// Ghost node layers above the real nodes (`NPNR`).
const NPNR: usize = 1;

/// RAJAPerf's `ADomain` for `rzmax` and `ndims` (2 or 3), field for field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ADomain {
    pub ndims: usize,
    pub imin: usize,
    pub jmin: usize,
    pub kmin: usize,
    pub imax: usize,
    pub jmax: usize,
    pub kmax: usize,
    /// Stride of `j` (and of `k`: `kp`, 0 in 2-D).
    pub jp: usize,
    pub kp: usize,
    /// Nodes including ghosts: the length of nodal arrays.
    pub nnalls: usize,
    /// First real node, and the last.
    pub frn: usize,
    pub lrn: usize,
    /// First and last zone a zonal loop may touch (`fpz`, `lpz`).
    pub fpz: usize,
    pub lpz: usize,
    pub n_real_zones: usize,
    pub n_real_nodes: usize,
}

impl ADomain {
    /// `ADomain(rzmax, ndims)`.
    pub fn new(rzmax: usize, ndims: usize) -> ADomain {
        assert!(ndims == 2 || ndims == 3, "ADomain is 2-D or 3-D");
        let (imin, jmin) = (NPNL, NPNL);
        let (imax, jmax) = (rzmax + NPNR, rzmax + NPNR);
        let jp = imax - imin + 1 + NPNL + NPNR;
        let mut n_real_zones = imax - imin;
        let mut n_real_nodes = imax + 1 - imin;
        let (kmin, kmax, kp, nnalls);
        if ndims == 2 {
            (kmin, kmax, kp) = (0, 0, 0);
            nnalls = jp * (jmax - jmin + 1 + NPNL + NPNR);
            n_real_zones *= jmax - jmin;
            n_real_nodes *= jmax + 1 - jmin;
        } else {
            (kmin, kmax) = (NPNL, rzmax + NPNR);
            kp = jp * (jmax - jmin + 1 + NPNL + NPNR);
            nnalls = kp * (kmax - kmin + 1 + NPNL + NPNR);
            n_real_zones *= (jmax - jmin) * (kmax - kmin);
            n_real_nodes *= (jmax + 1 - jmin) * (kmax + 1 - kmin);
        }
        let (fpn, lpn) = (0, nnalls - 1);
        let frn = fpn + NPNL * (kp + jp) + NPNL;
        let lrn = lpn - NPNR * (kp + jp) - NPNR;
        let fpz = frn - jp - kp - 1;
        ADomain {
            ndims,
            imin,
            jmin,
            kmin,
            imax,
            jmax,
            kmax,
            jp,
            kp,
            nnalls,
            frn,
            lrn,
            fpz,
            lpz: lrn,
            n_real_zones,
            n_real_nodes,
        }
    }

    /// The 3-D domain for a target size: `rzmax = cbrt(target) + 1`, truncated as C++ does.
    pub fn for_target_3d(target: usize) -> ADomain {
        ADomain::new(((target as f64).cbrt() + 1.0) as usize, 3)
    }

    /// The 2-D domain for a target size: `rzmax = sqrt(target) + 1`.
    pub fn for_target_2d(target: usize) -> ADomain {
        ADomain::new(((target as f64).sqrt() + 1.0) as usize, 2)
    }

    /// `NDPTRSET`'s offsets of a zone's eight corners: v0 … v7.
    pub fn corners_3d(&self) -> [usize; 8] {
        let (jp, kp) = (self.jp, self.kp);
        [0, 1, jp, 1 + jp, kp, 1 + kp, jp + kp, 1 + jp + kp]
    }

    /// `NDSET2D`'s offsets of a zone's four corners: v1 … v4.
    pub fn corners_2d(&self) -> [usize; 4] {
        [1, 1 + self.jp, self.jp, 0]
    }

    /// `setRealZones_2d` / `setRealZones_3d`: the linear index of every real zone, i fastest.
    pub fn real_zones(&self) -> Vec<i64> {
        let mut zones = Vec::with_capacity(self.n_real_zones);
        let (kmin, kmax) = if self.ndims == 2 { (0, 1) } else { (self.kmin, self.kmax) };
        for k in kmin..kmax {
            for j in self.jmin..self.jmax {
                for i in self.imin..self.imax {
                    zones.push((i + j * self.jp + k * self.kp) as i64);
                }
            }
        }
        zones
    }

    /// `setMeshPositions_2d`: writes the corner coordinates of every zone, ghosts included,
    /// in RAJAPerf's loop order (later zones overwrite shared nodes with equal values).
    pub fn set_mesh_positions_2d(&self, x: &mut [f64], dx: f64, y: &mut [f64], dy: f64) {
        let [o1, o2, o3, o4] = self.corners_2d();
        for j in self.jmin - NPNL..self.jmax + NPNR {
            for i in self.imin - NPNL..self.imax + NPNR {
                let iz = i + j * self.jp;
                (x[iz + o3], x[iz + o4]) = (i as f64 * dx, i as f64 * dx);
                (x[iz + o1], x[iz + o2]) = ((i + 1) as f64 * dx, (i + 1) as f64 * dx);
                (y[iz + o1], y[iz + o4]) = (j as f64 * dy, j as f64 * dy);
                (y[iz + o2], y[iz + o3]) = ((j + 1) as f64 * dy, (j + 1) as f64 * dy);
            }
        }
    }

    /// `setMeshPositions_3d`, in RAJAPerf's loop order.
    pub fn set_mesh_positions_3d(&self, xyz: [&mut [f64]; 3], d: [f64; 3]) {
        let c = self.corners_3d();
        let [x, y, z] = xyz;
        for k in self.kmin - NPNL..self.kmax + NPNR {
            for j in self.jmin - NPNL..self.jmax + NPNR {
                for i in self.imin - NPNL..self.imax + NPNR {
                    let iz = i + j * self.jp + self.kp * k;
                    // Corner v has offsets (v & 1, v >> 1 & 1, v >> 2) in (i, j, k).
                    for (v, off) in c.iter().enumerate() {
                        x[iz + off] = (i + (v & 1)) as f64 * d[0];
                        y[iz + off] = (j + (v >> 1 & 1)) as f64 * d[1];
                        z[iz + off] = (k + (v >> 2)) as f64 * d[2];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_3d_domain_has_a_million_real_zones() {
        let d = ADomain::for_target_3d(1_000_000);
        assert_eq!((d.imin, d.imax, d.jp), (2, 102, 104));
        assert_eq!(d.kp, 104 * 104);
        assert_eq!(d.nnalls, 104 * 104 * 104);
        assert_eq!(d.n_real_zones, 1_000_000);
        let zones = d.real_zones();
        assert_eq!(zones.len(), d.n_real_zones);
        assert_eq!(zones[0] as usize, 2 + 2 * d.jp + 2 * d.kp);
        assert!(zones.iter().all(|&z| (z as usize) >= d.fpz && (z as usize) <= d.lpz));
    }

    #[test]
    fn the_2d_domain_and_its_positions() {
        let d = ADomain::for_target_2d(100);
        assert_eq!((d.n_real_zones, d.kp, d.jp), (100, 0, 14));
        let (mut x, mut y) = (vec![0.0; d.nnalls], vec![0.0; d.nnalls]);
        d.set_mesh_positions_2d(&mut x, 0.2, &mut y, 0.1);
        // Node (i, j) sits at (i·dx, j·dy).
        let n = 3 + 4 * d.jp;
        assert_eq!((x[n], y[n]), (3.0 * 0.2, 4.0 * 0.1));
    }
}
