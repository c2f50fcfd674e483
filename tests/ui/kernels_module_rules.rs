// What a kernels module may not contain: statics (one object on the CPU, another per GPU
// image), heap types and host macros (they build for the host, then fail for the GPU),
// `unsafe` without the module's opt-in, and the runtime's private items.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    static HITS: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

    #[kernel]
    pub fn heap(x: &[u32], mut y: Region<u32>) {
        let copy: Vec<u32> = x.to_vec();
        println!("{}", copy.len());
        if let Some(o) = y.mine() { *o = copy[0]; }
    }

    #[kernel]
    pub fn raw(x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(o) = y.mine() { *o = unsafe { *x.get_unchecked(i) }; }
    }

    #[kernel]
    pub fn private(mut y: Region<u32>) {
        let _w = unsafe { offload::__private::Warp::current() };
        if let Some(o) = y.mine() { *o = 0; }
    }
}

fn main() {}
