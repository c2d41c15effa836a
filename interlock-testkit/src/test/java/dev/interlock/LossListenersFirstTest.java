package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.mem.MemoryBackend;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A loss pushed by the backend runs the listeners on the notifier. A {@code renew()} that comes
 * meanwhile must not throw before they have finished: the contract is that the caller learns of
 * the loss after its listeners did.
 */
class LossListenersFirstTest {
    final String ns = UUID.randomUUID().toString();
    final LockSpace locks =
            Interlock.builder("mem:" + ns).defaultLease(Duration.ofMinutes(5)).open();

    @AfterEach
    void close() {
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void renew_whileAPushedLossIsStillTellingTheListeners_throwsOnlyAfterThem() throws Exception {
        Lease l = locks.tryAcquire("pushed").orElseThrow();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        l.onLost(e -> {
            entered.countDown();
            try {
                finish.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            told.add(e);
        });
        assertThat(MemoryBackend.of(ns)
                        .orElseThrow()
                        .reportLoss("pushed", l.owner().id(), "the test said so"))
                .isTrue();
        assertThat(entered.await(30, TimeUnit.SECONDS))
                .as("the listener started on the notifier")
                .isTrue();

        CompletableFuture<Integer> toldWhenThrown = CompletableFuture.supplyAsync(() -> {
            try {
                l.renew();
                return -1;
            } catch (LockLostException e) {
                return told.size();
            }
        });
        try {
            // Before the listener may finish, renew() must still be waiting for it.
            int early = toldWhenThrown.get(300, TimeUnit.MILLISECONDS);
            throw new AssertionError(
                    "renew() returned or threw while the listener was still running (listeners told: " + early + ")");
        } catch (TimeoutException expected) {
            // still waiting for the listener, as it must
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
        finish.countDown();
        assertThat(toldWhenThrown.get(30, TimeUnit.SECONDS))
                .as("listeners told when renew() threw")
                .isEqualTo(1);
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class);
        assertThat(told).hasSize(1);
    }
}
