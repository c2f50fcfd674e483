//! MPI for cargo-offload programs, on the `mpi` crate (rsmpi) and the system's MPI library:
//! one device per rank, and device buffers (or parts of them) sent, received, reduced,
//! broadcast and gathered across ranks.
//!
//! ```no_run
//! let mpi = offload_mpi::init()?;
//! let world = mpi.world();
//! let dev = world.device()?; // this rank's GPU, else the CPU backend
//! let (up, down) = ((world.rank() + world.size() - 1) % world.size(), (world.rank() + 1) % world.size());
//! // A ghost row, two rows of this rank's, a ghost row.
//! let n = 1024;
//! let mut u = offload::DeviceBuffer::<f64>::zeroed(&dev, 4 * n)?;
//! let (mut above, mut rest) = u.split_at_mut(n);
//! let (mine, mut below) = rest.split_at_mut(2 * n);
//! // The first row goes up and the ghost row below comes from below; the other way round next.
//! world.sendrecv(&mine.part(..n), up, &mut below, down, 1)?;
//! world.sendrecv(&mine.part(n..), down, &mut above, up, 2)?;
//! let residual = world.all_reduce(0.5f64, offload_mpi::Op::Sum)?;
//! # Ok::<(), offload_mpi::Error>(())
//! ```
//!
//! **Data path.** Device data is staged through host memory — pinned memory for GPU devices,
//! so that the copies run at the bus's speed — and the MPI library moves host memory. MPI
//! libraries built with CUDA support could take device pointers directly; this crate does not
//! use that yet (the machines it was measured on have none).
//!
//! **Overlap.** Launches on device buffers return once queued, so a rank that launches its
//! interior kernel and then exchanges halos overlaps the two: the GPU computes while the host
//! talks to the other ranks. [`Comm::exchange_while`] posts its messages, runs the caller's
//! work (such a launch), then waits: the messages travel while the kernel runs.
//!
//! **Ordering.** Copies out of a device buffer wait for the work queued on it before (so a
//! send sees what the kernels before it wrote), and copies into one are queued before the
//! launches after them; the borrow checker keeps a part that is being sent or received from
//! being used meanwhile.
//!
//! **Errors.** Lengths are checked against what the other side sent ([`Error::SizeMismatch`]),
//! a rank outside the communicator is an error, and a missing GPU falls back to the CPU
//! backend, said on stderr. MPI itself aborts the job on its own errors (its default handler).

use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use offload::{BufferPart, BufferPartMut, Device, KernelScalar, PinnedBuffer};
use std::any::{Any, TypeId};
use std::cell::RefCell;

pub use mpi;

/// Element types that travel between ranks: the runtime's scalars that MPI has a datatype for.
pub trait Elem: KernelScalar + Equivalence + Default {}
impl<T: KernelScalar + Equivalence + Default> Elem for T {}

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// MPI could not be initialized (it already was, or the library failed).
    #[error("cannot initialize MPI: {0}")]
    Init(String),
    /// A device operation failed.
    #[error(transparent)]
    Offload(#[from] offload::Error),
    /// The two sides of an operation disagree on how many elements it moves.
    #[error("{op}: rank {rank} expects {mine} elements, but rank {peer} has {theirs}")]
    SizeMismatch { op: &'static str, rank: usize, peer: usize, mine: usize, theirs: usize },
    /// A collective whose ranks pass parts of different lengths.
    #[error(
        "{op}: the ranks pass {smallest} to {largest} elements (rank {rank}: {mine}); every rank must pass the same number"
    )]
    LengthsDiffer { op: &'static str, rank: usize, mine: usize, smallest: usize, largest: usize },
    /// A rank that the communicator does not have.
    #[error("{op}: rank {rank} is not in a communicator of {size} ranks")]
    BadRank { op: &'static str, rank: usize, size: usize },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A reduction of [`Comm::all_reduce`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Sum,
    Min,
    Max,
}

impl Op {
    fn system(self) -> SystemOperation {
        match self {
            Op::Sum => SystemOperation::sum(),
            Op::Min => SystemOperation::min(),
            Op::Max => SystemOperation::max(),
        }
    }
}

/// MPI, initialized: finalized when dropped (at the end of `main`).
pub struct Mpi {
    // (Fields drop in order: the communicators are freed before MPI is finalized.)
    world: Comm,
    _universe: mpi::environment::Universe,
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi").field("world", &self.world).finish()
    }
}

