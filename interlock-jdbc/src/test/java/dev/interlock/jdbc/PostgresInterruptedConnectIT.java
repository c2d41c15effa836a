package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The clean-up of an interrupted acquisition (its place in line given up) may need a new
 * connection, opened on the interrupted thread: pgjdbc, given a login timeout (as Interlock always
 * gives it), connects on a thread of its own and gives up the wait for it at an interrupt.
 */
class PostgresInterruptedConnectIT {
    @Test
    void anInterruptedThread_stillOpensAConnection_andKeepsItsInterrupt() throws Exception {
        Properties timeouts = new Properties();
        timeouts.setProperty("loginTimeout", "10");
        Connections.FromUrl connections = new Connections.FromUrl(
                JdbcUrls.split(TestServers.postgresUrl()).driverUrl(), timeouts, 10_000);
        Connections.Borrowed borrowed;
        Thread.currentThread().interrupt();
        try {
            borrowed = connections.borrow(Connections.NO_CAP);
        } finally {
            assertThat(Thread.interrupted())
                    .as("the interrupt, kept for the caller")
                    .isTrue();
        }
        try {
            assertThat(borrowed.connection.isValid(5)).isTrue();
        } finally {
            borrowed.giveBack(true);
            connections.close();
        }
    }
}
