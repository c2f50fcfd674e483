// While a queued copy uses pinned host memory, safe code can neither write nor free it (and,
// for a copy to the host, not read it) until the copy has been waited for. The same holds
// for host data staged in a launch scope, until the scope ends.
use offload::{Device, DeviceBuffer, PinnedBuffer};

fn main() -> offload::Result<()> {
    let dev = Device::cpu();
    let mut pinned = PinnedBuffer::<f32>::zeroed(&dev, 8)?;
    let mut buffer = DeviceBuffer::<f32>::zeroed(&dev, 8)?;

    let upload = buffer.copy_from_async(&pinned)?;
    pinned[0] = 1.0;
    drop(pinned);
    upload.wait()?;

    let mut back = PinnedBuffer::<f32>::zeroed(&dev, 8)?;
    let download = buffer.copy_to_async(&mut back)?;
    let first = back[0];
    download.wait()?;
    let _ = first;

    let mut y = vec![0.0f32; 8];
    dev.scope(|s| {
        let staged = s.in_out(&mut y)?;
        y[0] = 2.0;
        drop(staged);
        Ok(())
    })?;
    Ok(())
}
