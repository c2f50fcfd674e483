// Everything wrong with a kernel signature is reported at once, each at its own token.
#[offload::kernels]
mod gpu {
    #[kernel]
    fn private(x: u32) {
        let _ = x;
    }

    #[kernel]
    pub async fn asynchronous(x: u32) {
        let _ = x;
    }

    #[kernel]
    pub fn returns(x: u32) -> u32 {
        x
    }

    #[kernel]
    pub fn raw(p: *const f32) {
        let _ = p;
    }

    #[kernel]
    pub fn margins(a: offload::Region2<f32, 1, 2>, b: offload::Region<f32, 1>) {
        let _ = (a, b);
    }
}

fn main() {}
