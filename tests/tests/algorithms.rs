//! `offload::algorithms` against host computations, for every element type, on host slices and
//! device buffers, at sizes around the tile (2,048 elements) and with tiles that must look back
//! past several predecessors; on the CPU backend in CI and on the GPU in the GPU check.

use offload::algorithms::{self, Element};
use offload::{Device, DeviceBuffer};

fn device() -> Device {
    Device::default().unwrap()
}

/// Sizes: empty, one, around one tile and several, and (on a GPU) many tiles.
fn sizes(dev: &Device) -> Vec<usize> {
    let mut s = vec![0, 1, 7, 2047, 2048, 2049, 5000, 3 * 2048 + 13];
    if dev.is_gpu() {
        s.extend([1 << 20, (1 << 24) + 3]);
    }
    s
}

trait Check: Element + std::fmt::Debug {
    fn zero() -> Self;
    fn from_index(i: usize) -> Self;
    fn add(self, other: Self) -> Self;
    fn to_f64(self) -> f64;
    /// Whether `got` is the sum of `n` terms that `want` (added in this type, wrapping) and
    /// `exact` (added in `f64`) describe.
    fn close(got: Self, want: Self, exact: f64, n: usize) -> bool;
}

macro_rules! int_check {
    ($($t:ty),*) => {$(
        impl Check for $t {
            fn zero() -> Self {
                0
            }
            fn from_index(i: usize) -> Self {
                ((i as u64).wrapping_mul(2_654_435_761) >> 7) as $t
            }
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn close(got: Self, want: Self, _: f64, _: usize) -> bool {
                got == want
            }
        }
    )*};
}
int_check!(u32, i32, u64, i64);

macro_rules! float_check {
    ($($t:ty),*) => {$(
        impl Check for $t {
            fn zero() -> Self {
                0.0
            }
            fn from_index(i: usize) -> Self {
                ((i as u64).wrapping_mul(2_654_435_761) % 1000) as $t / 100.0 - 4.0
            }
            fn add(self, other: Self) -> Self {
                self + other
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn close(got: Self, _: Self, exact: f64, n: usize) -> bool {
                // `n` terms of magnitude ≤ 6 (their magnitudes sum to at most 6n), added by a
                // tree within each tile (depth ≤ 64) and in sequence across tiles (one per
                // 2,048 elements): each addition rounds by ε of what it adds up to.
                let depth = (n / 2048 + 64) as f64;
                (f64::from(got) - exact).abs() <= f64::from(<$t>::EPSILON) * depth * 6.0 * (n as f64).max(1.0)
            }
        }
    )*};
}
float_check!(f32, f64);

fn check_type<T: Check>(dev: &Device) {
    for n in sizes(dev) {
        let x: Vec<T> = (0..n).map(T::from_index).collect();
        let mut want_ex = Vec::with_capacity(n);
        let zero = T::zero();
        let (mut acc, mut exact, mut exact_ex) = (zero, 0.0f64, Vec::with_capacity(n));
        for &v in &x {
            want_ex.push(acc);
            exact_ex.push(exact);
            acc = acc.add(v);
            exact += v.to_f64();
        }
        let total = acc;
        let name = std::any::type_name::<T>();

        // Host slices.
        let mut y = vec![zero; n];
        algorithms::exclusive_sum(dev, &x, &mut y).unwrap();
        for i in 0..n {
            assert!(
                T::close(y[i], want_ex[i], exact_ex[i], i),
                "{name}, n = {n}: exclusive[{i}] = {:?}, want {:?}",
                y[i],
                want_ex[i]
            );
        }
        algorithms::inclusive_sum(dev, &x, &mut y).unwrap();
        for i in 0..n {
            let want = want_ex[i].add(x[i]);
            assert!(
                T::close(y[i], want, exact_ex[i] + x[i].to_f64(), i + 1),
                "{name}, n = {n}: inclusive[{i}] = {:?}, want {want:?}",
                y[i]
            );
        }
        let s = algorithms::sum(dev, &x).unwrap();
        assert!(T::close(s, total, exact, n), "{name}, n = {n}: sum {s:?}, want {total:?}");

        // Device buffers, in place: nothing copied but the results read back here.
        if n > 0 {
            let dx = DeviceBuffer::from_slice(dev, &x).unwrap();
            let mut dy = DeviceBuffer::<T>::zeroed(dev, n).unwrap();
            algorithms::exclusive_sum(dev, &dx, &mut dy).unwrap();
            let y = dy.to_vec().unwrap();
            for i in 0..n {
                assert!(T::close(y[i], want_ex[i], exact_ex[i], i), "{name}, n = {n}: buffer exclusive[{i}]");
            }
            assert!(
                T::close(algorithms::sum(dev, &dx).unwrap(), total, exact, n),
                "{name}, n = {n}: buffer sum"
            );
        }
    }
}

#[test]
fn scans_and_sums_match_the_host_for_every_type() {
    let dev = device();
    check_type::<u32>(&dev);
    check_type::<i32>(&dev);
    check_type::<u64>(&dev);
    check_type::<i64>(&dev);
    check_type::<f32>(&dev);
    check_type::<f64>(&dev);
}

#[test]
fn integer_scans_wrap_around() {
    let dev = device();
    let x = vec![u32::MAX; 5000];
    let mut y = vec![0u32; 5000];
    algorithms::inclusive_sum(&dev, &x, &mut y).unwrap();
    for (i, &v) in y.iter().enumerate() {
        assert_eq!(v, u32::MAX.wrapping_mul(i as u32 + 1), "element {i}");
    }
    assert_eq!(algorithms::sum(&dev, &x).unwrap(), u32::MAX.wrapping_mul(5000));
}

#[test]
fn a_scan_into_an_output_of_another_length_is_an_error() {
    let dev = device();
    let x = vec![1u64; 10];
    let mut y = vec![0u64; 9];
    let e = algorithms::exclusive_sum(&dev, &x, &mut y).unwrap_err();
    assert!(e.to_string().contains("10 elements and the output 9"), "{e}");
}
