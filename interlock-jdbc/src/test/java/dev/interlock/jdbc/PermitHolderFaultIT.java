package dev.interlock.jdbc;

import dev.interlock.testkit.PermitHolderFaultContract;

/**
 * A permit holder killed or stopped on {@code jdbc:} (PostgreSQL): its permit comes back after
 * one lease, by the database's clock, and never sooner.
 */
class PermitHolderFaultIT extends PermitHolderFaultContract {
    @Override
    protected String uri() {
        return TestServers.withOptions(TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true");
    }
}
