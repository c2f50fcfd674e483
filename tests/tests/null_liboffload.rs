//! The runtime's GPU host path against `tests/null-liboffload`, a stand-in for liboffload that
//! runs no kernels and keeps "device" memory in host memory: what the runtime does around a
//! kernel (argument packing, the small-argument arenas, copies in and out, device buffers,
//! the transfer report) without a GPU. No kernel runs, so every output must come back exactly
//! as it went in.
//!
//! Ignored in a plain `cargo test` (they need the stand-in); `scripts/lib/null-backend-tests.sh`
//! builds it and runs them with `--ignored`, in CI. Own binary: the report is process-wide.

use offload::{Device, DeviceBuffer, reset_transfer_report, set_reporting, transfer_report};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn scale(k: f32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = k * x[i];
        }
    }

    #[kernel]
    pub fn lanes(w: Warp, mut out: Region<u32>) {
        if let Some(o) = out.mine() {
            *o = w.lane();
        }
    }

    #[kernel]
    pub fn total(x: &[f64], mut sum: Sum<f64>) {
        let i = global_linear_id();
        if i < x.len() {
            sum.add(x[i]);
        }
    }

    #[kernel]
    pub fn lowest(x: &[f64], mut low: MinLoc<f64>) {
        let i = global_linear_id();
        if i < x.len() {
            low.min_at(x[i], i);
        }
    }
}

