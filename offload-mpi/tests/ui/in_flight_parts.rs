// A part that is being received, or sent, cannot be touched by the work that runs while the
// messages are in flight: the exchange borrows it (exclusively for a receive).
use offload::DeviceBuffer;
use offload_mpi::{Recv, Send};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = offload_mpi::init()?;
    let world = mpi.world();
    let dev = world.device()?;
    let mut grid = DeviceBuffer::<f64>::zeroed(&dev, 8)?;
    let mut edge = DeviceBuffer::<f64>::zeroed(&dev, 4)?;
    let row = edge.part(..);
    let mut ghost = grid.part_mut(0..4);
    world.exchange_while(
        &[Send { data: &row, to: 0, tag: 1 }],
        &mut [Recv { data: &mut ghost, from: 0, tag: 1 }],
        || grid.to_vec(), // the buffer being received into
    )??;
    let mut ghost = grid.part_mut(0..4);
    world.exchange_while(
        &[Send { data: &row, to: 0, tag: 2 }],
        &mut [Recv { data: &mut ghost, from: 0, tag: 2 }],
        || edge.copy_from(&[1.0; 4]), // the buffer being sent
    )??;
    Ok(())
}
