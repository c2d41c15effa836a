package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The registry on NFS-safe lock files. */
class DirRegistryTest extends RegistryContract {
    @TempDir
    Path dir;

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("dir:" + dir);
    }
}
