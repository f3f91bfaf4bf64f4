//! `Admission` against a model: any sequence of admissions and releases
//! gives the same yes/no, the same refusal and the same totals as a plain
//! count of what is held (the rule of `RunLimits`: at most `max_running`
//! permits; a new weight only while the total stays within
//! `max_running_bytes`, or when nothing holds bytes). A hand-over
//! (`try_admit_successor`) is the same rule with its caller's permit left
//! out: it is admitted exactly when a new request would be were the caller
//! gone.

use mcp_transport_core::admission::{Admission, Refused, RunLimits, RunPermit};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Ask for a place of this weight.
    Admit(usize),
    /// Give back the held permit at this index (modulo how many are held).
    Release(usize),
    /// The held permit at this index hands over to a successor of its
    /// weight, then is given back at once (`true`, what a handler does) or
    /// kept (`false`: one that goes on running).
    HandOver(usize, bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..120).prop_map(Op::Admit),
        2 => any::<usize>().prop_map(Op::Release),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, end)| Op::HandOver(i, end)),
    ]
}

/// What the model says of admitting `weight` with `held` weights held.
fn model(limits: RunLimits, held: &[usize], weight: usize) -> Result<(), Refused> {
    let max = limits.max_running.max(1);
    if held.len() >= max {
        return Err(Refused::Running { max });
    }
    let total: usize = held.iter().sum();
    if total > 0 && total + weight > limits.max_running_bytes {
        return Err(Refused::Bytes {
            max: limits.max_running_bytes,
            held: total,
            asked: weight,
        });
    }
    Ok(())
}

proptest! {
    #[test]
    fn admission_is_its_model(
        max_running in 0usize..6,
        max_bytes in 0usize..300,
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let limits = RunLimits { max_running, max_running_bytes: max_bytes };
        let admission = Admission::new(limits);
        let mut held: Vec<(usize, RunPermit)> = Vec::new();
        for op in ops {
            match op {
                Op::Admit(w) => {
                    let weights: Vec<usize> = held.iter().map(|(w, _)| *w).collect();
                    let want = model(limits, &weights, w);
                    match (admission.try_admit(w), want) {
                        (Ok(p), Ok(())) => held.push((w, p)),
                        (Err(got), Err(want)) => prop_assert_eq!(got, want),
                        (got, want) => prop_assert!(false, "admit {w}: got {got:?}, model {want:?}"),
                    }
                }
                Op::Release(i) if !held.is_empty() => {
                    let i = i % held.len();
                    drop(held.swap_remove(i));
                }
                Op::Release(_) => {}
                Op::HandOver(i, end) if !held.is_empty() => {
                    let i = i % held.len();
                    let w = held[i].0;
                    let others: Vec<usize> = held
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, (w, _))| *w)
                        .collect();
                    // The refusal names everything held, the caller too.
                    let want = model(limits, &others, w).map_err(|e| match e {
                        Refused::Bytes { max, held, asked } => Refused::Bytes { max, held: held + w, asked },
                        running => running,
                    });
                    match (admission.try_admit_successor(w), want) {
                        (Ok(p), Ok(())) => held.push((w, p)),
                        (Err(got), Err(want)) => prop_assert_eq!(got, want),
                        (got, want) => prop_assert!(false, "hand over {w}: got {got:?}, model {want:?}"),
                    }
                    // Never more than one place over the limit.
                    prop_assert!(admission.running() <= limits.max_running.max(1) + 1);
                    if end {
                        drop(held.swap_remove(i));
                    }
                }
                Op::HandOver(..) => {}
            }
            prop_assert_eq!(admission.running(), held.len());
            prop_assert_eq!(admission.running_bytes(), held.iter().map(|(w, _)| w).sum::<usize>());
        }
        held.clear();
        prop_assert_eq!((admission.running(), admission.running_bytes()), (0, 0));
    }
}
