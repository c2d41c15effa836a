package dev.interlock.jdbc;

import dev.interlock.testkit.PermitHolderFaultContract;

/**
 * A permit holder killed or stopped on {@code jdbc:} (MariaDB, whose permit try and release are
 * one text of statements each): its permit comes back after one lease, by the database's clock,
 * and never sooner.
 */
class MariaDbPermitHolderFaultIT extends PermitHolderFaultContract {
    @Override
    protected String uri() {
        return TestServers.withOptions(TestServers.mariadbUrl(), "table=" + TestServers.table() + "&create=true");
    }
}
