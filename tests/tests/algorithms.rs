//! `offload::algorithms` against host computations, for every element type, on host slices and
//! device buffers, at sizes around the tile (2,048 elements) and with tiles that must look back
//! past several predecessors; on the CPU backend in CI and on the GPU in the GPU check.

use offload::algorithms::{self, Element};
use offload::{Device, DeviceBuffer};

fn device() -> Device {
    Device::default().unwrap()
}

/// Elements per tile of the library's scan (`SCAN_BLOCK × ITEMS` in offload-rt's
/// `algorithms.rs`): the sizes below straddle it.
const TILE: usize = 3200;

/// Sizes: empty, one, around one tile and several, and (on a GPU) many tiles.
fn sizes(dev: &Device) -> Vec<usize> {
    // Around the scans' tiles and the sums' blocks of 2,048, and past a look-back of more than
    // one warp's width of tiles (40 tiles).
    let mut s = vec![0, 1, 7, 2047, 2048, 2049, TILE - 1, TILE, TILE + 1, 5000, 3 * TILE + 13, 40 * TILE + 7];
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

#[test]
fn even_histograms_match_the_host_in_shared_and_global_bins() {
    let dev = device();
    let n = if dev.is_gpu() { 1 << 22 } else { 20_000 };
    // Samples over [-10, 110): some below and above [0, 100).
    let f: Vec<f64> =
        (0..n).map(|i| ((i as u64).wrapping_mul(2_654_435_761) % 12_000) as f64 / 100.0 - 10.0).collect();
    for bins in [1usize, 7, 256, 4096, 5000] {
        let want = |bin: &dyn Fn(f64) -> Option<usize>| {
            let mut h = vec![0u32; bins];
            for &x in &f {
                if let Some(b) = bin(x) {
                    h[b] += 1;
                }
            }
            h
        };
        let got = algorithms::histogram_even(&dev, &f, bins, 0.0, 100.0).unwrap();
        // (As documented: (x − lower) · bins / (upper − lower), in `f64`, multiplying first.)
        let host =
            want(&|x| (0.0..100.0).contains(&x).then(|| ((x * bins as f64 / 100.0) as usize).min(bins - 1)));
        assert_eq!(got, host, "f64, {bins} bins");
        let g: Vec<f32> = f.iter().map(|&x| x as f32).collect();
        let got = algorithms::histogram_even(&dev, &g, bins, 0.0f32, 100.0).unwrap();
        let host32 = {
            let mut h = vec![0u32; bins];
            for &x in &g {
                if (0.0..100.0).contains(&x) {
                    h[((f64::from(x) * bins as f64 / 100.0) as usize).min(bins - 1)] += 1;
                }
            }
            h
        };
        assert_eq!(got, host32, "f32, {bins} bins");
        let i: Vec<i32> = f.iter().map(|&x| x.floor() as i32).collect();
        let got = algorithms::histogram_even(&dev, &i, bins, -5, 95).unwrap();
        let host_i = {
            let mut h = vec![0u32; bins];
            for &x in &i {
                if (-5..95).contains(&x) {
                    h[((x + 5) as usize) * bins / 100] += 1;
                }
            }
            h
        };
        assert_eq!(got, host_i, "i32, {bins} bins");
        let u: Vec<u32> = i.iter().map(|&x| x.max(0) as u32).collect();
        let got =
            algorithms::histogram_even(&dev, &DeviceBuffer::from_slice(&dev, &u).unwrap(), bins, 0, 100)
                .unwrap();
        let host_u = {
            let mut h = vec![0u32; bins];
            for &x in &u {
                if x < 100 {
                    h[x as usize * bins / 100] += 1;
                }
            }
            h
        };
        assert_eq!(got, host_u, "u32 in a buffer, {bins} bins");
    }
    // NaN is not counted; bad bounds and no bins are errors.
    let nan = [f32::NAN, 1.0, 2.0];
    assert_eq!(algorithms::histogram_even(&dev, &nan, 2, 0.0, 4.0).unwrap(), [1, 1]);
    assert!(algorithms::histogram_even(&dev, &nan, 0, 0.0, 4.0).is_err());
    assert!(algorithms::histogram_even(&dev, &nan, 2, 4.0, 4.0).is_err());
    assert!(algorithms::histogram_even(&dev, &nan, 2, f32::NAN, 4.0).is_err());
    // Bounds whose difference overflows the type: bins by the same formula, not all in bin 0.
    let wide = [1e38f32, 2.9e38, -2.9e38, -1e30];
    assert_eq!(algorithms::histogram_even(&dev, &wide, 2, -3e38, 3e38).unwrap(), [2, 2]);
    let wide = [1e308f64, -1.7e308, 1.7e308];
    assert_eq!(algorithms::histogram_even(&dev, &wide, 4, -1.75e308, 1.75e308).unwrap(), [1, 0, 0, 2]);
    // A sample on a bin's edge is in the bin it starts: 15.0 of 22 bins over [0, 22) in bin 15
    // (dividing before multiplying gave 14.999…, bin 14).
    let edges: Vec<f64> = (0..22).map(f64::from).collect();
    assert_eq!(algorithms::histogram_even(&dev, &edges, 22, 0.0, 22.0).unwrap(), vec![1; 22]);
    let edges: Vec<f32> = (0..22).map(|i| i as f32).collect();
    assert_eq!(algorithms::histogram_even(&dev, &edges, 22, 0.0f32, 22.0).unwrap(), vec![1; 22]);
}

fn check_select<T: Check>(dev: &Device) {
    for n in [0usize, 1, 5, 2049, 10_000] {
        let x: Vec<T> = (0..n).map(T::from_index).collect();
        let flags: Vec<u32> =
            (0..n as u64).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u32 % 3).collect();
        let sentinel = T::from_index(7);
        let mut out = vec![sentinel; n];
        let kept = algorithms::select_flagged(dev, &x, &flags, &mut out).unwrap();
        let want: Vec<T> = x.iter().zip(&flags).filter(|(_, f)| **f != 0).map(|(v, _)| *v).collect();
        let name = std::any::type_name::<T>();
        assert_eq!(kept, want.len(), "{name}, n = {n}: count");
        for (i, (g, w)) in out[..kept].iter().zip(&want).enumerate() {
            assert!(T::close(*g, *w, w.to_f64(), 0), "{name}, n = {n}: kept[{i}] = {g:?}, want {w:?}");
        }
        assert!(
            out[kept..].iter().all(|v| T::close(*v, sentinel, sentinel.to_f64(), 0)),
            "{name}, n = {n}: the rest changed"
        );
        if n > 0 {
            // Device buffers, flags on the device too.
            let (dx, df) =
                (DeviceBuffer::from_slice(dev, &x).unwrap(), DeviceBuffer::from_slice(dev, &flags).unwrap());
            let mut dy = DeviceBuffer::<T>::zeroed(dev, n).unwrap();
            assert_eq!(algorithms::select_flagged(dev, &dx, &df, &mut dy).unwrap(), want.len());
        }
    }
}

