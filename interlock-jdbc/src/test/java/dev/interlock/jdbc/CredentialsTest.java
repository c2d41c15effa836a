package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The database password need not be on the command line (where ps shows it): a password file
 * readable by its owner only, or $INTERLOCK_JDBC_PASSWORD. It is never shown.
 */
class CredentialsTest {
    @TempDir
    Path tmp;

    /** An H2 database whose user sa has password {@code s3cret}, kept open for the test. */
    String database() throws Exception {
        String url = "jdbc:h2:mem:c" + UUID.randomUUID().toString().replace("-", "")
                + ";DB_CLOSE_DELAY=-1;USER=sa;PASSWORD=s3cret";
        try (Connection c = DriverManager.getConnection(url)) {
            c.createStatement().execute("SELECT 1");
        }
        return url.substring(0, url.indexOf(";USER="));
    }

    @Test
    void aPasswordFile_readableByItsOwnerOnly_opensTheSpace_andTheSecretIsNeverShown() throws Exception {
        String db = database();
        Path pw = Files.writeString(tmp.resolve("pw"), "s3cret\n");
        Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-------"));
        try (LockSpace locks = Interlock.open(db + ";USER=sa?create=true&passwordFile=" + pw)) {
            locks.tryAcquire("job").orElseThrow().close();
            assertThat(locks.uri()).doesNotContain("s3cret");
        }
        Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> Interlock.open(db + ";USER=sa?passwordFile=" + pw))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("chmod 600 " + pw)
                .hasMessageNotContaining("s3cret");
        Path link = tmp.resolve("link");
        Files.createSymbolicLink(link, pw);
        assertThatThrownBy(() -> Interlock.open(db + ";USER=sa?passwordFile=" + link))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("not a regular file");
    }

    @Test
    void theEnvironmentVariable_isUsedWhenTheUrlHasNoPassword_andAnyGivenPasswordWins() {
        Map<String, String> env = Map.of(Credentials.ENV, "from-env");
        Properties none = new Properties();
        assertThat(Credentials.withPassword("jdbc:postgresql://db/app", none, null, env::get, "d")
                        .getProperty("password"))
                .isEqualTo("from-env");
        assertThat(Credentials.withPassword("jdbc:postgresql://db/app?password=url", none, null, env::get, "d")
                        .getProperty("password"))
                .as("the URL's own password is left to the driver")
                .isNull();
        assertThat(Credentials.withPassword("jdbc:mariadb://u:p@db/app", none, null, env::get, "d")
                        .getProperty("password"))
                .isNull();
        Properties given = new Properties();
        given.setProperty("password", "given");
        assertThat(Credentials.withPassword("jdbc:postgresql://db/app", given, null, env::get, "d")
                        .getProperty("password"))
                .isEqualTo("given");
        assertThat(Credentials.withPassword("jdbc:postgresql://db/app", none, null, k -> null, "d")
                        .getProperty("password"))
                .isNull();
    }
}
