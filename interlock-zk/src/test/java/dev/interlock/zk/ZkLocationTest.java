package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.LockBackendException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The user and password of a {@code zk:} URI: where they come from, and that no message shows the password. */
class ZkLocationTest {
    private static final UnaryOperator<String> NO_ENV = k -> null;

    @Test
    void userAndPassword_fromTheUserInfo_percentDecoded_andMaskedInTheDescription() {
        ZkLocation loc = ZkLocation.parse("//alice:p%40ss%2Fw+rd@zk1:2181,zk2/app/locks", NO_ENV);
        assertThat(loc.user).isEqualTo("alice");
        assertThat(loc.password).isEqualTo("p@ss/w+rd");
        assertThat(loc.ensemble).isEqualTo("zk1:2181,zk2:2181");
        assertThat(loc.path).isEqualTo("/app/locks");
        assertThat(loc.description()).isEqualTo("zk://alice:****@zk1:2181,zk2:2181/app/locks");
    }

    @Test
    void aRawAtInThePassword_isPartOfIt() {
        ZkLocation loc = ZkLocation.parse("//alice:p@ss@zk1/app", NO_ENV);
        assertThat(loc.password).isEqualTo("p@ss");
        assertThat(loc.ensemble).isEqualTo("zk1:2181");
    }

    @Test
    void aUserWithoutPassword_takesItFromTheEnvironment_orIsRefused() {
        Map<String, String> env = Map.of(ZkLocation.PASSWORD_ENV, "from-env");
        ZkLocation loc = ZkLocation.parse("//alice@zk1/app", env::get);
        assertThat(loc.user).isEqualTo("alice");
        assertThat(loc.password).isEqualTo("from-env");
        assertThatThrownBy(() -> ZkLocation.parse("//alice@zk1/app", NO_ENV))
                .hasMessageContaining("the user alice has no password")
                .hasMessageContaining("$INTERLOCK_ZK_PASSWORD");
    }

    @Test
    void aUserWithoutPassword_takesItFromAPasswordFileReadableByItsOwnerOnly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("zk-password");
        Files.writeString(file, "from-file\nsecond line ignored\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        ZkLocation loc = ZkLocation.parse(
                "//alice@zk1/app?passwordFile=" + file, Map.of(ZkLocation.PASSWORD_ENV, "from-env")::get);
        assertThat(loc.password).isEqualTo("from-file");

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> ZkLocation.parse("//alice@zk1/app?passwordFile=" + file, NO_ENV))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("zk://alice:****@zk1:2181/app")
                .hasMessageContaining("can be read by others than its owner: run 'chmod 600 " + file + "'")
                .hasMessageNotContaining("from-file");
        assertThatThrownBy(() -> ZkLocation.parse("//alice:pw@zk1/app?passwordFile=" + file, NO_ENV))
                .hasMessageContaining("the URI has a password and a passwordFile; give one of them");
        assertThatThrownBy(() -> ZkLocation.parse("//zk1/app?passwordFile=" + file, NO_ENV))
                .hasMessageContaining("passwordFile= needs a user");
    }

    @Test
    void withoutUserInfo_thereIsNoUser() {
        ZkLocation loc = ZkLocation.parse("//zk1/app", k -> "ignored");
        assertThat(loc.user).isNull();
        assertThat(loc.password).isNull();
        assertThat(loc.description()).isEqualTo("zk://zk1:2181/app");
    }

    @Test
    void aRefusedUri_neverShowsThePassword() {
        assertThatThrownBy(() -> ZkLocation.parse("//alice:s3cret@zk1:99999/app", NO_ENV))
                .hasMessageContaining("zk://alice:****@zk1:99999/app")
                .hasMessageContaining("port")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> ZkLocation.parse("//:s3cret@zk1/app", NO_ENV))
                .hasMessageContaining("a password needs its user name")
                .hasMessageNotContaining("s3cret");
        // An unencoded '/' or '?' cuts the password short: the URI is not repeated at all.
        for (String cut : new String[] {"//alice:s3/cret@zk1/app", "//alice:s3?cret@zk1/app"}) {
            assertThatThrownBy(() -> ZkLocation.parse(cut, NO_ENV))
                    .hasMessageContaining("must be percent-encoded (%2F %3F %40)")
                    .hasMessageNotContaining("s3")
                    .hasMessageNotContaining("cret");
        }
    }
}