#[test]
fn selection_by_flags_keeps_order_and_counts() {
    let dev = device();
    check_select::<u32>(&dev);
    check_select::<i32>(&dev);
    check_select::<u64>(&dev);
    check_select::<i64>(&dev);
    check_select::<f32>(&dev);
    check_select::<f64>(&dev);
    let e = algorithms::select_flagged(&dev, &[1u32, 2], &[1u32], &mut [0u32; 2]).unwrap_err();
    assert!(e.to_string().contains("the flags 1"), "{e}");
}

/// The scans take their tiles' status from the device's scratch pool: a scan after a larger
/// one reuses that one's memory, its stale flags and sums included, and must still be right;
/// scans in a loop allocate nothing after the first (checked where device memory is counted,
/// on a GPU; the CPU backend counts none).
#[test]
fn scans_reuse_scratch_memory_and_stay_right() {
    let dev = device();
    let exclusive = |x: &[u32]| -> Vec<u32> {
        x.iter().scan(0u32, |run, &v| Some(std::mem::replace(run, run.wrapping_add(v)))).collect()
    };
    let values: Vec<u32> = (0..5 * TILE + 1).map(|i| (i as u32).wrapping_mul(2_654_435_761) >> 20).collect();
    for n in [values.len(), 3 * TILE + 5, TILE + 1, TILE, 100, 1] {
        let mut out = vec![u32::MAX; n];
        algorithms::exclusive_sum(&dev, &values[..n], &mut out).unwrap();
        assert_eq!(out, exclusive(&values[..n]), "an exclusive scan of {n} after larger ones");
    }
    let x = DeviceBuffer::from_slice(&dev, &values).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&dev, values.len()).unwrap();
    algorithms::inclusive_sum(&dev, &x, &mut y).unwrap();
    dev.sync().unwrap();
    let held = dev.allocated_bytes();
    for _ in 0..20 {
        algorithms::inclusive_sum(&dev, &x, &mut y).unwrap();
    }
    dev.sync().unwrap();
    assert_eq!(dev.allocated_bytes(), held, "20 scans of device buffers allocated device memory");
    let want: Vec<u32> = exclusive(&values).iter().zip(&values).map(|(e, v)| e.wrapping_add(*v)).collect();
    assert_eq!(y.to_vec().unwrap(), want);
}