fn null_device() -> Device {
    let dev = Device::default().expect("a device");
    assert!(
        dev.is_gpu(),
        "not on the stand-in's GPU but {dev}: run through scripts/lib/null-backend-tests.sh"
    );
    assert!(dev.name().contains("null liboffload"), "not the stand-in's device: {dev}");
    dev
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn host_data_comes_back_as_it_went_in_through_the_arenas_and_through_own_allocations() {
    let dev = null_device();
    set_reporting(true);
    // Below and above the 64 KiB limit of gathered small arguments.
    for n in [1000usize, 100_000] {
        reset_transfer_report();
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut y: Vec<f32> = (0..n).map(|i| -(i as f32)).collect();
        let want = y.clone();
        gpu::scale::launch(&dev, n, 2.0, &x, &mut y).unwrap();
        assert_eq!(y, want, "n = {n}: no kernel ran, so y must be what was copied in");
        let r = transfer_report();
        let k = &r.kernels["gpu::scale"];
        let bytes = (n * 4) as u64;
        assert_eq!(k.launches, 1);
        assert_eq!(k.queued, 0, "a launch on host data waits for its copies back");
        // `OFFLOAD_GATHER=0` (the script's second run) gives every argument its own copy.
        let gather = std::env::var("OFFLOAD_GATHER").map_or(true, |v| v != "0");
        if gather && n * 4 <= 64 * 1024 {
            assert_eq!(
                (k.host_to_device.count, k.host_to_device.bytes),
                (1, 2 * bytes),
                "gathered: one copy in"
            );
        } else {
            assert_eq!(
                (k.host_to_device.count, k.host_to_device.bytes),
                (2, 2 * bytes),
                "one copy per array"
            );
        }
        assert_eq!((k.device_to_host.count, k.device_to_host.bytes), (1, bytes), "y comes back");
    }
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn a_reduction_result_keeps_its_initial_value_when_no_kernel_adds_to_it() {
    let dev = null_device();
    let x = vec![1.0f64; 5000];
    let mut sum = 5.0;
    gpu::total::launch(&dev, x.len(), &x, &mut sum).unwrap();
    assert_eq!(sum, 5.0);
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn a_sum_of_many_blocks_travels_as_eight_slots_and_a_minimum_as_one() {
    let dev = null_device();
    set_reporting(true);
    let gather = std::env::var("OFFLOAD_GATHER").map_or(true, |v| v != "0");
    // (elements, result bytes each way): one block keeps one slot; 20 blocks get eight slots
    // of 128 bytes, gathered (with gathering off, one 8-byte result of its own).
    for (n, bytes) in [(100usize, 8u64), (5000, if gather { 8 * 128 } else { 8 })] {
        reset_transfer_report();
        let x = vec![1.0f64; n];
        let mut sum = 5.0;
        gpu::total::launch(&dev, n, &x, &mut sum).unwrap();
        assert_eq!(sum, 5.0, "n = {n}: the slots fold back to the start value");
        let k = &transfer_report().kernels["gpu::total"];
        let x_in = if gather && n * 8 <= 64 * 1024 { (n * 8) as u64 } else { 0 };
        assert_eq!(k.device_to_host.bytes, bytes, "n = {n}: the result's slots come back");
        if gather {
            assert_eq!(k.host_to_device.bytes, x_in + bytes, "n = {n}: x and the slots go in");
        }
    }
    // With its input already on the device, a sum's slots are all that would travel in: they
    // are zeroed on the device instead of copied (the host adds its value after the copy back).
    let x = DeviceBuffer::from_slice(&dev, &[1.0f64; 5000]).unwrap();
    reset_transfer_report();
    let mut sum = 5.0;
    gpu::total::launch(&dev, 5000, &x, &mut sum).unwrap();
    assert_eq!(sum, 5.0, "the zeroed slots fold back to the start value");
    let k = &transfer_report().kernels["gpu::total"];
    let slots_in = if gather { (0, 0) } else { (1, 8) };
    assert_eq!((k.host_to_device.count, k.host_to_device.bytes), slots_in, "no copy in when gathered");
    assert_eq!(k.device_to_host.bytes, if gather { 8 * 128 } else { 8 }, "the slots come back");
    reset_transfer_report();
    let x = vec![1.0f64; 5000];
    let mut low = offload::Loc::new(2.0, 7);
    gpu::lowest::launch(&dev, x.len(), &x, &mut low).unwrap();
    assert_eq!((low.value, low.index), (2.0, 7));
    let k = &transfer_report().kernels["gpu::lowest"];
    assert_eq!(k.device_to_host.bytes, std::mem::size_of::<offload::Loc<f64>>() as u64, "one slot");
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn a_reduction_into_device_memory_copies_nothing_and_only_queues() {
    let dev = null_device();
    set_reporting(true);
    let x = DeviceBuffer::from_slice(&dev, &[1.0f64; 5000]).unwrap();
    let mut sum = DeviceBuffer::from_slice(&dev, &[5.0f64]).unwrap();
    reset_transfer_report();
    for _ in 0..3 {
        gpu::total::launch(&dev, 5000, &x, &mut sum).unwrap();
    }
    let k = &transfer_report().kernels["gpu::total"];
    assert_eq!((k.host_to_device.count, k.device_to_host.count), (0, 0), "nothing travels");
    assert_eq!(k.launches, 3);
    assert_eq!(k.queued, 3, "every launch only queues");
    // The stand-in runs no kernel: the element keeps its value, and reading it waits.
    assert_eq!(sum.to_vec().unwrap(), [5.0]);
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn device_buffers_round_trip_and_launches_on_them_only_queue() {
    let dev = null_device();
    let host: Vec<f32> = (0..70_000).map(|i| i as f32 * 0.5).collect();
    let x = DeviceBuffer::from_slice(&dev, &host).unwrap();
    assert_eq!(x.to_vec().unwrap(), host);
    let mut y = DeviceBuffer::<f32>::zeroed(&dev, host.len()).unwrap();
    assert!(y.to_vec().unwrap().iter().all(|v| *v == 0.0));
    for _ in 0..1000 {
        gpu::scale::launch(&dev, host.len(), 3.0, &x, &mut y).unwrap();
    }
    dev.sync().unwrap();
    assert!(y.to_vec().unwrap().iter().all(|v| *v == 0.0), "no kernel ran");
    // An empty grid launches nothing and succeeds.
    gpu::scale::launch(&dev, 0, 3.0, &x, &mut y).unwrap();
}

/// With `NULL_OFFLOAD_DEFER=1` a queued copy happens only when its queue is waited for. A
/// copy from pinned memory queued through one handle of the GPU, whose `Pending` is leaked,
/// must still finish before the host may write the pinned memory through the other handle's
/// buffer: the handles share the queue, and the pinned buffer waits for the device that holds
/// the copy.
#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn a_leaked_pending_copy_finishes_before_the_host_writes_its_source() {
    let (a, b) = (null_device(), Device::gpu(0).unwrap());
    let mut pinned = offload::PinnedBuffer::from_slice(&a, &[1u32; 4096]).unwrap();
    let mut buffer = DeviceBuffer::<u32>::zeroed(&b, 4096).unwrap();
    std::mem::forget(buffer.copy_from_async(&pinned).unwrap());
    pinned.fill(99); // waits for the copy first
    assert_eq!(buffer.to_vec().unwrap(), vec![1; 4096], "the copy must read the data before the write");
    // And the other way: a leaked copy into pinned memory lands before the host reads it.
    let source = DeviceBuffer::from_slice(&a, &[5u32; 4096]).unwrap();
    std::mem::forget(source.copy_to_async(&mut pinned).unwrap());
    assert!(pinned.iter().all(|&v| v == 5));
}

/// A kernel that takes a `Warp` runs its whole-warps entry point exactly when a block's threads
/// are a multiple of the warp size: the stand-in logs each entry point the runtime looks up
/// (run in a child process, with the log on).
#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn blocks_of_whole_warps_run_the_whole_warps_entry_point() {
    const NAME: &str = "blocks_of_whole_warps_run_the_whole_warps_entry_point";
    if std::env::var_os("NULL_OFFLOAD_TEST_CHILD").is_some() {
        let dev = null_device();
        // A partial warp, whole warps, whole warps again (the handle already looked up), and
        // a two-dimensional block of whole warps.
        let line = |block| offload::Grid::threads(512).block_size(block);
        for grid in [line(100), line(128), line(256), offload::Grid::threads_xy(32, 16).block_xy(16, 4)] {
            let mut out = vec![0u32; 512];
            gpu::lanes::launch(&dev, grid, &mut out).unwrap();
        }
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env("NULL_OFFLOAD_TEST_CHILD", "1")
        .env("NULL_OFFLOAD_LOG", "1")
        .args(["--ignored", "--exact", NAME])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}\n{log}", String::from_utf8_lossy(&out.stdout));
    let looked_up: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("null-liboffload: olGetSymbol "))
        .filter(|s| s.contains("_lanes"))
        .collect();
    // Each entry point once (the handles are cached), the general one first.
    assert_eq!(looked_up.len(), 2, "{log}");
    assert!(!looked_up[0].ends_with("__whole_warps"), "{looked_up:?}");
    assert_eq!(looked_up[1], format!("{}__whole_warps", looked_up[0]), "{looked_up:?}");
}
