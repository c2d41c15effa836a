package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.check.CheckWorker;
import dev.interlock.check.Section;
import dev.interlock.spi.support.ProcessIdentity;
import dev.interlock.spring.InterlockLockRegistry.InterlockLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A worker process of {@link RegistryMultiProcessIT}: the core's {@link CheckWorker} loop, but each
 * critical section goes through one {@link InterlockLockRegistry} shared by THREADS threads (as
 * an application's threads share its registry bean), with a reentrant hold inside: lock, lock
 * again, read the counter and write it back plus one, unlock twice. Records one
 * {@link Section} per section, with the lease's fencing token.
 *
 * <p>Arguments: {@code URI NAME THREADS ITERATIONS LOG COUNTER}.
 */
public final class RegistryWorker {
    private RegistryWorker() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        int threads = Integer.parseInt(args[2]);
        int iterations = Integer.parseInt(args[3]);
        Path log = Path.of(args[4]);
        Path counter = Path.of(args[5]);
        String clock = CheckWorker.clockId();
        String host = ProcessIdentity.current().host();
        List<String> records = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        try (LockSpace space = Interlock.open(uri)) {
            InterlockLockRegistry registry = new InterlockLockRegistry(space);
            List<Thread> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String source = log.getFileName() + "#" + t + "@" + host;
                Thread th = new Thread(() -> {
                    try {
                        for (int i = 0; i < iterations; i++) {
                            InterlockLock lock = registry.obtain(name);
                            lock.lock();
                            try {
                                lock.lock();
                                try {
                                    long enter = System.nanoTime();
                                    long token = lock.lease().orElseThrow().token();
                                    long read = CheckWorker.read(counter);
                                    Files.writeString(counter, Long.toString(read + 1));
                                    long exit = System.nanoTime();
                                    records.add(new Section(source, true, token, read, clock, enter, exit).format());
                                } finally {
                                    lock.unlock();
                                }
                            } finally {
                                lock.unlock();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                all.add(th);
                th.start();
            }
            for (Thread th : all) {
                th.join();
            }
        }
        for (Throwable e : failures) {
            e.printStackTrace();
        }
        Files.writeString(log, String.join("\n", records) + "\n", StandardCharsets.US_ASCII);
        System.exit(failures.isEmpty() ? 0 : 1);
    }
}
