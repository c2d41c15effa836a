package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class QueuePlaceTest {
    private static final long MS = 1_000_000;
    private final AtomicLong now = new AtomicLong(1_000 * MS);
    private final List<String> calls = new ArrayList<>();

    private final QueuePlace.Keeper keeper = new QueuePlace.Keeper() {
        @Override
        public boolean take(Duration lease) {
            calls.add("take " + lease.toMillis());
            return true;
        }

        @Override
        public boolean renew(Duration lease) {
            calls.add("renew " + lease.toMillis());
            return true;
        }

        @Override
        public void giveUp() {
            calls.add("giveUp");
        }
    };

    @Test
    void theLease_isTheLocksButAtMostFiveSeconds() {
        assertThat(new QueuePlace(Duration.ofMinutes(1), now::get, keeper).lease())
                .isEqualTo(Duration.ofSeconds(5));
        assertThat(new QueuePlace(Duration.ofSeconds(2), now::get, keeper).lease())
                .isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void keep_takesOnce_thenRenewsOnlyWhenAThirdHasPassed() {
        QueuePlace p = new QueuePlace(Duration.ofSeconds(30), now::get, keeper);
        assertThat(p.nanosUntilDue()).isEqualTo(Long.MAX_VALUE);
        assertThat(p.keep()).isTrue();
        assertThat(p.nanosUntilDue()).isEqualTo(5000 * MS / 3);
        now.addAndGet(1000 * MS);
        p.keep();
        assertThat(calls).containsExactly("take 5000");
        assertThat(p.nanosUntilDue()).isEqualTo(5000 * MS / 3 - 1000 * MS);
        now.addAndGet(700 * MS);
        assertThat(p.nanosUntilDue()).isZero();
        p.keep();
        assertThat(calls).containsExactly("take 5000", "renew 5000");
        assertThat(p.nanosUntilDue()).isEqualTo(5000 * MS / 3);
    }

    @Test
    void close_givesUpAPlaceHeld_once_butNotOneAGrantConsumed() {
        QueuePlace p = new QueuePlace(Duration.ofSeconds(30), now::get, keeper);
        p.close();
        assertThat(calls).isEmpty();
        p.keep();
        p.close();
        p.close();
        assertThat(calls).containsExactly("take 5000", "giveUp");

        QueuePlace g = new QueuePlace(Duration.ofSeconds(30), now::get, keeper);
        g.keep();
        g.granted();
        g.close();
        assertThat(calls).containsExactly("take 5000", "giveUp", "take 5000");
    }

    @Test
    void aPlaceTheTryCarries_countsItsThirdFromThatTry() {
        QueuePlace p = new QueuePlace(Duration.ofSeconds(3), now::get, keeper);
        p.kept(true);
        now.addAndGet(400 * MS);
        assertThat(p.nanosUntilDue()).isEqualTo(600 * MS);
        p.kept(true);
        assertThat(p.nanosUntilDue()).isEqualTo(1000 * MS);
        assertThat(calls).isEmpty();
    }

    @Test
    void aStorageThatKeepsNoPlace_isAskedAgainAtTheNextKeep() {
        List<String> tries = new ArrayList<>();
        QueuePlace p = new QueuePlace(Duration.ofSeconds(30), now::get, new QueuePlace.Keeper() {
            @Override
            public boolean take(Duration lease) {
                tries.add("take");
                return false;
            }

            @Override
            public void giveUp() {
                tries.add("giveUp");
            }
        });
        assertThat(p.keep()).isFalse();
        assertThat(p.keep()).isFalse();
        p.close();
        assertThat(tries).containsExactly("take", "take");
    }
}