/// Initializes MPI (once per process; the main thread makes MPI calls).
pub fn init() -> Result<Mpi> {
    if mpi::environment::is_initialized() {
        return Err(Error::Init("MPI is initialized already (once per process)".into()));
    }
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| Error::Init("MPI_Init_thread failed".into()))?;
    let world = Comm::new(universe.world());
    Ok(Mpi { world, _universe: universe })
}

impl Mpi {
    /// All ranks of the job.
    pub fn world(&self) -> &Comm {
        &self.world
    }

    /// The MPI library's version string.
    pub fn library_version(&self) -> String {
        let v = mpi::environment::library_version().unwrap_or_else(|_| "unknown".into());
        v.trim_end_matches(char::from(0)).trim().to_owned()
    }
}

/// A communicator, with the ranks on this node known (for choosing GPUs) and staging memory
/// kept between calls.
pub struct Comm {
    comm: SimpleCommunicator,
    node: SimpleCommunicator,
    /// Pinned staging buffers by element type and length, reused from call to call.
    staging: RefCell<StagingPool>,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("local_rank", &self.local_rank())
            .finish()
    }
}

/// `PinnedBuffer<T>`s (as `Any`) kept for reuse, with their device, `T` and length.
type StagingPool = Vec<(Device, TypeId, usize, Box<dyn Any>)>;

/// Host memory a transfer goes through: pinned for a GPU, plain for the CPU backend.
enum Stage<T: Elem> {
    Host(Vec<T>),
    Pinned(PinnedBuffer<T>),
}

impl<T: Elem> std::ops::Deref for Stage<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Stage::Host(v) => v,
            Stage::Pinned(p) => p,
        }
    }
}

impl<T: Elem> std::ops::DerefMut for Stage<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Stage::Host(v) => v,
            Stage::Pinned(p) => p,
        }
    }
}

impl Comm {
    fn new(comm: SimpleCommunicator) -> Comm {
        let node = comm.split_shared(comm.rank());
        Comm { comm, node, staging: RefCell::new(Vec::new()) }
    }