/// Runs of equal keys of lengths from the pattern `lengths` (cycled), summed by key and checked
/// against the host, on host slices and on device buffers.
fn check_reduce_by_key<V: Check>(dev: &Device, n: usize, lengths: &[usize]) {
    let mut keys = Vec::with_capacity(n);
    let mut run = 0u32;
    let mut li = 0;
    while keys.len() < n {
        // Consecutive runs get different keys; later runs reuse earlier keys (by key they are
        // still separate runs).
        let len = lengths[li % lengths.len()].min(n - keys.len());
        keys.extend(std::iter::repeat_n(run % 5, len));
        run += 1;
        li += 1;
    }
    let values: Vec<V> = (0..n).map(V::from_index).collect();
    let (mut want_keys, mut want_sums, mut exact): (Vec<u32>, Vec<V>, Vec<f64>) = (vec![], vec![], vec![]);
    let mut lens = Vec::new();
    for (i, (&k, &v)) in keys.iter().zip(&values).enumerate() {
        if i == 0 || k != keys[i - 1] {
            want_keys.push(k);
            want_sums.push(V::zero());
            exact.push(0.0);
            lens.push(0);
        }
        let last = want_sums.len() - 1;
        want_sums[last] = want_sums[last].add(v);
        exact[last] += v.to_f64();
        lens[last] += 1;
    }
    let check = |runs: usize, unique: &[u32], sums: &[V], what: &str| {
        assert_eq!(runs, want_keys.len(), "{what}: n = {n}, runs");
        assert_eq!(&unique[..runs], &want_keys[..], "{what}: n = {n}, keys");
        for r in 0..runs {
            assert!(
                V::close(sums[r], want_sums[r], exact[r], lens[r]),
                "{what}: n = {n}, run {r}: {:?} vs {:?}",
                sums[r],
                want_sums[r]
            );
        }
        assert!(unique[runs..].iter().all(|&k| k == u32::MAX), "{what}: the rest of the keys' output stays");
    };
    let (mut unique, mut sums) = (vec![u32::MAX; n], vec![V::zero(); n]);
    let runs = algorithms::reduce_by_key(dev, &keys, &values, &mut unique, &mut sums).unwrap();
    check(runs, &unique, &sums, "host slices");
    let (dk, dv) =
        (DeviceBuffer::from_slice(dev, &keys).unwrap(), DeviceBuffer::from_slice(dev, &values).unwrap());
    let mut du = DeviceBuffer::from_slice(dev, &vec![u32::MAX; n]).unwrap();
    let mut ds = DeviceBuffer::<V>::zeroed(dev, n).unwrap();
    let runs = algorithms::reduce_by_key(dev, &dk, &dv, &mut du, &mut ds).unwrap();
    check(runs, &du.to_vec().unwrap(), &ds.to_vec().unwrap(), "device buffers");
}

