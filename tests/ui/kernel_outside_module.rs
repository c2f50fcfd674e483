// `#[kernel]` only means something inside a kernels module.
use offload::kernel;

#[kernel]
pub fn lonely(x: u32) {
    let _ = x;
}

fn main() {}
