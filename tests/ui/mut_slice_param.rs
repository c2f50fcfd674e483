// Thousands of threads sharing one `&mut [T]` would break Rust's aliasing rules.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn scale(k: f32, y: &mut [f32]) {
        y[0] *= k;
    }
}

fn main() {}