#[test]
fn sums_by_key_match_the_host_for_runs_short_and_long() {
    let dev = device();
    let long = if dev.is_gpu() { 1 << 20 } else { 20_000 };
    for &(n, lengths) in &[
        (0, &[1][..]),
        (1, &[1][..]),
        (5000, &[1][..]),                   // every element its own run
        (5000, &[5000][..]),                // one run
        (7777, &[3, 1, 40, 2, 300][..]),    // mixed
        (long + 5, &[long / 3, 1, 77][..]), // runs longer than a thread's chunk
    ] {
        check_reduce_by_key::<u32>(&dev, n, lengths);
        check_reduce_by_key::<i64>(&dev, n, lengths);
        check_reduce_by_key::<f64>(&dev, n, lengths);
        check_reduce_by_key::<f32>(&dev, n, lengths);
    }
}

#[test]
fn sums_by_key_into_outputs_of_another_length_are_an_error() {
    let dev = device();
    let (keys, values) = ([1u32, 1, 2], [1.0f32, 2.0, 3.0]);
    let (mut unique, mut sums) = ([0u32; 2], [0.0f32; 3]);
    let e = algorithms::reduce_by_key(&dev, &keys, &values, &mut unique, &mut sums).unwrap_err().to_string();
    assert!(e.contains("reduce_by_key") && e.contains("the unique keys' output 2"), "{e}");
}

/// Keys that `sort_keys` sorts like the host does (floats by their total order).
trait SortCheck: algorithms::SortKey + std::fmt::Debug {
    fn from_index(i: usize) -> Self;
    fn host_sort(v: &mut [Self]);
    fn same(a: &[Self], b: &[Self]) -> bool;
}

macro_rules! int_sort_check {
    ($($t:ty),*) => {$(
        impl SortCheck for $t {
            fn from_index(i: usize) -> Self {
                // Spread over the whole range, with repeats.
                ((i as u64 % 3001).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 3) as $t
            }
            fn host_sort(v: &mut [Self]) {
                v.sort();
            }
            fn same(a: &[Self], b: &[Self]) -> bool {
                a == b
            }
        }
    )*};
}
int_sort_check!(u32, i32, u64, i64);

macro_rules! float_sort_check {
    ($($t:ty => $bits:ty),*) => {$(
        impl SortCheck for $t {
            fn from_index(i: usize) -> Self {
                match i % 97 {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => <$t>::NEG_INFINITY,
                    3 => -0.0,
                    4 => 0.0,
                    _ => ((i as u64 % 1013).wrapping_mul(2_654_435_761) as $bits as $t - 1.0e9) / 7.0,
                }
            }
            fn host_sort(v: &mut [Self]) {
                v.sort_by(<$t>::total_cmp);
            }
            fn same(a: &[Self], b: &[Self]) -> bool {
                a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()) && a.len() == b.len()
            }
        }
    )*};
}
float_sort_check!(f32 => u32, f64 => u64);

