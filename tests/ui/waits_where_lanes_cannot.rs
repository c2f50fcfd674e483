// Barriers and warp operations where the CPU backend's copy of the module cannot wait: inside
// a macro's arguments, and in a trait's method (each a function that waits becomes an `async
// fn` there, which a trait method cannot be).

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn inside_assert(w: Warp, mut y: Region<u32>) {
        assert!(w.all(true));
        if let Some(v) = y.mine() {
            *v = 1;
        }
    }

    trait Step {
        fn step(&self, w: &Warp, v: u32) -> u32;
    }

    struct Halve;

    impl Step for Halve {
        fn step(&self, w: &Warp, v: u32) -> u32 {
            w.sum(v) / 2
        }
    }

    #[kernel]
    pub fn through_a_trait(w: Warp, mut y: Region<u32>) {
        let v = Halve.step(&w, 3);
        if let Some(o) = y.mine() {
            *o = v;
        }
    }
}

fn main() {}
