package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;

/**
 * ZooKeeper digest authentication from the URI ({@code zk://USER:PASSWORD@HOST/PATH}): the nodes a
 * space makes are its user's alone, so another client, unauthenticated or of another user, can
 * neither delete a holder's node nor be granted the lock; a wrong password is a clear error, and the
 * password appears in no message.
 */
class ZkAuthTest {
    private static final String PASSWORD = "s3cr%t-pw";
    private static final String ENCODED = "s3cr%25t-pw";

    private final String path = TestZk.newPath();

    private static String uri(String userInfo, String path) {
        return "zk://" + userInfo + "@" + TestZk.server().getConnectString() + path;
    }

    /** A raw client, authenticated as {@code user:password} if not null. */
    private static ZooKeeper client(String userAndPassword) throws Exception {
        ZooKeeper zk = new ZooKeeper(TestZk.server().getConnectString(), 10_000, e -> {});
        if (userAndPassword != null) {
            zk.addAuthInfo("digest", userAndPassword.getBytes(StandardCharsets.UTF_8));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> zk.getState().isConnected());
        return zk;
    }

    @Test
    void anAuthenticatedSpace_grants_andMakesNodesOnlyItsUserMayTouch() throws Exception {
        try (LockSpace alice = Interlock.open(uri("alice:" + ENCODED, path));
                Lease held = alice.tryAcquire("job").orElseThrow();
                ZooKeeper anonymous = client(null);
                ZooKeeper bob = client("bob:other");
                ZooKeeper aliceRaw = client("alice:" + PASSWORD)) {
            String place =
                    path + "/job/" + aliceRaw.getChildren(path + "/job", false).get(0);
            for (String node : List.of(path, path + "/job", place)) {
                List<ACL> acl = aliceRaw.getACL(node, null);
                assertThat(acl).as(node).singleElement().satisfies(a -> {
                    assertThat(a.getId().getScheme()).isEqualTo("digest");
                    assertThat(a.getId().getId()).startsWith("alice:");
                    assertThat(a.getPerms()).isEqualTo(ZooDefs.Perms.ALL);
                });
            }
            for (ZooKeeper other : List.of(anonymous, bob)) {
                assertThatThrownBy(() -> other.delete(place, -1)).isInstanceOf(KeeperException.NoAuthException.class);
                assertThatThrownBy(() -> other.getChildren(path + "/job", false))
                        .isInstanceOf(KeeperException.NoAuthException.class);
            }
            assertThat(alice.status("job").holders()).singleElement();
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void anotherUser_orNoUser_isRefusedClearly_andGrantedNothing() throws Exception {
        try (LockSpace alice = Interlock.open(uri("alice:" + ENCODED, path));
                Lease held = alice.tryAcquire("job").orElseThrow()) {
            assertThatThrownBy(() -> Interlock.open(TestZk.uri(path, "")))
                    .isInstanceOf(LockBackendException.class)
                    .satisfies(e ->
                            assertThat(((LockBackendException) e).isTransient()).isFalse())
                    .hasMessageContaining("ZooKeeper refused access at " + path)
                    .hasMessageContaining("does not let an unauthenticated client in")
                    .hasMessageContaining("zk://USER:PASSWORD@HOST");
            assertThatThrownBy(() -> Interlock.open(uri("bob:" + ENCODED, path)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("ZooKeeper refused access at " + path + " to the user bob")
                    .hasMessageContaining("check the user name and password");
            assertThat(held.isValid()).isTrue();
        }
    }

    @Test
    void aWrongPassword_isAClearErrorWithoutThePassword() {
        try (LockSpace alice = Interlock.open(uri("alice:" + ENCODED, path))) {
            alice.tryAcquire("job").orElseThrow().close();
        }
        String wrong = "wr0ng-Pa55";
        assertThatThrownBy(() -> Interlock.open(uri("alice:" + wrong, path)))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("zk://alice:****@")
                .hasMessageContaining("to the user alice with the password given: the password is wrong")
                .hasMessageNotContaining(wrong)
                .hasMessageNotContaining("Exception");
    }

    /** A lock node made by another user inside an open space: the lock is that user's; others are refused. */
    @Test
    void aLockNodeMadeByAnotherUser_refusesTheOthers_inAnOpenSpace() {
        try (LockSpace open = Interlock.open(TestZk.uri(path, ""));
                LockSpace bob = Interlock.open(uri("bob:b0b-pw", path));
                LockSpace alice = Interlock.open(uri("alice:" + ENCODED, path))) {
            open.tryAcquire("shared").orElseThrow().close();
            try (Lease held = bob.tryAcquire("bobs").orElseThrow()) {
                assertThatThrownBy(() -> alice.tryAcquire("bobs"))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("'bobs'")
                        .hasMessageContaining("to the user alice")
                        .hasMessageContaining("belongs to another ZooKeeper user");
                assertThatThrownBy(() -> open.tryAcquire("bobs"))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("does not let an unauthenticated client in");
                assertThatThrownBy(() -> alice.breakLock("bobs", held.owner().id()))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("refused access");
                assertThat(held.isValid()).isTrue();
            }
        }
    }

    @Test
    void thePasswordIsInNoDescriptionStatusOrToString() {
        try (LockSpace alice = Interlock.open(uri("alice:" + ENCODED, path));
                Lease held = alice.tryAcquire("job").orElseThrow()) {
            LockInfo info = alice.status("job");
            for (String shown :
                    List.of(alice.toString(), info.toString(), held.toString(), String.valueOf(alice.list()))) {
                assertThat(shown).doesNotContain(PASSWORD).doesNotContain(ENCODED);
            }
        }
    }

    /**
     * The application's own client, authenticated by the application, with {@link
     * ZkOptions#CREATOR_ONLY}: its nodes are that user's alone, as with a user in the URI; an
     * unauthenticated client with the option is refused clearly and granted nothing; the option
     * without a given client is refused at open.
     */
    @Test
    void aGivenAuthenticatedClient_withCreatorOnly_makesNodesOnlyItsUserMayTouch() throws Exception {
        try (ZooKeeper aliceClient = client("alice:" + PASSWORD);
                ZooKeeper bob = client("bob:other");
                LockSpace given = Interlock.builder("zk://ignored:1" + path)
                        .option(ZkOptions.CLIENT, aliceClient)
                        .option(ZkOptions.CREATOR_ONLY, true)
                        .open();
                Lease held = given.tryAcquire("job").orElseThrow()) {
            String place = path + "/job/"
                    + aliceClient.getChildren(path + "/job", false).get(0);
            for (String node : List.of(path, path + "/job", place)) {
                assertThat(aliceClient.getACL(node, null))
                        .as(node)
                        .singleElement()
                        .satisfies(a -> assertThat(a.getId().getId()).startsWith("alice:"));
            }
            assertThatThrownBy(() -> bob.delete(place, -1)).isInstanceOf(KeeperException.NoAuthException.class);
            assertThat(held.isValid()).isTrue();
        }
        String other = TestZk.newPath();
        try (ZooKeeper anonymous = client(null);
                LockSpace unauthenticated = Interlock.builder("zk://ignored:1" + other)
                        .option(ZkOptions.CLIENT, anonymous)
                        .option(ZkOptions.CREATOR_ONLY, true)
                        .open()) {
            assertThatThrownBy(() -> unauthenticated.tryAcquire("job"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("the client has no authenticated identity")
                    .hasMessageContaining("addAuthInfo")
                    .hasMessageNotContaining("Exception");
            assertThat(anonymous.exists(other + "/job", false)).isNull();
        }
        assertThatThrownBy(() -> Interlock.builder(TestZk.uri(other, ""))
                        .option(ZkOptions.CREATOR_ONLY, true)
                        .open())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ZkOptions.CREATOR_ONLY is for a client given with ZkOptions.CLIENT");
    }
}
