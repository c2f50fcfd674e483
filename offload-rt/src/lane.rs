//! Collective operations (barriers and warp operations) for both builds of the kernel language.
//!
//! On a GPU a collective is an instruction: the hardware holds the thread until its block or
//! warp gets there. The CPU backend has no such hardware; there the threads of a block are
//! *lanes* that take turns on one host thread, and a lane that must wait for the others hands
//! the host thread to the next one. Kernel code that reaches a collective is therefore compiled
//! twice: as written for the GPU, and for the CPU backend as `async` code in which every
//! collective is an `.await`. The kernels macro makes that copy: each function of a kernels
//! module that reaches a collective, directly or through others (the uniformity analysis knows
//! which), becomes on the host a function that returns its body's future (an `async` block: an
//! `async fn`, but one that keeps its arguments where the caller put them), and each call of a
//! collective or of such a function gets its `.await`. Rust compiles a lane into a state machine of a few hundred
//! bytes, so that a lane waits by returning from a call, not by switching stacks.
//!
//! The runtime writes each collective once for both builds ([`collective!`]): on a GPU a plain
//! function; on the host one that returns [`Pausing`], the operation's future. So on the CPU
//! backend [`Block::sync`](crate::Block::sync) returns `Pausing<impl Future<Output =
//! BlockRead>>` where kernel code, as written, sees a `BlockRead`: call collectives from
//! kernels modules, where the macro awaits them.
//!
//! The macro awaits a call through [`Lane`]: `Lane::new(call).__lane_await().await`. A call
//! that returns something to await (a `Pausing`, an `async fn`'s future) is awaited; any other
//! value is passed through as it is, so that a call the analysis took for a collective but that
//! is not one (a method of another type with the same name, say) still compiles and does what
//! it says.

/// `e` on a GPU (in a [`collective!`] body).
#[cfg(offload_gpu)]
macro_rules! wait {
    ($e:expr) => {
        $e
    };
}
/// `e` on a GPU; on the CPU backend `e`'s [`Pausing`] future, awaited (in a [`collective!`]
/// body, for the CPU backend's primitives and other collectives).
#[cfg(not(offload_gpu))]
macro_rules! wait {
    ($e:expr) => {
        ($e).await
    };
}
pub(crate) use wait;

