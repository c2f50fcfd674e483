// A `&mut` captured into a kernel: every thread would hold the same mutable reference.
#[offload::kernels]
mod gpu {
    #[kernel]
    pub fn count(total: &mut u64) {
        *total += 1;
    }
}

fn main() {}
