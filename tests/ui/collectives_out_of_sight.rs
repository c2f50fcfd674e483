// Barriers and warp operations reached by ways a syntactic analysis could miss: a value that
// leaves a `loop` through `break`, a thread function imported under another name, a macro
// defined in the kernel that names its `Warp`, a `Warp` handed to a closure's untyped
// parameter. Each is a compile error at the collective (or the macro), as a plain branch is.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;
    use offload::prelude::thread_idx_x as tix;

    #[kernel]
    pub fn by_a_break_value(w: Warp, mut y: Region<u32>) {
        let t = loop {
            break thread_idx_x();
        };
        let s = if t < 16 { w.sum(1u32) } else { 0 };
        if let Some(o) = y.mine() { *o = s; }
    }

    #[kernel]
    pub fn by_a_renamed_import(w: Warp, mut y: Region<u32>) {
        let s = if tix() < 16 { w.sum(1u32) } else { 0 };
        if let Some(o) = y.mine() { *o = s; }
    }

    #[kernel]
    pub fn by_a_local_macro(w: Warp, mut y: Region<u32>) {
        macro_rules! total {
            () => { w.sum(1u32) };
        }
        let s = if thread_idx_x() < 16 { total!() } else { 0 };
        if let Some(o) = y.mine() { *o = s; }
    }

    #[kernel]
    pub fn by_a_closure(w: Warp, mut y: Region<u32>) {
        let s = if thread_idx_x() < 16 { Some(&w).map(|x| x.sum(1u32)).unwrap_or(0) } else { 0 };
        if let Some(o) = y.mine() { *o = s; }
    }
}

fn main() {}
