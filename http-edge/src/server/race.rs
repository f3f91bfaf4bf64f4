//! [`Race`]: a connection raced against its controls (the idle timer, the
//! shutdown watch), each polled only when it was woken.
//!
//! `tokio::select!` polls every branch whenever its task wakes. The
//! connection's task wakes once or twice a request (the socket readable,
//! a response body ready), and each time `select!` polled the shutdown
//! watch's `changed()` (its waiter list, under a lock) and the idle
//! `Sleep` as well, for controls that fire once in a connection's life:
//! polling them only when woken took 617 instructions a request off the
//! floor behind the edge on the wire, 857 off a stateless MCP request
//! (`docs/PERFORMANCE.md`, session 28). Here the controls are polled with a waker of their own, which
//! notes that they asked and then wakes the task; a wake-up from the
//! connection costs them a load of that note and a comparison of the
//! task's waker with the one they hold, with no atomic read-modify-write:
//! the task's waker is stored again only when it changed, and a wake-up
//! leaves it stored (`wake_by_ref`), where an `AtomicWaker` takes it out
//! and needs it registered again at every poll (two locked
//! compare-exchanges, and a swap of the note, ~0.5 % of the server's time
//! on the wire: docs/PERFORMANCE.md, session 47).
//!
//! Written here rather than taken from `futures-util`: its
//! `FuturesUnordered` tracks wake-ups per future the same way, but needs
//! futures of one type and allocates a task node for each future pushed
//! (a control future is made afresh after each event); this needs two
//! different futures, a flag, and one allocation per connection.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::future::Either;

/// The controls' waker: notes that they were woken, then wakes the task
/// that polls the [`Race`]. One per connection, shared by every `Race`
/// the connection's loop makes.
#[derive(Debug, Default)]
pub(crate) struct ControlWake {
    /// The controls were woken since they were last polled.
    woken: AtomicBool,
    /// The task polling the race: stored by its poll when it changed,
    /// never taken out.
    task: Mutex<Option<Waker>>,
}

impl ControlWake {
    /// Stores `waker` as the task's.
    fn register(&self, waker: &Waker) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        *task = Some(waker.clone());
    }
}

impl Wake for ControlWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(task) = &*task {
            task.wake_by_ref();
        }
    }
}

/// Resolves with the first of `main` (polled on every wake-up of the task)
/// and `control` (polled on its first poll and then only after it woke its
/// waker, [`ControlWake`]). Neither is dropped: both are borrowed.
pub(crate) struct Race<'a, M, C> {
    main: Pin<&'a mut M>,
    control: Pin<&'a mut C>,
    wake: &'a Arc<ControlWake>,
    waker: &'a Waker,
    /// The task waker `wake` holds (its data and vtable addresses, as
    /// `Waker::will_wake` compares them), once this race has stored one.
    stored: Option<(usize, usize)>,
}

impl<'a, M: Future, C: Future> Race<'a, M, C> {
    /// A race of `main` and a fresh `control`; `waker` is made from `wake`
    /// (`Waker::from(wake.clone())`, kept by the caller so that a
    /// connection makes it once).
    pub(crate) fn new(
        main: Pin<&'a mut M>,
        control: Pin<&'a mut C>,
        wake: &'a Arc<ControlWake>,
        waker: &'a Waker,
    ) -> Self {
        // A fresh control has registered nothing yet: its first poll is due.
        wake.woken.store(true, Ordering::Release);
        Race {
            main,
            control,
            wake,
            waker,
            stored: None,
        }
    }
}

/// What `Waker::will_wake` compares, as numbers (a `Race` stays `Send`).
fn identity(waker: &Waker) -> (usize, usize) {
    (
        waker.data() as usize,
        std::ptr::from_ref(waker.vtable()) as usize,
    )
}

