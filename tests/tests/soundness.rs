//! Run-time side of the soundness argument (`docs/soundness.md`): every impossible size is an
//! `Err`, never a wrapped size, an abort or memory corruption; plain data with padding crosses
//! to the device as bytes; the CPU backend enforces the block's phases at run time too. On the
//! CPU backend here; `scripts/gpu check` runs the same binary on the GPU, and the queue and
//! allocation checks of the GPU host path also run against the stand-in liboffload
//! (`null_liboffload.rs`).

use gpu::Padded;
use offload::{Device, DeviceBuffer, Grid, PinnedBuffer, UniqueIndices};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[derive(Clone, Copy, Debug, PartialEq, KernelScalar)]
    #[repr(C)]
    pub struct Padded {
        /// Three bytes of padding follow: they travel to the device and back as bytes, and
        /// are never read as numbers.
        pub flag: u8,
        pub value: u32,
        pub scale: f64,
    }

    #[kernel]
    pub fn weigh(p: Padded, items: &[Padded], mut out: Region<f64>) {
        let i = out.index();
        if let Some(o) = out.mine() {
            let it = items[i];
            *o = if it.flag == 1 { f64::from(it.value) * it.scale * p.scale } else { 0.0 };
        }
    }

    /// One `[u8; 4096]` slot per thread of the block in shared memory.
    #[kernel]
    pub fn wide_slots(slots: Shared<[u8; 4096]>, block: Block) {
        slots.write(&block, [1; 4096]);
    }

    #[kernel]
    pub fn fill(v: u32, mut y: Region<u32>) {
        if let Some(o) = y.mine() {
            *o = v;
        }
    }
}

fn dev() -> Device {
    Device::default().expect("a device")
}

#[test]
fn a_buffer_whose_byte_size_wraps_is_an_error() {
    // (2^61 + 1) · 8 bytes wraps to 8 in 64-bit arithmetic.
    let e = DeviceBuffer::<u64>::zeroed(&dev(), (1 << 61) + 1).unwrap_err().to_string();
    assert!(e.contains("cannot allocate") && e.contains("address space"), "{e}");
    let e = PinnedBuffer::<u64>::zeroed(&dev(), usize::MAX / 4).unwrap_err().to_string();
    assert!(e.contains("cannot allocate"), "{e}");
}

#[test]
fn more_memory_than_exists_is_an_error_not_an_abort() {
    // 16 TiB: more than the host or any GPU has.
    let e = DeviceBuffer::<u8>::zeroed(&dev(), 16 << 40).unwrap_err().to_string();
    assert!(e.contains("cannot allocate"), "{e}");
    let e = PinnedBuffer::<u8>::zeroed(&dev(), 16 << 40).unwrap_err().to_string();
    assert!(e.contains("cannot allocate"), "{e}");
}

#[test]
fn shared_memory_beyond_a_block_is_an_error() {
    // 1024 threads × 4 KiB = 4 MiB of shared memory per block.
    let e = gpu::wide_slots::launch(&dev(), Grid::threads(1024).block_size(1024)).unwrap_err().to_string();
    assert!(e.contains("wide_slots") && e.contains("shared memory"), "{e}");
    // 32 threads × 4 KiB = 128 KiB fits the limit (and the CPU backend), so it runs there.
    if !dev().is_gpu() {
        gpu::wide_slots::launch(&dev(), Grid::threads(32).block_size(32)).unwrap();
    }
}

#[test]
fn plain_data_with_padding_round_trips() {
    let dev = dev();
    let items: Vec<Padded> = (0..100).map(|i| Padded { flag: (i % 2) as u8, value: i, scale: 0.5 }).collect();
    let mut out = vec![0.0; items.len()];
    let p = Padded { flag: 0, value: 0, scale: 4.0 };
    gpu::weigh::launch(&dev, items.len(), p, &items, &mut out).unwrap();
    for (i, o) in out.iter().enumerate() {
        assert_eq!(*o, if i % 2 == 1 { i as f64 * 2.0 } else { 0.0 }, "item {i}");
    }
    let buf = DeviceBuffer::from_slice(&dev, &items).unwrap();
    assert_eq!(buf.to_vec().unwrap(), items);
}

#[test]
fn an_index_list_with_a_huge_bound_is_checked_in_proportion_to_its_length() {
    let list = UniqueIndices::new(&dev(), &[3, usize::MAX as i64 / 2, 7], usize::MAX).unwrap();
    assert_eq!(list.len(), 3);
    let e = UniqueIndices::new(&dev(), &[9, 4, 9, 4], usize::MAX).unwrap_err().to_string();
    assert!(e.contains("position 2") && e.contains("index 9 appears twice"), "{e}");
}

#[test]
fn a_part_whose_range_end_overflows_panics_instead_of_wrapping() {
    let mut buf = DeviceBuffer::<u32>::zeroed(&dev(), 8).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = buf.part_mut(..=usize::MAX);
    }));
    let message = caught.unwrap_err();
    let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("out of bounds"), "{text}");
}

#[test]
fn every_handle_to_a_device_shares_its_buffers_and_queue() {
    let a = dev();
    let b = if a.is_gpu() { Device::gpu(0).unwrap() } else { a.clone() };
    let mut y = DeviceBuffer::<u32>::zeroed(&a, 64).unwrap();
    gpu::fill::launch(&b, 64, 7, &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![7; 64]);
}
