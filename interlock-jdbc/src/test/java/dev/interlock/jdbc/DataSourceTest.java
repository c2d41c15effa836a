package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** A lock space on an application's DataSource: its own autocommit connections, never the caller's transaction. */
class DataSourceTest {
    /** Counts connections handed out and not yet closed, and those handed out in manual-commit mode. */
    static final class CountingDataSource extends WrappingDataSource {
        final DataSource target;
        final AtomicInteger open = new AtomicInteger();
        final AtomicInteger borrowed = new AtomicInteger();

        CountingDataSource(DataSource target) {
            this.target = target;
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection c = target.getConnection();
            c.setAutoCommit(false); // a pool configured for application transactions
            open.incrementAndGet();
            borrowed.incrementAndGet();
            return (Connection) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                        if (m.getName().equals("close") && !c.isClosed()) {
                            open.decrementAndGet();
                        }
                        return invoke(m, c, args);
                    });
        }
    }

    @Test
    void lockOperations_useTheirOwnConnections_andLeaveTheCallersTransactionAlone() throws Exception {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:d" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        CountingDataSource ds = new CountingDataSource(h2);
        try (Connection app = h2.getConnection();
                Statement st = app.createStatement()) {
            st.execute("CREATE TABLE orders (id INT)");
            app.setAutoCommit(false);
            st.execute("INSERT INTO orders VALUES (1)"); // the application's uncommitted work
            try (LockSpace locks = JdbcLockSpaces.open(
                    ds,
                    JdbcOptions.builder().table("app_locks").createTable(true).build())) {
                try (Lease l = locks.tryAcquire("job").orElseThrow()) {
                    assertThat(l.token()).isPositive();
                    assertThat(locks.tryAcquire("job")).isEmpty();
                    l.renew();
                }
                locks.tryAcquire("job", Mode.SHARED).orElseThrow().close();
                assertThat(locks.status("job").isFree()).isTrue();
                assertThat(locks.uri()).startsWith("jdbc:datasource(").contains("table=app_locks");
            }
            assertThat(ds.open.get())
                    .as("every borrowed connection was given back")
                    .isZero();
            assertThat(ds.borrowed.get()).isPositive();
            app.rollback();
            try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM orders")) {
                rs.next();
                assertThat(rs.getInt(1))
                        .as("the application's transaction was neither committed nor touched")
                        .isZero();
            }
        }
    }

    @Test
    void theCoresBuilder_opensASpaceOnADataSource_throughATypedOption() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:o" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        try (LockSpace locks = dev.interlock.Interlock.builder("jdbc:?table=typed_locks&create=true")
                .option(JdbcLockBackend.DATA_SOURCE, h2)
                .open()) {
            try (Lease l = locks.tryAcquire("job").orElseThrow()) {
                assertThat(locks.tryAcquire("job")).isEmpty();
                assertThat(locks.capabilities())
                        .contains(dev.interlock.Capability.BREAK, dev.interlock.Capability.STRICT_FENCING);
                assertThat(locks.breakLock("job", l.owner().id())).isTrue();
            }
            assertThat(locks.uri()).contains("table=typed_locks");
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> dev.interlock.Interlock.builder("jdbc:?table=t&user=sa")
                                .option(JdbcLockBackend.DATA_SOURCE, h2)
                                .open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only Interlock's options");
    }
}
