package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.TcpProxy;
import dev.interlock.testkit.Timing;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every command on {@code --backend zk://...}, against an in-process ZooKeeper server, and its errors (exit 69). */
class ZkCliIT {
    private static TestingServer server;
    private static int paths;

    @TempDir
    Path tmp;

    private final List<CliProcess> clis = new ArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        System.setProperty("zookeeper.forceSync", "no");
        server = new TestingServer(true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @AfterEach
    void tearDown() {
        clis.forEach(CliProcess::close);
    }

    private static synchronized String backend() {
        return "zk://" + server.getConnectString() + "/cli" + (++paths);
    }

    private CliProcess cli(String... args) throws Exception {
        CliProcess p = CliProcess.start(List.of(), Map.of(), args);
        clis.add(p);
        return p;
    }

    @Test
    void run_passesTheToken_statusShowsTheHolder_aBreakStopsTheCommand_exit75() throws Exception {
        String backend = backend();
        CliProcess once = cli("run", "--backend", backend, "job", "--", "sh", "-c", "echo token=$INTERLOCK_TOKEN");
        assertThat(once.exitCode()).as(once.err()).isEqualTo(0);
        assertThat(once.out()).containsPattern("token=[1-9][0-9]*");

        Path pid = tmp.resolve("child.pid");
        CliProcess holder =
                cli("run", "--backend", backend, "x", "--", "sh", "-c", "sleep 60 & echo $$ > " + pid + "; wait");
        await().atMost(Timing.seconds(20)).until(() -> Files.exists(pid) && Files.size(pid) > 0);
        long shell = Long.parseLong(Files.readString(pid).trim());
        CliProcess busy = cli("run", "-n", "--backend", backend, "x", "--", "true");
        assertThat(busy.exitCode()).isEqualTo(1);
        assertThat(busy.err()).contains("'x' is busy").contains("held EX");
        CliProcess status = cli("status", "--json", "--backend", backend, "x");
        assertThat(status.exitCode()).as(status.err()).isEqualTo(0);
        Matcher owner = Pattern.compile("\"owner\":\"([^\"]+)\"").matcher(status.out());
        assertThat(owner.find()).as(status.out()).isTrue();
        CliProcess list = cli("list", "--backend", backend);
        assertThat(list.exitCode()).isEqualTo(0);
        assertThat(list.out()).contains("job").contains("x");
        CliProcess broken = cli("break", "--backend", backend, "x", "--owner", owner.group(1));
        assertThat(broken.exitCode()).as(broken.err()).isEqualTo(0);
        assertThat(holder.exitCode()).isEqualTo(75);
        assertThat(holder.err()).contains("lost").contains("stopping the command");
        await().atMost(Timing.seconds(10)).until(() -> !RunProcessTest.running(shell));
    }

    /**
     * The holder cut off from the server by a proxy that stops forwarding, while a second
     * {@code run} reaches the server directly: the first is told before its session can expire
     * and stops its command (exit 75) before the second is granted, so no line of the old command
     * falls inside the new command's section. Sessions of 5s on a server whose tick is 250ms.
     */
    @Test
    void holderCutOff_runStopsItsCommandBeforeTheNextHolderIsGranted_exit75() throws Exception {
        try (TestingServer fast = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 250, -1), true);
                TcpProxy proxy = new TcpProxy(fast.getPort())) {
            Path lines = tmp.resolve("lines");
            Files.writeString(lines, "");
            String viaProxy = "zk://127.0.0.1:" + proxy.port() + "/cut?session=5s";
            String direct = "zk://" + fast.getConnectString() + "/cut?session=5s";
            CliProcess old = cli(
                    "run",
                    "--backend",
                    viaProxy,
                    "x",
                    "--",
                    "sh",
                    "-c",
                    "while :; do echo old >> " + lines + "; sleep 0.02; done");
            await().atMost(Timing.seconds(20))
                    .until(() -> Files.readString(lines).contains("old"));
            proxy.blackhole();
            CliProcess next = cli(
                    "run",
                    "--backend",
                    direct,
                    "x",
                    "--",
                    "sh",
                    "-c",
                    "echo start >> " + lines + "; sleep 1; echo end >> " + lines);
            assertThat(old.exitCode(Timing.seconds(30))).as(old.err()).isEqualTo(75);
            assertThat(old.err())
                    .contains("no answer from the ZooKeeper ensemble")
                    .contains("stopping the command");
            assertThat(next.exitCode(Timing.seconds(30))).as(next.err()).isEqualTo(0);
            List<String> all = Files.readAllLines(lines);
            int start = all.indexOf("start");
            assertThat(start).as("the new command ran").isPositive();
            assertThat(all.subList(start, all.size()))
                    .as("lines from the new command's start on")
                    .containsExactly("start", "end");
        }
    }

    /**
     * The holder's {@code interlock} is stopped (SIGSTOP) while its command runs (and ignores
     * SIGTERM): nothing in the JVM can declare the session lost, but the sentinel, armed from the
     * session's deadline, stops the command before the session can expire, so no line of the old
     * command falls inside the section of the next holder, which the servers admit once they expire
     * the stopped holder's session. Sessions of 5s on a server whose tick is 250ms.
     */
    @Test
    void holderStopped_theSentinelStopsItsCommandBeforeTheSessionCanExpire() throws Exception {
        try (TestingServer fast = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 250, -1), true)) {
            Path lines = tmp.resolve("lines");
            Files.writeString(lines, "");
            String uri = "zk://" + fast.getConnectString() + "/stopped?session=5s";
            CliProcess old = cli(
                    "run",
                    "--backend",
                    uri,
                    "x",
                    "--",
                    "sh",
                    "-c",
                    "trap '' TERM; while :; do echo old >> " + lines + "; sleep 0.02; done");
            await().atMost(Timing.seconds(20))
                    .until(() -> Files.readString(lines).contains("old"));
            RunSupervisionIT.signal("STOP", old.pid());
            try {
                CliProcess next = cli(
                        "run",
                        "--backend",
                        uri,
                        "-w",
                        "60s",
                        "x",
                        "--",
                        "sh",
                        "-c",
                        "echo start >> " + lines + "; sleep 1; echo end >> " + lines);
                assertThat(next.exitCode(Timing.seconds(60))).as(next.err()).isEqualTo(0);
            } finally {
                RunSupervisionIT.signal("CONT", old.pid());
            }
            List<String> all = Files.readAllLines(lines);
            int start = all.indexOf("start");
            assertThat(start).as("the new command ran").isPositive();
            assertThat(all.subList(start, all.size()))
                    .as("lines from the new command's start on")
                    .containsExactly("start", "end");
            assertThat(old.exitCode(Timing.seconds(30))).as(old.err()).isEqualTo(75);
        }
    }

    @Test
    void namesWithSlashes_andOf1024Characters_areLocksOfTheirOwn() throws Exception {
        String backend = backend();
        String longName = "n".repeat(1024);
        for (String name : List.of("a/b/../c", longName, "../x")) {
            CliProcess p = cli("run", "--backend", backend, name, "--", "sh", "-c", "echo $INTERLOCK_NAME");
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
            assertThat(p.out().trim()).isEqualTo(name);
        }
        CliProcess list = cli("list", "--json", "--backend", backend);
        assertThat(list.exitCode()).isEqualTo(0);
        assertThat(list.out()).contains("\"a/b/../c\"").contains("\"../x\"").contains(longName);
    }

    /**
     * {@code zk://USER:PASSWORD@...} (and the password from $INTERLOCK_ZK_PASSWORD): the holder's
     * space is its user's, so a wrong password is exit 69 with a message that says so, and the
     * password is in no output of any command.
     */
    @Test
    void authenticated_runStatusList_work_aWrongPasswordIsExit69_andThePasswordIsNeverShown() throws Exception {
        String plain = backend();
        String password = "pw-Zk-53cret";
        String backend = plain.replace("zk://", "zk://alice:" + password + "@");
        CliProcess run = cli("run", "--backend", backend, "job", "--", "true");
        assertThat(run.exitCode()).as(run.err()).isEqualTo(0);
        CliProcess status = cli("status", "--json", "--backend", backend, "job");
        CliProcess list = CliProcess.start(
                List.of(),
                Map.of("INTERLOCK_ZK_PASSWORD", password),
                "list",
                "--json",
                "--backend",
                plain.replace("zk://", "zk://alice@"));
        clis.add(list);
        CliProcess wrong = cli("run", "--backend", backend.replace(password, "wrong-Pa55"), "job", "--", "echo", "ran");
        CliProcess anonymous = cli("run", "--backend", plain, "job", "--", "echo", "ran");
        assertThat(status.exitCode()).as(status.err()).isEqualTo(0);
        assertThat(list.exitCode()).as(list.err()).isEqualTo(0);
        assertThat(wrong.exitCode()).isEqualTo(69);
        assertThat(wrong.err())
                .contains("zk://alice:****@")
                .contains("refused access")
                .contains("the password is wrong")
                .doesNotContain("wrong-Pa55")
                .doesNotContain("Exception");
        assertThat(wrong.out()).doesNotContain("ran");
        assertThat(anonymous.exitCode()).isEqualTo(69);
        assertThat(anonymous.err()).contains("does not let an unauthenticated client in");
        assertThat(anonymous.out()).doesNotContain("ran");
        for (CliProcess p : List.of(run, status, list, wrong, anonymous)) {
            assertThat(p.out() + p.err()).doesNotContain(password);
        }
    }

    @Test
    void aSpaceMadeOpen_usedLaterWithAUser_warnsThatItsOlderNodesAreOpen_andSaysHowToClose() throws Exception {
        String plain = backend();
        String password = "pw-Zk-0pen";
        CliProcess open = cli("run", "--backend", plain, "job", "--", "true");
        assertThat(open.exitCode()).as(open.err()).isEqualTo(0);
        CliProcess withUser =
                cli("run", "--backend", plain.replace("zk://", "zk://alice:" + password + "@"), "job", "--", "true");
        assertThat(withUser.exitCode()).as(withUser.err()).isEqualTo(0);
        assertThat(withUser.err())
                .contains("is open to every ZooKeeper client")
                .contains("setAcl -R")
                .doesNotContain(password);
        CliProcess madeWithUser = cli(
                "run", "--backend", backend().replace("zk://", "zk://alice:" + password + "@"), "job", "--", "true");
        assertThat(madeWithUser.exitCode()).as(madeWithUser.err()).isEqualTo(0);
        assertThat(madeWithUser.err()).doesNotContain("is open to every ZooKeeper client");
    }

    @Test
    void unreachableEnsemble_exit69_saysWhatToCheck_withoutAStackTrace() throws Exception {
        CliProcess p = cli("run", "--backend", "zk://127.0.0.1:1/x?connect=1s", "job", "--", "true");
        assertThat(p.exitCode()).isEqualTo(69);
        assertThat(p.err())
                .contains("could not reach the ZooKeeper ensemble at 127.0.0.1:1 within 1000ms")
                .doesNotContain("Exception")
                .doesNotContain("\tat ");
    }

    @Test
    void aPathThatIsAnotherApplicationsNode_orAForeignNodeInALock_exit69_andNothingIsGranted() throws Exception {
        String backend = backend();
        String path = backend.substring(backend.lastIndexOf('/'));
        try (ZooKeeper zk = new ZooKeeper(server.getConnectString(), 10_000, e -> {})) {
            await().atMost(Timing.seconds(10)).until(() -> zk.getState().isConnected());
            zk.create(
                    path + "-foreign",
                    "kafka".getBytes(StandardCharsets.UTF_8),
                    ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
            CliProcess foreign = cli("run", "--backend", backend + "-foreign", "job", "--", "echo", "ran");
            assertThat(foreign.exitCode()).isEqualTo(69);
            assertThat(foreign.err())
                    .contains("exists and is not an Interlock lock space")
                    .contains("point the URI at a path of its own");
            assertThat(foreign.out()).doesNotContain("ran");

            CliProcess made = cli("run", "--backend", backend, "job", "--", "true");
            assertThat(made.exitCode()).as(made.err()).isEqualTo(0);
            zk.create(path + "/job/not-a-lock-node", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            CliProcess odd = cli("run", "--backend", backend, "job", "--", "echo", "ran");
            assertThat(odd.exitCode()).isEqualTo(69);
            assertThat(odd.err()).contains("/job/not-a-lock-node is not an Interlock lock node");
            assertThat(odd.out()).doesNotContain("ran");

            CliProcess inside = cli("run", "--backend", backend + "/inner", "job", "--", "echo", "ran");
            assertThat(inside.exitCode()).isEqualTo(69);
            assertThat(inside.err()).contains("would be inside the lock space " + path);
        }
    }
}
