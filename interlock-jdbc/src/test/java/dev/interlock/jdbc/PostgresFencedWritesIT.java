package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link FencedWrites} on PostgreSQL (embedded, or INTERLOCK_IT_POSTGRES_URL), and Kleppmann's
 * case on a row: a holder of a {@code jdbc:} lock is paused (SIGSTOP) past its lease, another
 * takes the lock and writes the row, the first resumes and writes: refused, the row keeps the
 * newer write.
 */
class PostgresFencedWritesIT extends FencedWritesContract {
    @Override
    protected String driverUrl() {
        return JdbcUrls.split(TestServers.postgresUrl()).driverUrl();
    }

    /** Child: {@code URI NAME DRIVER_URL TABLE}: lock with a 1 s fixed lease, print HELD, wait for a line, write fenced, print the outcome. */
    public static void main(String[] args) throws Exception {
        try (LockSpace locks = Interlock.open(args[0]);
                Lease lease = locks.lock(args[1])
                        .fixedLease()
                        .lease(java.time.Duration.ofSeconds(1))
                        .acquire(java.time.Duration.ofSeconds(30))) {
            System.out.println("HELD " + lease.token());
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            try (Connection c = DriverManager.getConnection(args[2])) {
                FencedWrites.Result r = FencedWrites.on(args[3], "fence_token")
                        .update(c, lease.token(), "balance = ?", "id = ?", -1, 1);
                System.out.println(r.outcome() + " " + r.attemptedToken() + " "
                        + r.currentToken().orElse(-1));
                System.out.flush();
            }
        } catch (RuntimeException e) {
            // the release fails: the lease ran out long ago
        }
    }

    @Test
    void holderPausedPastItsLease_writesAfterANewerHolder_isRefused() throws Exception {
        String uri =
                TestServers.withOptions(TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true");
        Process stale = ChildJvm.builder(PostgresFencedWritesIT.class, List.of(), uri, "account:1", driverUrl(), table)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        long newerToken;
        try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(stale.getInputStream(), StandardCharsets.US_ASCII));
                OutputStream in = stale.getOutputStream()) {
            String held = out.readLine();
            assertThat(held).startsWith("HELD ");
            long staleToken = Long.parseLong(held.substring(5));
            assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(stale.pid()))
                            .start()
                            .waitFor())
                    .isZero();
            try (LockSpace locks = Interlock.open(uri);
                    Lease newer = locks.acquire("account:1", Timing.seconds(30))) {
                newerToken = newer.token();
                assertThat(newerToken).isGreaterThan(staleToken);
                assertThat(accounts.update(c, newerToken, "balance = ?", "id = ?", 500, 1)
                                .written())
                        .isTrue();
            }
            assertThat(new ProcessBuilder("kill", "-CONT", Long.toString(stale.pid()))
                            .start()
                            .waitFor())
                    .isZero();
            in.write("go\n".getBytes(StandardCharsets.US_ASCII));
            in.flush();
            assertThat(out.readLine()).isEqualTo("REFUSED " + staleToken + " " + newerToken);
        } finally {
            stale.destroyForcibly();
            stale.waitFor();
        }
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT balance, fence_token FROM " + table + " WHERE id = 1")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(500);
            assertThat(rs.getLong(2)).isEqualTo(newerToken);
        }
    }
}
