// A struct crosses to the GPU only with a layout both sides agree on.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[derive(Clone, Copy, KernelScalar)]
    pub struct Params {
        pub scale: f32,
        pub count: u32,
    }

    #[derive(Clone, Copy)]
    #[repr(C)]
    pub struct NotDerived {
        pub scale: f32,
    }

    #[kernel]
    pub fn scale(p: NotDerived, mut y: Region<f32>) {
        if let Some(yi) = y.mine() {
            *yi *= p.scale;
        }
    }
}

#[derive(Clone, Copy, offload::KernelScalar)]
#[repr(C)]
struct Holds {
    name: &'static str,
}

fn main() {}
