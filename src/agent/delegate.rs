//! Sub-agents side by side: several `agent` calls of one response run at once
//! (`call::run_calls_together`, at most `max_parallel_agents`), and this module holds
//! what that needs beyond one call: [`join_all`], which drives their futures together
//! in the turn's own task (they borrow the turn's state, so they cannot be spawned),
//! and the [`ApprovalQueue`], through which their approval questions reach the user
//! one at a time. An interrupt cancels the one token they all share.
//!
//! It must not know what a tool does or how events are drawn.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Where approval questions wait for their turn: one is shown (and answered) at a
/// time, the others wait, in the order they came. Clones share the queue.
#[derive(Debug, Clone, Default)]
pub struct ApprovalQueue(Arc<tokio::sync::Mutex<()>>);

impl ApprovalQueue {
    /// Waits until no other question is open; the question is open while the returned
    /// guard lives.
    pub async fn take_turn(&self) -> tokio::sync::OwnedMutexGuard<()> {
        Arc::clone(&self.0).lock_owned().await
    }
}

/// Runs `futures` together and returns their outputs in the order given.
pub async fn join_all<'a, T: Send>(futures: Vec<impl Future<Output = T> + Send + 'a>) -> Vec<T> {
    let mut pending: Vec<Pin<Box<dyn Future<Output = T> + Send + 'a>>> = futures
        .into_iter()
        .map(|f| Box::pin(f) as Pin<Box<dyn Future<Output = T> + Send + 'a>>)
        .collect();
    let mut done: Vec<Option<T>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(move |cx: &mut Context<'_>| {
        let mut waiting = false;
        for (slot, future) in done.iter_mut().zip(pending.iter_mut()) {
            if slot.is_some() {
                continue;
            }
            match future.as_mut().poll(cx) {
                Poll::Ready(value) => *slot = Some(value),
                Poll::Pending => waiting = true,
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(done.iter_mut().filter_map(Option::take).collect())
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn futures_run_together_and_keep_their_order() {
        // Each waits for the next one's signal: they finish only if all run at once.
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..3).map(|_| tokio::sync::oneshot::channel()).unzip();
        let mut txs: Vec<Option<tokio::sync::oneshot::Sender<()>>> =
            txs.into_iter().map(Some).collect();
        txs.rotate_left(1);
        let runs = rxs
            .into_iter()
            .zip(txs)
            .enumerate()
            .map(|(i, (rx, tx))| async move {
                if let Some(tx) = tx {
                    let _ = tx.send(());
                }
                rx.await.unwrap();
                i
            })
            .collect();
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), join_all(runs))
            .await
            .expect("they wait for each other");
        assert_eq!(got, [0, 1, 2]);
    }

    #[tokio::test]
    async fn one_question_is_open_at_a_time() {
        let queue = ApprovalQueue::default();
        let first = queue.take_turn().await;
        let second = queue.clone();
        let waiting = tokio::spawn(async move {
            let _turn = second.take_turn().await;
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(first);
        waiting.await.unwrap();
    }
}
