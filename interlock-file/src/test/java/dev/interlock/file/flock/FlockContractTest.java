package dev.interlock.file.flock;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.BackendHooks;
import dev.interlock.testkit.LockSpaceContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.io.TempDir;

/** The shared contract, on {@code flock:}. */
class FlockContractTest extends LockSpaceContract {
    @TempDir
    Path dir;

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri());
    }

    @Override
    protected String uri() {
        return "flock:" + dir;
    }

    /** A kernel lock is taken away by replacing its lock file: others then lock another inode. */
    @Override
    protected BackendHooks hooks() {
        return new BackendHooks() {
            @Override
            public boolean takeAway(Lease lease) {
                try {
                    Path fresh = Files.createFile(dir.resolve(".replacement-" + lease.name()));
                    Files.move(
                            fresh,
                            dir.resolve(lease.name()),
                            StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                    return true;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }
}