fn check_sort<T: SortCheck>(dev: &Device) {
    // (The CPU backend runs a tile's barriers a pass as lane switches: sizes stay small
    // there; a GPU also sorts the large ones.) Around the sort's tiles too, of 6,144 keys
    // for 4-byte keys and 3,072 for 8-byte ones: a last tile of one key, a whole last tile, a
    // warp's segment cut short.
    let extra: &[usize] = if dev.is_gpu() {
        &[2, 3071, 3072, 3073, 6143, 6144, 6145, 2 * 6144 + 1000, 100_003]
    } else {
        &[2, 3071, 3072, 3073, 6143, 6144, 6145, 2 * 6144 + 1000]
    };
    for n in sizes(dev).into_iter().chain(extra.iter().copied()) {
        let keys: Vec<T> = (0..n).map(T::from_index).collect();
        let mut want = keys.clone();
        T::host_sort(&mut want);
        let mut host = keys.clone();
        algorithms::sort_keys(dev, &mut host[..]).unwrap();
        assert!(T::same(&host, &want), "{}: n = {n}, host slice", std::any::type_name::<T>());
        let mut buf = DeviceBuffer::from_slice(dev, &keys).unwrap();
        algorithms::sort_keys(dev, &mut buf).unwrap();
        assert!(
            T::same(&buf.to_vec().unwrap(), &want),
            "{}: n = {n}, device buffer",
            std::any::type_name::<T>()
        );
    }
    // A part: the rest of the buffer stays as it was.
    let keys: Vec<T> = (0..5000).map(T::from_index).collect();
    let mut buf = DeviceBuffer::from_slice(&dev.clone(), &keys).unwrap();
    algorithms::sort_keys(dev, &mut buf.part_mut(1000..4000)).unwrap();
    let got = buf.to_vec().unwrap();
    let mut want = keys[1000..4000].to_vec();
    T::host_sort(&mut want);
    assert!(
        T::same(&got[1000..4000], &want)
            && T::same(&got[..1000], &keys[..1000])
            && T::same(&got[4000..], &keys[4000..])
    );
}

#[test]
fn radix_sorts_match_the_host_for_every_key_type() {
    let dev = device();
    check_sort::<u32>(&dev);
    check_sort::<i32>(&dev);
    check_sort::<f32>(&dev);
    check_sort::<u64>(&dev);
    check_sort::<i64>(&dev);
    check_sort::<f64>(&dev);
}

