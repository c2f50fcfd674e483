//! Device buffers: data that stays on the device across launches, used in place by every
//! parameter kind; launches on buffers only queue, and reading back waits for them.

use offload::{Device, DeviceBuffer, Error, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y = a·x + y`.
    /// Row 0 of a table from rows 1 and 2: `head[i] = rest[i] + 2·rest[i + n]`.
    #[kernel]
    pub fn from_rows(n: usize, rest: &[f64], mut head: Region<f64>) {
        let i = head.index();
        if let Some(h) = head.mine() {
            *h = rest[i] + 2.0 * rest[i + n];
        }
    }

    /// `out[zones[t]] = 2·x[zones[t]]` for every position `t` of a checked zone list.
    #[kernel]
    pub fn zones(x: &[f64], mut out: Scatter<f64>) {
        if let Some(i) = out.index()
            && let Some(o) = out.mine()
        {
            *o = 2.0 * x[i];
        }
    }

    #[kernel]
    pub fn axpy(a: f64, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }

    /// `out[x, y, z] = x + 10·y + 100·z`.
    #[kernel]
    pub fn fill3(mut out: Region3<u32>) {
        let [x, y, z] = out.index();
        if let Some(o) = out.mine() {
            *o = (x + 10 * y + 100 * z) as u32;
        }
    }
}

fn device() -> Device {
    Device::default().expect("a device")
}

#[test]
fn chained_launches_on_buffers_match_the_host() {
    let dev = device();
    let n = 100_003;
    let x: Vec<f64> = (0..n).map(|i| (i % 101) as f64).collect();
    let y0: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 0.5).collect();
    let dx = DeviceBuffer::from_slice(&dev, &x).unwrap();
    let mut dy = DeviceBuffer::from_slice(&dev, &y0).unwrap();
    for _ in 0..10 {
        gpu::axpy::launch(&dev, n, 0.25, &dx, &mut dy).unwrap();
    }
    let y = dy.to_vec().unwrap();
    for i in 0..n {
        let mut want = y0[i];
        for _ in 0..10 {
            want += 0.25 * x[i];
        }
        assert_eq!(y[i], want, "element {i}");
    }
    dev.sync().unwrap();
}

#[test]
fn buffers_and_host_slices_mix_in_one_launch() {
    let dev = device();
    let x = vec![2.0f64; 1000];
    let mut dy = DeviceBuffer::<f64>::zeroed(&dev, 1000).unwrap();
    gpu::axpy::launch(&dev, 1000, 3.0, &x, &mut dy).unwrap();
    let mut y = vec![0.0; 1000];
    dy.copy_to(&mut y).unwrap();
    assert!(y.iter().all(|v| *v == 6.0));
    dy.copy_from(&vec![1.0; 1000]).unwrap();
    let dx = DeviceBuffer::from_slice(&dev, &x).unwrap();
    let mut host_y = vec![1.0f64; 1000];
    gpu::axpy::launch(&dev, 1000, 1.0, &dx, &mut host_y).unwrap();
    assert!(host_y.iter().all(|v| *v == 3.0));
}

#[test]
fn region3_on_a_buffer() {
    let dev = device();
    let [nx, ny, nz] = [10usize, 10, 5];
    let mut out = DeviceBuffer::<u32>::zeroed(&dev, nx * ny * nz).unwrap();
    gpu::fill3::launch(&dev, Grid::threads_xyz(nx, ny, nz), (&mut out, [nx, ny, nz])).unwrap();
    let out = out.to_vec().unwrap();
    assert!(out.iter().enumerate().all(|(i, v)| *v == i as u32), "{out:?}");
}

#[test]
fn lengths_must_match_when_copying() {
    let dev = device();
    let buf = DeviceBuffer::from_slice(&dev, &[1u32, 2, 3]).unwrap();
    let mut two = [0u32; 2];
    let e = buf.copy_to(&mut two).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { buffer: 3, host: 2 }), "{e}");
    assert_eq!(buf.to_vec().unwrap(), [1, 2, 3]);
    assert_eq!(buf.len(), 3);
}

#[test]
fn a_buffer_of_another_device_is_refused() {
    let (a, b) = (Device::cpu(), Device::cpu());
    let x = DeviceBuffer::from_slice(&a, &[1.0f64; 4]).unwrap();
    let mut y = vec![0.0f64; 4];
    let e = gpu::axpy::launch(&b, 4, 1.0, &x, &mut y).unwrap_err();
    assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
    assert!(e.to_string().contains("gpu::axpy"), "{e}");
    // A clone shares the device and its queue, so its buffers are welcome.
    gpu::axpy::launch(&a.clone(), 4, 1.0, &x, &mut y).unwrap();
    assert_eq!(y, [1.0; 4]);
}

#[test]
fn several_devices_in_one_process() {
    // Every GPU by index (none here without one) and the CPU backend, side by side.
    let mut devices: Vec<Device> = (0..Device::gpu_count()).map(|i| Device::gpu(i).unwrap()).collect();
    devices.push(Device::cpu());
    let x = [2.0f64; 8];
    let buffers: Vec<DeviceBuffer<f64>> =
        devices.iter().map(|d| DeviceBuffer::from_slice(d, &x).unwrap()).collect();
    for (i, (dev, buf)) in devices.iter().zip(&buffers).enumerate() {
        let mut y = vec![1.0f64; 8];
        gpu::axpy::launch(dev, 8, 0.5, buf, &mut y).unwrap();
        assert_eq!(y, [2.0; 8], "device {i}: {dev}");
        // Another device's buffer is refused, naming both devices.
        let other = &buffers[(i + 1) % buffers.len()];
        if buffers.len() > 1 {
            let e = gpu::axpy::launch(dev, 8, 0.5, other, &mut y).unwrap_err();
            assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
        }
    }
    let e = Device::gpu(Device::gpu_count()).unwrap_err().to_string();
    assert!(e.contains("GPU") || e.contains("liboffload"), "{e}");
}

#[test]
fn one_launch_writes_one_part_of_a_buffer_and_reads_another() {
    let dev = Device::default().unwrap();
    let n = 1000;
    let table: Vec<f64> = (0..3 * n).map(|i| i as f64).collect();
    let mut buf = DeviceBuffer::from_slice(&dev, &table).unwrap();
    let (mut head, rest) = buf.split_at_mut(n);
    gpu::from_rows::launch(&dev, n, n, &rest, &mut head).unwrap();
    let out = buf.to_vec().unwrap();
    for i in 0..n {
        assert_eq!(out[i], table[n + i] + 2.0 * table[2 * n + i], "row 0, element {i}");
    }
    assert_eq!(out[n..], table[n..], "rows 1 and 2 are untouched");
    // A read-only part as an input, and a writable part as a region.
    let mut y = DeviceBuffer::<f64>::zeroed(&dev, 2 * n).unwrap();
    let mut second = y.part_mut(n..);
    gpu::axpy::launch(&dev, n, 1.0, &buf.part(2 * n..), &mut second).unwrap();
    let y = y.to_vec().unwrap();
    assert!(y[..n].iter().all(|&v| v == 0.0));
    assert_eq!(y[n..], table[2 * n..]);
}

#[test]
#[should_panic(expected = "out of bounds")]
fn a_part_past_the_end_panics_like_slicing() {
    let buf = DeviceBuffer::<f64>::zeroed(&Device::cpu(), 4).unwrap();
    let _ = buf.part(2..5);
}

#[test]
fn writes_through_a_checked_index_list() {
    let dev = Device::default().unwrap();
    let n = 1000;
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    // Every third element, in a scrambled order.
    let mut zones: Vec<i64> = (0..n as i64).step_by(3).collect();
    zones.reverse();
    zones.swap(0, 7);
    let list = offload::UniqueIndices::new(&dev, &zones, n).unwrap();
    let mut out = vec![-1.0f64; n];
    gpu::zones::launch(&dev, list.len(), &x, (&mut out, &list)).unwrap();
    for (i, &o) in out.iter().enumerate() {
        assert_eq!(o, if i % 3 == 0 { 2.0 * i as f64 } else { -1.0 }, "out[{i}]");
    }
    // The same on a device buffer, and the list checked against the array's length.
    let mut buf = DeviceBuffer::from_slice(&dev, &vec![0.0f64; n]).unwrap();
    gpu::zones::launch(&dev, list.len(), &x, (&mut buf, &list)).unwrap();
    assert_eq!(buf.to_vec().unwrap()[999], 2.0 * 999.0);
    let mut short = vec![0.0f64; n - 1];
    let e = gpu::zones::launch(&dev, list.len(), &x, (&mut short, &list)).unwrap_err();
    assert!(e.to_string().contains("checked for arrays of 1000 elements"), "{e}");
}

#[test]
fn index_lists_with_repeats_or_out_of_range_entries_are_refused() {
    let dev = Device::cpu();
    let e = offload::UniqueIndices::new(&dev, &[0, 5, 2, 5], 8).unwrap_err().to_string();
    assert!(e.contains("position 3") && e.contains("index 5 appears twice"), "{e}");
    let e = offload::UniqueIndices::new(&dev, &[0, 8], 8).unwrap_err().to_string();
    assert!(e.contains("not below the bound 8"), "{e}");
    let e = offload::UniqueIndices::new(&dev, &[-1], 8).unwrap_err().to_string();
    assert!(e.contains("negative"), "{e}");
}

#[test]
fn parts_copy_in_and_out_in_place_and_check_their_lengths() {
    let dev = offload::Device::default().expect("a device");
    let mut buf = offload::DeviceBuffer::from_slice(&dev, &(0..10u32).collect::<Vec<_>>()).unwrap();
    assert_eq!(buf.part(3..6).to_vec().unwrap(), [3, 4, 5]);
    buf.part_mut(7..).copy_from(&[70, 80, 90]).unwrap();
    let mut row = [0u32; 2];
    buf.part_mut(8..10).copy_to(&mut row).unwrap();
    assert_eq!(row, [80, 90]);
    assert_eq!(buf.to_vec().unwrap(), [0, 1, 2, 3, 4, 5, 6, 70, 80, 90], "the rest stays");
    let e = buf.part_mut(0..2).copy_from(&[1, 2, 3]).unwrap_err().to_string();
    assert!(e.contains("length mismatch"), "{e}");
    assert!(buf.part(0..4).copy_to(&mut row).is_err());
    assert!(buf.part(5..5).to_vec().unwrap().is_empty());
}
