// A thread gets one `&mut` to its element; a second view while the first lives is refused.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn double_take(mut y: Region<f32>) {
        let first = y.mine();
        let second = y.mine();
        if let (Some(a), Some(b)) = (first, second) {
            *a = 1.0;
            *b = 2.0;
        }
    }
}

fn main() {}