fn check_sort_pairs<K: SortCheck + PartialEq>(dev: &Device) {
    let extra: &[usize] = if dev.is_gpu() { &[100_003] } else { &[] };
    for n in [0usize, 1, 2, 2049, 5000].into_iter().chain(extra.iter().copied()) {
        let keys: Vec<K> = (0..n).map(K::from_index).collect();
        // Values: the original positions, so that the result shows the order of equal keys.
        let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut order: Vec<usize> = (0..n).collect();
        let mut sorted_keys = keys.clone();
        K::host_sort(&mut sorted_keys);
        // A stable sort of the positions by key (equal keys: ascending positions).
        order.sort_by(|&a, &b| {
            let mut pair = [keys[a], keys[b]];
            K::host_sort(&mut pair);
            if K::same(&[keys[a]], &[keys[b]]) {
                a.cmp(&b)
            } else if K::same(&pair[..1], &[keys[a]]) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        let want_values: Vec<f64> = order.iter().map(|&i| i as f64).collect();
        let (mut k, mut v) = (keys.clone(), values.clone());
        algorithms::sort_pairs(dev, &mut k[..], &mut v[..]).unwrap();
        assert!(K::same(&k, &sorted_keys), "{}: n = {n}, keys", std::any::type_name::<K>());
        assert_eq!(
            v,
            want_values,
            "{}: n = {n}, values follow their keys, stably",
            std::any::type_name::<K>()
        );
        let mut dk = DeviceBuffer::from_slice(dev, &keys).unwrap();
        let mut dv = DeviceBuffer::from_slice(dev, &values).unwrap();
        algorithms::sort_pairs(dev, &mut dk, &mut dv).unwrap();
        assert!(
            K::same(&dk.to_vec().unwrap(), &sorted_keys) && dv.to_vec().unwrap() == want_values,
            "buffers, n = {n}"
        );
    }
    // Parts: sorted on the device, the rest of both buffers as it was; keys in a part,
    // values in a whole buffer, and the other way round.
    let keys: Vec<K> = (0..3000).map(K::from_index).collect();
    let values: Vec<u64> = (0..3000).map(|i| i as u64 * 3).collect();
    let mut want = keys[500..2500].to_vec();
    K::host_sort(&mut want);
    let mut dk = DeviceBuffer::from_slice(dev, &keys).unwrap();
    let mut dv = DeviceBuffer::from_slice(dev, &values[500..2500]).unwrap();
    algorithms::sort_pairs(dev, &mut dk.part_mut(500..2500), &mut dv).unwrap();
    let (got, got_values) = (dk.to_vec().unwrap(), dv.to_vec().unwrap());
    assert!(
        K::same(&got[500..2500], &want)
            && K::same(&got[..500], &keys[..500])
            && K::same(&got[2500..], &keys[2500..]),
        "{}: keys in a part",
        std::any::type_name::<K>()
    );
    // Each value went with its key: the key at its old position is the key it sits beside.
    for (i, v) in got_values.iter().enumerate() {
        assert!(K::same(&[keys[*v as usize / 3]], &[got[500 + i]]), "value {v} left its key");
    }
    let mut dk = DeviceBuffer::from_slice(dev, &keys[500..2500]).unwrap();
    let mut dv = DeviceBuffer::from_slice(dev, &values).unwrap();
    algorithms::sort_pairs(dev, &mut dk, &mut dv.part_mut(500..2500)).unwrap();
    let got_values = dv.to_vec().unwrap();
    assert!(K::same(&dk.to_vec().unwrap(), &want), "keys beside values in a part");
    assert_eq!((&got_values[..500], &got_values[2500..]), (&values[..500], &values[2500..]));
    for (i, v) in got_values[500..2500].iter().enumerate() {
        assert!(K::same(&[keys[*v as usize / 3]], &[want[i]]), "value {v} in a part left its key");
    }
    let e = algorithms::sort_pairs(dev, &mut [K::from_index(1); 3][..], &mut [0u32; 2][..])
        .unwrap_err()
        .to_string();
    assert!(e.contains("3 keys and 2 values"), "{e}");
}

#[test]
fn radix_sorts_of_pairs_carry_values_stably() {
    let dev = device();
    check_sort_pairs::<u32>(&dev);
    check_sort_pairs::<i64>(&dev);
    check_sort_pairs::<f32>(&dev);
    check_sort_pairs::<f64>(&dev);
}

/// Values of every type travel with their keys bit for bit (NaN payloads, −0, the high word of
/// an 8-byte value), in device buffers (`u32` values in a buffer are sorted where they are, as
/// their own words) and host slices, past several tiles so that the look-back carries them too.
#[test]
fn values_of_every_type_travel_with_their_keys_bit_for_bit() {
    fn check<V: Element + PartialEq + std::fmt::Debug>(
        dev: &Device,
        value: impl Fn(usize) -> V,
        bits: impl Fn(V) -> u64,
    ) {
        let n = 3 * 6144 + 77;
        // Keys with many repeats, so that stability shows: a key and its original place.
        let keys: Vec<u32> = (0..n).map(|i| (i as u32).wrapping_mul(2_654_435_761) >> 22).collect();
        let values: Vec<V> = (0..n).map(&value).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| keys[i]); // stable
        let want_keys: Vec<u32> = order.iter().map(|&i| keys[i]).collect();
        let want: Vec<u64> = order.iter().map(|&i| bits(values[i])).collect();
        let name = std::any::type_name::<V>();
        let (mut dk, mut dv) =
            (DeviceBuffer::from_slice(dev, &keys).unwrap(), DeviceBuffer::from_slice(dev, &values).unwrap());
        algorithms::sort_pairs(dev, &mut dk, &mut dv).unwrap();
        assert_eq!(dk.to_vec().unwrap(), want_keys, "{name}: keys, buffers");
        assert_eq!(
            dv.to_vec().unwrap().into_iter().map(&bits).collect::<Vec<_>>(),
            want,
            "{name}: values, buffers"
        );
        let (mut k, mut v) = (keys.clone(), values.clone());
        algorithms::sort_pairs(dev, &mut k[..], &mut v[..]).unwrap();
        assert_eq!(k, want_keys, "{name}: keys, host slices");
        assert_eq!(v.into_iter().map(&bits).collect::<Vec<_>>(), want, "{name}: values, host slices");
    }
    let dev = device();
    let mix = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    check::<u32>(&dev, |i| mix(i) as u32, u64::from);
    // `u32` values in a buffer (sorted where they are) beside keys that are not: a host slice,
    // and a part of a buffer whose rest stays as it was.
    let keys: Vec<u32> = (0..5000).map(|i| (mix(i) >> 52) as u32).collect();
    let mut order: Vec<u32> = (0..5000).collect();
    order.sort_by_key(|&i| keys[i as usize]); // stable
    let mut k = keys.clone();
    let mut dv = DeviceBuffer::from_slice(&dev, &(0..5000u32).collect::<Vec<_>>()).unwrap();
    algorithms::sort_pairs(&dev, &mut k[..], &mut dv).unwrap();
    assert_eq!(dv.to_vec().unwrap(), order, "u32 values in a buffer beside keys in a host slice");
    let mut padded = vec![u32::MAX; 100];
    padded.extend(&keys);
    padded.extend([7u32; 50]);
    let mut dk = DeviceBuffer::from_slice(&dev, &padded).unwrap();
    let mut dv = DeviceBuffer::from_slice(&dev, &(0..5000u32).collect::<Vec<_>>()).unwrap();
    algorithms::sort_pairs(&dev, &mut dk.part_mut(100..5100), &mut dv).unwrap();
    let got = dk.to_vec().unwrap();
    assert_eq!(dv.to_vec().unwrap(), order, "u32 values in a buffer beside keys in a part");
    assert!(
        got[..100].iter().all(|&k| k == u32::MAX) && got[5100..].iter().all(|&k| k == 7),
        "the rest of the keys' buffer"
    );
    assert!(got[100..5100].is_sorted(), "the part's keys");
    check::<i32>(&dev, |i| (mix(i) >> 7) as i32, |v| u64::from(v as u32));
    check::<u64>(&dev, mix, |v| v);
    check::<i64>(&dev, |i| mix(i) as i64, |v| v as u64);
    // Floats by their bits: NaNs with payloads, both zeros, infinities, subnormals.
    let f32_bits = |i: usize| match i % 5 {
        0 => 0x7FC0_0000 | (i as u32 & 0x3F_FFFF),
        1 => 0x8000_0000,
        2 => 0xFF80_0000,
        3 => i as u32 & 0x7F_FFFF,
        _ => mix(i) as u32,
    };
    check::<f32>(&dev, |i| f32::from_bits(f32_bits(i)), |v| u64::from(v.to_bits()));
    let f64_bits = |i: usize| match i % 5 {
        0 => 0xFFF8_0000_0000_0000 | (mix(i) & 0xF_FFFF_FFFF),
        1 => 0x8000_0000_0000_0000,
        2 => 0x7FF0_0000_0000_0000,
        3 => mix(i) & 0xF_FFFF_FFFF_FFFF,
        _ => mix(i),
    };
    check::<f64>(&dev, |i| f64::from_bits(f64_bits(i)), f64::to_bits);
}

/// Keys of the highest digit (`u32::MAX` and its neighbours, digit 255 in every pass) with a
/// last tile cut short, inside a warp's segment and between segments: the lanes past the end
/// rank as keys of that digit, after every key, and must move none of them.
#[test]
fn keys_of_the_highest_digit_sort_right_in_a_short_last_tile() {
    let dev = device();
    for n in [1usize, 31, 33, 385, 3072 + 1, 3072 + 40, 6144 + 1, 6144 + 40, 2 * 6144 + 1000] {
        let keys: Vec<u32> =
            (0..n)
                .map(|i| {
                    if i % 3 == 0 {
                        u32::MAX - (i % 7) as u32
                    } else {
                        (i as u32).wrapping_mul(2_654_435_761)
                    }
                })
                .collect();
        let mut want = keys.clone();
        want.sort_unstable();
        let mut got = keys.clone();
        algorithms::sort_keys(&dev, &mut got[..]).unwrap();
        assert_eq!(got, want, "n = {n}, keys");
        // The values are the keys' places, so that the result shows the order of equal keys.
        let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<u32>>());
        algorithms::sort_pairs(&dev, &mut k[..], &mut v[..]).unwrap();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| keys[i as usize]); // stable
        assert_eq!((k, v), (want, order), "n = {n}, pairs");
    }
}
