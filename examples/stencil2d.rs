//! A 2-D five-point stencil (one Jacobi step of the heat equation) over a grid of 2-D thread
//! tiles: each thread owns one interior point through `Region2`.

use offload::Grid;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `out[x, y] = u + k·(left + right + up + down − 4u)` inside; the border is copied.
    #[kernel]
    pub fn heat_step(k: f64, u: &[f64], mut out: Region2<f64>) {
        let [x, y] = out.index();
        let [nx, ny] = out.extents();
        if let Some(o) = out.mine() {
            let c = u[x + nx * y];
            *o = if x == 0 || y == 0 || x + 1 == nx || y + 1 == ny {
                c
            } else {
                let around =
                    u[x - 1 + nx * y] + u[x + 1 + nx * y] + u[x + nx * (y - 1)] + u[x + nx * (y + 1)];
                c + k * (around - 4.0 * c)
            };
        }
    }
}

fn main() -> anyhow::Result<()> {
    let (nx, ny) = (513, 257);
    let dev = offload::Device::default()?;
    let u: Vec<f64> =
        (0..nx * ny).map(|i| ((i % nx) as f64 * 0.01).sin() * ((i / nx) as f64 * 0.02).cos()).collect();
    let mut out = vec![0.0; nx * ny];
    gpu::heat_step::launch(&dev, Grid::threads_xy(nx, ny).block_xy(32, 8), 0.1, &u, (&mut out, [nx, ny]))?;
    for y in 0..ny {
        for x in 0..nx {
            let c = u[x + nx * y];
            let want = if x == 0 || y == 0 || x + 1 == nx || y + 1 == ny {
                c
            } else {
                let around =
                    u[x - 1 + nx * y] + u[x + 1 + nx * y] + u[x + nx * (y - 1)] + u[x + nx * (y + 1)];
                c + 0.1 * (around - 4.0 * c)
            };
            anyhow::ensure!(
                out[x + nx * y] == want,
                "stencil2d: ({x}, {y}) is {}, want {want}",
                out[x + nx * y]
            );
        }
    }
    println!("stencil2d: {nx}×{ny} points in 32×8 tiles on {dev}: verified against the host");
    Ok(())
}
