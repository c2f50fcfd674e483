//! The threads of one emulated block as lanes that take turns on the host thread that runs
//! the block. Each lane is a future: on the CPU backend the kernels macro compiles kernel code
//! that reaches barriers or warp operations as `async` code, each collective an `.await` (see
//! the crate's `lane` module), so a lane that must wait for the others returns `Pending` from
//! its poll, and [`in_turns`] polls the next one. A lane's state is the state machine rustc
//! builds for its kernel, a few hundred bytes: no stack of its own, and a wait costs a return
//! and a call, not a switch of stacks (which it did when lanes were stackful coroutines).

use std::cell::Cell;
use std::task::Poll;

thread_local! {
    /// Whether a lane of the round in progress arrived somewhere new (see [`arrived`]).
    static MOVED: Cell<bool> = const { Cell::new(false) };
}

/// Notes that the lane being polled arrived somewhere new (a barrier, a warp operation) and
/// waits there: a round of polls in which no lane arrives anywhere new, and none returns, means
/// nothing can change any more ([`in_turns`]).
#[inline(always)]
pub(crate) fn arrived() {
    MOVED.set(true);
}

/// Runs lanes `0..n` of a block to the end, in turns: `poll(t)` polls lane `t` once (the
/// caller owns the lanes' futures), and each lane's result goes to `done` as it returns. When
/// a round of polls moves no lane, `stall` is called: it must fail the block, so that the
/// lanes panic, and return, when polled next.
#[inline(always)]
pub(crate) fn in_turns<O>(
    n: usize,
    live: &mut Vec<u32>,
    mut poll: impl FnMut(usize) -> Poll<O>,
    stall: &dyn Fn(),
    mut done: impl FnMut(usize, O),
) {
    live.clear();
    live.extend(0..n as u32);
    let mut stalls = 0;
    while !live.is_empty() {
        MOVED.set(false);
        let mut returned = false;
        let mut kept = 0;
        for i in 0..live.len() {
            let t = live[i];
            match poll(t as usize) {
                Poll::Pending => {
                    live[kept] = t;
                    kept += 1;
                }
                Poll::Ready(out) => {
                    returned = true;
                    done(t as usize, out);
                }
            }
        }
        live.truncate(kept);
        if !returned && !MOVED.get() && !live.is_empty() {
            stalls += 1;
            assert!(stalls == 1, "offload: the lanes of a failed block did not return");
            stall();
        }
    }
}
