//! offload-mpi across ranks: every operation on device buffers against the values each rank
//! knows the others hold, and the errors for mismatched lengths and ranks that do not exist.
//! One MPI job per process, so this is one test program (no test harness): `cargo test` runs
//! it as a single rank, `mpirun -n 2` (or more) runs it across ranks (`scripts/test.sh`).

use offload::DeviceBuffer;
use offload_mpi::{Error, Op, Recv, Send};

fn check(what: &str, ok: bool, detail: impl std::fmt::Display) {
    assert!(ok, "{what}: {detail}");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = offload_mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    check(
        "local rank",
        world.local_rank() < world.local_size() && world.local_size() <= size,
        world.local_rank(),
    );
    let dev = world.device()?;
    // Rank r's data: r·100 + i.
    let mine = |r: usize, n: usize| (0..n).map(|i| (r * 100 + i) as f64).collect::<Vec<_>>();
    let (up, down) = ((rank + size - 1) % size, (rank + 1) % size);

    // sendrecv around the ring: each rank gets the one above's data.
    let send = DeviceBuffer::from_slice(&dev, &mine(rank, 10))?;
    let mut recv = DeviceBuffer::<f64>::zeroed(&dev, 10)?;
    world.sendrecv(&send.part(..), down, &mut recv.part_mut(..), up, 3)?;
    check("sendrecv", recv.to_vec()? == mine(up, 10), format!("{:?}", recv.to_vec()?));

    // exchange_while: two messages each way into parts of one buffer, with work in between
    // (a launch-free closure here; its result comes back).
    let mut halo = DeviceBuffer::<f64>::zeroed(&dev, 6)?;
    let (mut from_up, mut from_down) = halo.split_at_mut(3);
    let (a, b) = (send.part(0..3), send.part(7..10));
    let answer = world.exchange_while(
        &[Send { data: &a, to: down, tag: 4 }, Send { data: &b, to: up, tag: 5 }],
        &mut [
            Recv { data: &mut from_up, from: up, tag: 4 },
            Recv { data: &mut from_down, from: down, tag: 5 },
        ],
        || 42,
    )?;
    check("exchange_while result", answer == 42, answer);
    let got = halo.to_vec()?;
    let (u, d) = (mine(up, 10), mine(down, 10));
    check("exchange_while data", got[..3] == u[0..3] && got[3..] == d[7..10], format!("{got:?}"));

    // Reductions: a scalar, and a buffer in place.
    let total = world.all_reduce(rank as f64 + 1.0, Op::Sum)?;
    check("all_reduce sum", total == (size * (size + 1) / 2) as f64, total);
    check("all_reduce max", world.all_reduce(rank as u32, Op::Max)? == size as u32 - 1, "max");
    let mut v = DeviceBuffer::from_slice(&dev, &[rank as i64, -(rank as i64)])?;
    world.all_reduce_in_place(&mut v.part_mut(..), Op::Min)?;
    check("all_reduce_in_place", v.to_vec()? == [0, -(size as i64 - 1)], format!("{:?}", v.to_vec()?));

    // Broadcast from the last rank, and gather on rank 0.
    let mut b = DeviceBuffer::from_slice(&dev, &mine(rank, 4))?;
    world.broadcast(&mut b.part_mut(..), size - 1)?;
    check("broadcast", b.to_vec()? == mine(size - 1, 4), format!("{:?}", b.to_vec()?));
    let gathered = world.gather(&send.part(0..2), 0)?;
    let want: Vec<f64> = (0..size).flat_map(|r| mine(r, 2)).collect();
    check("gather", (rank == 0) == gathered.is_some() && gathered.is_none_or(|g| g == want), "gather");

    // Errors: a receive of another length than what was sent (the message is still taken, so
    // the next one arrives), a rank that does not exist, and collectives of unequal lengths.
    let mut short = DeviceBuffer::<f64>::zeroed(&dev, 9)?;
    match world.sendrecv(&send.part(..), down, &mut short.part_mut(..), up, 6) {
        Err(Error::SizeMismatch { mine: 9, theirs: 10, .. }) => {}
        other => panic!("a short receive must be a SizeMismatch: {other:?}"),
    }
    world.sendrecv(&send.part(..), down, &mut recv.part_mut(..), up, 6)?;
    check("after a mismatch", recv.to_vec()? == mine(up, 10), "the next message arrives");
    match world.send(&send.part(..), size, 1) {
        Err(e @ Error::BadRank { .. }) => {
            check("bad rank", e.to_string().contains(&format!("not in a communicator of {size} ranks")), e)
        }
        other => panic!("a rank past the end must be an error: {other:?}"),
    }
    if size > 1 {
        let uneven = DeviceBuffer::from_slice(&dev, &mine(rank, 1 + rank))?;
        match world.gather(&uneven.part(..), 0) {
            Err(Error::LengthsDiffer { smallest: 1, largest, .. }) => {
                check("unequal gather", largest == size, largest)
            }
            other => panic!("a gather of unequal lengths must fail on every rank: {other:?}"),
        }
    }
    world.barrier();
    if rank == 0 {
        println!(
            "offload-mpi: every check passed on {size} rank(s) ({dev}; {})",
            mpi.library_version().lines().next().unwrap_or("")
        );
    }
    Ok(())
}