    /// This rank's number, `0..size()`.
    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.comm.size() as usize
    }

    /// This rank's number among the ranks on its node (shared memory), `0..local_size()`.
    pub fn local_rank(&self) -> usize {
        self.node.rank() as usize
    }

    /// Number of ranks on this node.
    pub fn local_size(&self) -> usize {
        self.node.size() as usize
    }

    /// The underlying rsmpi communicator, for what this crate does not wrap.
    pub fn raw(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// This rank's device: GPU `local_rank() % gpus` of its node, so that ranks spread over
    /// the node's GPUs (several share one when there are more ranks than GPUs); the CPU
    /// backend when there is no usable GPU (said on stderr, with the reason) or when
    /// `OFFLOAD_DEVICE=cpu`.
    pub fn device(&self) -> Result<Device> {
        let gpus = Device::gpu_count();
        let forced_cpu = std::env::var("OFFLOAD_DEVICE").is_ok_and(|v| v == "cpu");
        if gpus == 0 || forced_cpu {
            return Ok(Device::default()?);
        }
        let index = self.local_rank() % gpus;
        match Device::gpu(index) {
            Ok(dev) => Ok(dev),
            Err(e) if std::env::var("OFFLOAD_DEVICE").is_ok_and(|v| v == "gpu") => Err(e.into()),
            Err(reason) => {
                eprintln!(
                    "offload-mpi: rank {} has no usable GPU {index}, running kernels on the CPU emulation backend\n  reason: {reason}",
                    self.rank()
                );
                Ok(Device::cpu())
            }
        }
    }

    /// Waits until every rank has called it.
    pub fn barrier(&self) {
        self.comm.barrier();
    }

    fn check_rank(&self, op: &'static str, rank: usize) -> Result<i32> {
        if rank < self.size() { Ok(rank as i32) } else { Err(Error::BadRank { op, rank, size: self.size() }) }
    }

    /// `len` elements of staging memory for `device`.
    fn stage<T: Elem>(&self, device: &Device, len: usize) -> Result<Stage<T>> {
        if !device.is_gpu() {
            return Ok(Stage::Host(vec![T::default(); len]));
        }
        let kept = {
            let mut pool = self.staging.borrow_mut();
            let at = pool
                .iter()
                .position(|(d, t, l, _)| d.same_device(device) && *t == TypeId::of::<T>() && *l == len);
            at.map(|i| pool.swap_remove(i).3)
        };
        match kept.and_then(|b| b.downcast::<PinnedBuffer<T>>().ok()) {
            Some(p) => Ok(Stage::Pinned(*p)),
            None => Ok(Stage::Pinned(PinnedBuffer::zeroed(device, len)?)),
        }
    }

    /// Keeps pinned staging memory of `device` for the next call (a few buffers at most).
    fn unstage<T: Elem>(&self, device: &Device, stage: Stage<T>) {
        if let Stage::Pinned(p) = stage {
            let mut pool = self.staging.borrow_mut();
            if pool.len() < 16 {
                pool.push((device.clone(), TypeId::of::<T>(), p.len(), Box::new(p)));
            }
        }
    }

    /// Sends `data` to rank `to` with `tag`, after the work queued on its device before.
    pub fn send<T: Elem>(&self, data: &BufferPart<'_, T>, to: usize, tag: u16) -> Result<()> {
        let to = self.check_rank("send", to)?;
        let mut host = self.stage::<T>(data.device(), data.len())?;
        data.copy_to(&mut host)?;
        self.comm.process_at_rank(to).send_with_tag(&host[..], i32::from(tag));
        self.unstage(data.device(), host);
        Ok(())
    }

    /// Receives into `data` from rank `from` a message with `tag`, which must have
    /// `data.len()` elements.
    pub fn recv<T: Elem>(&self, data: &mut BufferPartMut<'_, T>, from: usize, tag: u16) -> Result<()> {
        let from = self.check_rank("recv", from)?;
        let mut host = self.stage::<T>(data.device(), data.len())?;
        let received = self.receive_checked("recv", &mut host, from, tag);
        let done = received.and_then(|()| Ok(data.copy_from(&host)?));
        self.unstage(data.device(), host);
        done
    }

    /// Receives a message with `tag` from rank `from` into `host`, checking its length first;
    /// one of another length is received (so that it does not stay queued) and is an error.
    fn receive_checked<T: Elem>(&self, op: &'static str, host: &mut [T], from: i32, tag: u16) -> Result<()> {
        let (message, status) = self.comm.process_at_rank(from).matched_probe_with_tag(i32::from(tag));
        let count = status.count(T::equivalent_datatype()).max(0) as usize;
        if count != host.len() {
            let mut drain = vec![T::default(); count];
            message.matched_receive_into(&mut drain[..]);
            return Err(Error::SizeMismatch {
                op,
                rank: self.rank(),
                peer: from as usize,
                mine: host.len(),
                theirs: count,
            });
        }
        message.matched_receive_into(host);
        Ok(())
    }

    /// Sends `send` to rank `to` and receives `recv` from rank `from` at once, both with `tag`
    /// (a halo exchange: no deadlock whatever the order of the ranks' calls).
    pub fn sendrecv<T: Elem>(
        &self,
        send: &BufferPart<'_, T>,
        to: usize,
        recv: &mut BufferPartMut<'_, T>,
        from: usize,
        tag: u16,
    ) -> Result<()> {
        self.exchange_while(&[Send { data: send, to, tag }], &mut [Recv { data: recv, from, tag }], || ())
    }

    /// Sends and receives several messages at once, running `work` while they are in flight:
    /// the sends are copied out of their device buffers (after the work queued before), every
    /// message is posted, `work` runs — host work, or launches, which return once queued, so
    /// that a kernel computes while the messages travel — then this waits for every message
    /// and copies each received one into its part. Returns `work`'s result.
    ///
    /// Messages between the same two ranks are told apart by their tags.
    pub fn exchange_while<T: Elem, R>(
        &self,
        sends: &[Send<'_, '_, T>],
        recvs: &mut [Recv<'_, '_, T>],
        work: impl FnOnce() -> R,
    ) -> Result<R> {
        let mut staged = Vec::with_capacity(sends.len());
        for s in sends {
            let to = self.check_rank("send", s.to)?;
            let mut host = self.stage::<T>(s.data.device(), s.data.len())?;
            s.data.copy_to(&mut host)?;
            staged.push((host, to, s.tag, s.data.device()));
        }
        let mut landing = Vec::with_capacity(recvs.len());
        for r in recvs.iter() {
            let from = self.check_rank("recv", r.from)?;
            landing.push((
                self.stage::<T>(r.data.device(), r.data.len())?,
                from,
                r.tag,
                r.data.device().clone(),
            ));
        }
        let (result, received) = mpi::request::scope(|scope| {
            let posted: Vec<_> = staged
                .iter()
                .map(|(host, to, tag, _)| {
                    self.comm.process_at_rank(*to).immediate_send_with_tag(scope, &host[..], i32::from(*tag))
                })
                .collect();
            let result = work();
            let received: Result<()> = landing
                .iter_mut()
                .try_for_each(|(host, from, tag, _)| self.receive_checked("recv", host, *from, *tag));
            for p in posted {
                p.wait();
            }
            (result, received)
        });
        let done = received.and_then(|()| {
            for (r, (host, _, _, _)) in recvs.iter_mut().zip(&landing) {
                r.data.copy_from(host)?;
            }
            Ok(())
        });
        for (host, _, _, device) in staged {
            self.unstage(device, host);
        }
        for (host, _, _, device) in landing {
            self.unstage(&device, host);
        }
        done.map(|()| result)
    }

    /// `value` combined over every rank with `op`; every rank gets the result.
    pub fn all_reduce<T: Elem>(&self, value: T, op: Op) -> Result<T> {
        let mut out = T::default();
        self.comm.all_reduce_into(&value, &mut out, op.system());
        Ok(out)
    }

    /// `data` combined element by element over every rank with `op`, in place: every rank's
    /// `data` holds the result. Every rank's part must have the same length.
    pub fn all_reduce_in_place<T: Elem>(&self, data: &mut BufferPartMut<'_, T>, op: Op) -> Result<()> {
        self.same_length("all_reduce", data.len())?;
        let mut mine = self.stage::<T>(data.device(), data.len())?;
        data.copy_to(&mut mine)?;
        let mut all = self.stage::<T>(data.device(), data.len())?;
        self.comm.all_reduce_into(&mine[..], &mut all[..], op.system());
        let done = data.copy_from(&all);
        self.unstage(data.device(), mine);
        self.unstage(data.device(), all);
        Ok(done?)
    }

    /// Rank `root`'s `data` copied into every rank's `data`, which must have its length.
    pub fn broadcast<T: Elem>(&self, data: &mut BufferPartMut<'_, T>, root: usize) -> Result<()> {
        let root = self.check_rank("broadcast", root)?;
        let mut len = data.len() as u64;
        self.comm.process_at_rank(root).broadcast_into(&mut len);
        let mut host = self.stage::<T>(data.device(), len as usize)?;
        if self.rank() == root as usize {
            data.copy_to(&mut host)?;
        }
        // Every rank takes part, a mismatched one too (into memory of the root's length), so
        // that the others are not left waiting.
        self.comm.process_at_rank(root).broadcast_into(&mut host[..]);
        let done = if len as usize == data.len() {
            data.copy_from(&host).map_err(Error::from)
        } else {
            Err(Error::SizeMismatch {
                op: "broadcast",
                rank: self.rank(),
                peer: root as usize,
                mine: data.len(),
                theirs: len as usize,
            })
        };
        self.unstage(data.device(), host);
        done
    }

    /// Every rank's `data` (all of one length), in rank order, on rank `root` (`None` on the
    /// others).
    pub fn gather<T: Elem>(&self, data: &BufferPart<'_, T>, root: usize) -> Result<Option<Vec<T>>> {
        let root = self.check_rank("gather", root)?;
        self.same_length("gather", data.len())?;
        let mut mine = self.stage::<T>(data.device(), data.len())?;
        data.copy_to(&mut mine)?;
        let process = self.comm.process_at_rank(root);
        let out = if self.rank() == root as usize {
            let mut all = vec![T::default(); data.len() * self.size()];
            process.gather_into_root(&mine[..], &mut all[..]);
            Some(all)
        } else {
            process.gather_into(&mine[..]);
            None
        };
        self.unstage(data.device(), mine);
        Ok(out)
    }

    /// Checks that every rank passes the same length (each learns the smallest and largest).
    fn same_length(&self, op: &'static str, len: usize) -> Result<()> {
        let lo = self.all_reduce(len as u64, Op::Min)?;
        let hi = self.all_reduce(len as u64, Op::Max)?;
        if lo == hi {
            return Ok(());
        }
        Err(Error::LengthsDiffer {
            op,
            rank: self.rank(),
            mine: len,
            smallest: lo as usize,
            largest: hi as usize,
        })
    }
}

/// A message [`Comm::exchange_while`] sends: `data` to rank `to` with `tag`.
#[derive(Debug)]
pub struct Send<'p, 'b, T: KernelScalar> {
    pub data: &'p BufferPart<'b, T>,
    pub to: usize,
    pub tag: u16,
}

/// A message [`Comm::exchange_while`] receives: into `data` (which must have its length),
/// from rank `from` with `tag`.
#[derive(Debug)]
pub struct Recv<'p, 'b, T: KernelScalar> {
    pub data: &'p mut BufferPartMut<'b, T>,
    pub from: usize,
    pub tag: u16,
}