/// A collective operation, written once: `collective! { at site; [unsafe] fn name<T: Bound…>(args)
/// -> R { body } }` defines `name` as a plain function on a GPU and as one returning
/// [`Pausing`]`<impl Future<Output = R>>` on the CPU backend, with `site` bound to the caller's
/// location (`#[track_caller]`) and every `wait!(…)` in `body` an `.await` on the host. Without
/// `at site;` the function takes its site as an argument (a helper of other collectives: inside
/// their `async` bodies on the host, `#[track_caller]` would see the helper's caller as the
/// runtime, not the kernel). The function reads as a plain one, for rustc's notes that point
/// at it.
macro_rules! collective {
    // The two functions: `$gpu` the GPU's body, `$host` the CPU backend's (a `Pausing`).
    (@fns [$($site:ident)?] ($($qual:tt)*) $(#[$attr:meta])* $vis:vis fn $name:ident
        [$($generics:tt)*] ($($args:tt)*) -> $ret:ty, gpu $gpu:block, host $host:block) => {
        $(#[$attr])*
        #[cfg(offload_gpu)]
        #[inline(always)]
        #[track_caller]
        $vis $($qual)* fn $name $($generics)* ($($args)*) -> $ret {
            $(let $site: $crate::arch::Site = ::core::panic::Location::caller();)?
            $gpu
        }

        $(#[$attr])*
        ///
        /// (On the CPU backend this returns the operation's future, which the kernels macro
        /// awaits: see the `lane` module.)
        #[cfg(not(offload_gpu))]
        #[inline(always)]
        #[track_caller]
        $vis $($qual)* fn $name $($generics)* ($($args)*) -> $crate::lane::Pausing<impl ::core::future::Future<Output = $ret>> {
            $(let $site: $crate::arch::Site = ::core::panic::Location::caller();)?
            $host
        }
    };
    // A body that is one wait and nothing else: on the host, the wait's own future.
    (@emit $sites:tt $quals:tt $(#[$attr:meta])* $vis:vis fn $name:ident
        $(<$($g:ident : $b0:ident $(+ $bs:ident)*),*>)? ($($args:tt)*) -> $ret:ty
        { wait!($wait:expr) }) => {
        $crate::lane::collective!(@fns $sites $quals $(#[$attr])* $vis fn $name
            [$(<$($g: $b0 $(+ $bs)*),*>)?] ($($args)*) -> $ret,
            gpu { $wait },
            host { $crate::lane::Pausing(::core::future::IntoFuture::into_future($wait)) });
    };
    // A body that is one wait and then a value that waits for nothing: on the host, the wait's
    // own future followed by the value ([`Then`]), with no `async` state machine of its own (a
    // barrier's `sync` is the CPU backend's most frequent wait).
    (@emit $sites:tt $quals:tt $(#[$attr:meta])* $vis:vis fn $name:ident
        $(<$($g:ident : $b0:ident $(+ $bs:ident)*),*>)? ($($args:tt)*) -> $ret:ty
        { wait!($wait:expr); $($then:tt)* }) => {
        $crate::lane::collective!(@fns $sites $quals $(#[$attr])* $vis fn $name
            [$(<$($g: $b0 $(+ $bs)*),*>)?] ($($args)*) -> $ret,
            gpu { $wait; $($then)* },
            host { $crate::lane::Pausing($crate::lane::Then::new($wait, move |()| { $($then)* })) });
    };
    // Any other body: on the host, an `async` block in which each `wait!` is an `.await`.
    (@emit $sites:tt $quals:tt $(#[$attr:meta])* $vis:vis fn $name:ident
        $(<$($g:ident : $b0:ident $(+ $bs:ident)*),*>)? ($($args:tt)*) -> $ret:ty $body:block) => {
        $crate::lane::collective!(@fns $sites $quals $(#[$attr])* $vis fn $name
            [$(<$($g: $b0 $(+ $bs)*),*>)?] ($($args)*) -> $ret,
            gpu $body,
            host { $crate::lane::Pausing(async move $body) });
    };
    (@site [$($site:ident)?] $(#[$attr:meta])* $vis:vis unsafe fn $($rest:tt)*) => {
        $crate::lane::collective!(@emit [$($site)?] (unsafe) $(#[$attr])* $vis fn $($rest)*);
    };
    (@site [$($site:ident)?] $(#[$attr:meta])* $vis:vis fn $($rest:tt)*) => {
        $crate::lane::collective!(@emit [$($site)?] () $(#[$attr])* $vis fn $($rest)*);
    };
    (at $site:ident; $($rest:tt)*) => {
        $crate::lane::collective!(@site [$site] $($rest)*);
    };
    ($($rest:tt)*) => {
        $crate::lane::collective!(@site [] $($rest)*);
    };
}
pub(crate) use collective;

/// A collective operation's future on the CPU backend (see the [module documentation](self)):
/// `.await` it (the kernels macro does).
#[cfg(not(offload_gpu))]
#[must_use = "a barrier or warp operation does nothing unless awaited; call it in a kernels module, whose macro awaits it"]
#[derive(Debug)]
pub struct Pausing<F>(pub(crate) F);

#[cfg(not(offload_gpu))]
impl<F: core::future::Future> core::future::IntoFuture for Pausing<F> {
    type Output = F::Output;
    type IntoFuture = F;

    #[inline(always)]
    fn into_future(self) -> F {
        self.0
    }
}

/// A collective's future that waits for `F` (a [`Pausing`] collective) and then makes its
/// value with `G` ([`collective!`]'s form for a body of one wait and a value).
#[cfg(not(offload_gpu))]
#[derive(Debug)]
pub(crate) struct Then<F, G> {
    wait: F,
    then: Option<G>,
}

#[cfg(not(offload_gpu))]
impl<F, G> Then<F, G> {
    #[inline(always)]
    pub(crate) fn new<W: core::future::IntoFuture<IntoFuture = F>>(wait: W, then: G) -> Then<F, G> {
        Then { wait: wait.into_future(), then: Some(then) }
    }
}

#[cfg(not(offload_gpu))]
impl<F: Future + Unpin, G: FnOnce(F::Output) -> R + Unpin, R> Future for Then<F, G> {
    type Output = R;

    #[inline(always)]
    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> core::task::Poll<R> {
        let this = &mut *self;
        match core::pin::Pin::new(&mut this.wait).poll(cx) {
            core::task::Poll::Pending => core::task::Poll::Pending,
            core::task::Poll::Ready(out) => {
                core::task::Poll::Ready((this.then.take().expect("a collective completes once"))(out))
            }
        }
    }
}

/// A call the kernels macro awaits: `Lane::new(call).__lane_await().await` awaits what can be
/// awaited ([`Awaitable`]) and passes any other value through ([`Ready`]), by autoref: the
/// first applies to `Lane<T>` itself where `T: IntoFuture`, the second to `&Lane<T>`, which
/// method lookup tries only when the first does not apply.
#[cfg(not(offload_gpu))]
#[doc(hidden)]
pub struct Lane<T>(core::cell::Cell<Option<T>>);

#[cfg(not(offload_gpu))]
impl<T> core::fmt::Debug for Lane<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Lane")
    }
}

#[cfg(not(offload_gpu))]
impl<T> Lane<T> {
    #[doc(hidden)]
    #[inline(always)]
    pub fn new(value: T) -> Lane<T> {
        Lane(core::cell::Cell::new(Some(value)))
    }
}

/// See [`Lane`]: a call whose result can be awaited.
#[cfg(not(offload_gpu))]
#[doc(hidden)]
pub trait Awaitable {
    type Future;
    fn __lane_await(self) -> Self::Future;
}

#[cfg(not(offload_gpu))]
impl<T: core::future::IntoFuture> Awaitable for Lane<T> {
    type Future = T::IntoFuture;

    #[inline(always)]
    fn __lane_await(self) -> T::IntoFuture {
        self.0.into_inner().expect("a lane's value is taken once").into_future()
    }
}

/// See [`Lane`]: a call whose result is a plain value.
#[cfg(not(offload_gpu))]
#[doc(hidden)]
pub trait Ready {
    type Value;
    fn __lane_await(self) -> core::future::Ready<Self::Value>;
}

#[cfg(not(offload_gpu))]
impl<T> Ready for &Lane<T> {
    type Value = T;

    #[inline(always)]
    fn __lane_await(self) -> core::future::Ready<T> {
        core::future::ready(self.0.take().expect("a lane's value is taken once"))
    }
}

#[cfg(all(test, not(offload_gpu)))]
mod tests {
    use super::{Awaitable as _, Lane, Pausing, Ready as _, Then};
    use std::task::{Context, Poll, Waker};

    fn run<F: Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("pending"),
        }
    }

    async fn doubled(x: u32) -> u32 {
        x * 2
    }

    #[test]
    fn a_lane_awaits_futures_and_passes_values_through() {
        // What the kernels macro generates at each call it awaits.
        let got = run(async {
            let a = Lane::new(doubled(4)).__lane_await().await;
            let b = Lane::new(Pausing(async { 5u32 })).__lane_await().await;
            let c = Lane::new(3.5f32.min(1.0)).__lane_await().await;
            let d = Lane::new(String::from("moved")).__lane_await().await;
            let e = Lane::new(Pausing(Then::new(core::future::ready(6u32), |x| x + 1))).__lane_await().await;
            (a, b, c, d, e)
        });
        assert_eq!(got, (8, 5, 1.0, "moved".to_owned(), 7));
    }

    #[test]
    fn a_lane_passes_values_of_generic_types_through() {
        async fn pass<T>(v: T) -> T {
            Lane::new(v).__lane_await().await
        }
        assert_eq!(run(pass(vec![1, 2])), [1, 2]);
    }
}