impl<M: Future, C: Future> Future for Race<'_, M, C> {
    type Output = Either<M::Output, C::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(out) = self.main.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        // Stored before the flag is read: a wake-up after the read reaches
        // this task's current waker. One the same as the stored waker is
        // not stored again: `wake` holds a clone of it, so its addresses
        // cannot belong to another waker meanwhile.
        let identity = identity(cx.waker());
        if self.stored != Some(identity) {
            self.wake.register(cx.waker());
            self.stored = Some(identity);
        }
        if self.wake.woken.load(Ordering::Acquire) && self.wake.woken.swap(false, Ordering::AcqRel)
        {
            let waker = self.waker;
            let mut control_cx = Context::from_waker(waker);
            if let Poll::Ready(out) = self.control.as_mut().poll(&mut control_cx) {
                return Poll::Ready(Either::Right(out));
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A future that counts its polls and is ready once `ready` is set,
    /// waking the last waker it saw when told to.
    #[derive(Default)]
    struct Probe {
        polls: AtomicUsize,
        ready: AtomicBool,
        waker: std::sync::Mutex<Option<Waker>>,
    }

    impl Probe {
        fn fire(&self) {
            self.ready.store(true, Ordering::SeqCst);
            if let Some(w) = self.waker.lock().unwrap().take() {
                w.wake();
            }
        }
    }

    struct Polled<'a>(&'a Probe);

    impl Future for Polled<'_> {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.0.polls.fetch_add(1, Ordering::SeqCst);
            if self.0.ready.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[derive(Default)]
    struct CountWake(AtomicUsize);
    impl Wake for CountWake {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// What a race is made of in these tests: its two probes, the
    /// controls' waker, and a task that counts its wake-ups.
    struct Parts {
        main: Probe,
        control: Probe,
        wake: Arc<ControlWake>,
        waker: Waker,
        task: Arc<CountWake>,
        task_waker: Waker,
    }

    fn parts() -> Parts {
        let wake = Arc::new(ControlWake::default());
        let task = Arc::new(CountWake::default());
        Parts {
            main: Probe::default(),
            control: Probe::default(),
            waker: Waker::from(wake.clone()),
            wake,
            task_waker: Waker::from(task.clone()),
            task,
        }
    }

    #[test]
    fn the_control_is_polled_first_and_then_only_when_it_woke() {
        let p = parts();
        let (main, control, task) = (&p.main, &p.control, &p.task);
        let mut cx = Context::from_waker(&p.task_waker);
        let (mut m, mut c) = (Polled(main), Polled(control));
        let mut race = Race::new(Pin::new(&mut m), Pin::new(&mut c), &p.wake, &p.waker);

        assert!(Pin::new(&mut race).poll(&mut cx).is_pending());
        assert_eq!(
            control.polls.load(Ordering::SeqCst),
            1,
            "a fresh control is polled"
        );
        // The main future's wake-ups do not poll the control again.
        for _ in 0..5 {
            assert!(Pin::new(&mut race).poll(&mut cx).is_pending());
        }
        assert_eq!(main.polls.load(Ordering::SeqCst), 6);
        assert_eq!(control.polls.load(Ordering::SeqCst), 1);
        // The control's own wake-up wakes the task and gets it polled.
        control.fire();
        assert_eq!(task.0.load(Ordering::SeqCst), 1, "the task was woken");
        assert!(matches!(
            Pin::new(&mut race).poll(&mut cx),
            Poll::Ready(Either::Right(()))
        ));
        assert_eq!(control.polls.load(Ordering::SeqCst), 2);
    }

    /// The task's waker stays stored after a wake-up (it is not stored
    /// again while it is the same): every wake-up of a control that stays
    /// pending reaches the task, and a changed task waker is the one woken.
    #[test]
    fn every_wake_up_of_the_control_reaches_the_task_s_current_waker() {
        let p = parts();
        let (main, control, task) = (&p.main, &p.control, &p.task);
        let mut cx = Context::from_waker(&p.task_waker);
        let (mut m, mut c) = (Polled(main), Polled(control));
        let mut race = Race::new(Pin::new(&mut m), Pin::new(&mut c), &p.wake, &p.waker);
        assert!(Pin::new(&mut race).poll(&mut cx).is_pending());
        let wake_control = || {
            let control_waker = control.waker.lock().unwrap().clone();
            control_waker.expect("the control was polled").wake();
        };
        for round in 1..=3 {
            wake_control();
            assert_eq!(task.0.load(Ordering::SeqCst), round, "the task was woken");
            assert!(Pin::new(&mut race).poll(&mut cx).is_pending());
            assert_eq!(control.polls.load(Ordering::SeqCst), round + 1);
        }
        let other = Arc::new(CountWake::default());
        let other_waker = Waker::from(other.clone());
        assert!(
            Pin::new(&mut race)
                .poll(&mut Context::from_waker(&other_waker))
                .is_pending()
        );
        wake_control();
        assert_eq!(other.0.load(Ordering::SeqCst), 1, "the new waker was woken");
        assert_eq!(task.0.load(Ordering::SeqCst), 3, "not the old one");
    }

    #[test]
    fn the_main_future_wins_when_ready_and_a_new_race_polls_its_control() {
        let (main, control) = (Probe::default(), Probe::default());
        let wake = Arc::new(ControlWake::default());
        let waker = Waker::from(wake.clone());
        let mut cx = Context::from_waker(Waker::noop());
        let (mut m, mut c) = (Polled(&main), Polled(&control));
        {
            let mut race = Race::new(Pin::new(&mut m), Pin::new(&mut c), &wake, &waker);
            assert!(Pin::new(&mut race).poll(&mut cx).is_pending());
        }
        let mut race = Race::new(Pin::new(&mut m), Pin::new(&mut c), &wake, &waker);
        assert!(Pin::new(&mut race).poll(&mut cx).is_pending());
        assert_eq!(
            control.polls.load(Ordering::SeqCst),
            2,
            "each new race polls its control once"
        );
        main.fire();
        assert!(matches!(
            Pin::new(&mut race).poll(&mut cx),
            Poll::Ready(Either::Left(()))
        ));
    }
}
