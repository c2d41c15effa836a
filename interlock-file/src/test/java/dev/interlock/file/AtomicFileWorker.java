package dev.interlock.file;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

/**
 * Child processes for the {@link AtomicFile} tests. First argument is the job:
 * <ul>
 *   <li>{@code write FILE SIZE [TOKEN]}: one write of SIZE bytes of 'x' (fenced with TOKEN if
 *       given); prints {@code OK}, or {@code REFUSED <reason>: <message>} and exits 3;</li>
 *   <li>{@code loop FILE}: updates FILE forever, each time to {@link #content} of the next number,
 *       and prints the number once it landed (the kill -9 test stops it);</li>
 *   <li>{@code stale URI NAME FILE LEASE_MS}: takes NAME with a fixed lease of LEASE_MS, prints
 *       {@code HELD <token>}, waits for a line on stdin, then makes a fenced update of FILE under
 *       that lease; prints {@code WROTE}, {@code FENCED <attempted> <current>} or {@code REFUSED <reason>}.</li>
 * </ul>
 */
public final class AtomicFileWorker {
    private AtomicFileWorker() {}

    /** Lines that make the file long enough (about 40 KB) that a torn write would show. */
    static final int LINES = 4000;

    /** The content for number {@code n}: {@value #LINES} lines, each the number. */
    static byte[] content(long n) {
        byte[] line = (n + "\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[line.length * LINES];
        for (int i = 0; i < LINES; i++) {
            System.arraycopy(line, 0, out, i * line.length, line.length);
        }
        return out;
    }

    /** The number a whole content holds; throws if the content is torn, empty or foreign. */
    static long number(byte[] content) {
        String s = new String(content, StandardCharsets.US_ASCII);
        int nl = s.indexOf('\n');
        if (nl <= 0) {
            throw new IllegalStateException("not a whole content: " + content.length + " bytes");
        }
        long n = Long.parseLong(s.substring(0, nl));
        if (!Arrays.equals(content, content(n))) {
            throw new IllegalStateException("torn content: " + content.length + " bytes, starts with " + n);
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "write": {
                byte[] data = new byte[Integer.parseInt(args[2])];
                Arrays.fill(data, (byte) 'x');
                try {
                    if (args.length > 3) {
                        AtomicFile.of(Path.of(args[1])).write(data, Long.parseLong(args[3]));
                    } else {
                        AtomicFile.of(Path.of(args[1])).write(data);
                    }
                    System.out.println("OK");
                } catch (AtomicFileException e) {
                    System.out.println("REFUSED " + e.reason() + ": " + e.getMessage());
                    System.exit(3);
                }
                break;
            }
            case "loop": {
                AtomicFile file = AtomicFile.of(Path.of(args[1]));
                long n = file.read().map(AtomicFileWorker::number).orElse(0L);
                System.out.println("READY " + n);
                System.out.flush();
                while (true) {
                    n++;
                    file.write(content(n));
                    System.out.println(n);
                    System.out.flush();
                }
            }
            case "stale": {
                try (LockSpace locks = Interlock.open(args[1]);
                        Lease lease = locks.lock(args[2])
                                .fixedLease()
                                .lease(Duration.ofMillis(Long.parseLong(args[4])))
                                .acquire(Duration.ofSeconds(30))) {
                    System.out.println("HELD " + lease.token());
                    System.out.flush();
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                    try {
                        AtomicFile.of(Path.of(args[3]))
                                .updateFenced(
                                        lease,
                                        old -> ("stale " + lease.token() + "\n").getBytes(StandardCharsets.US_ASCII));
                        System.out.println("WROTE");
                    } catch (FencedWriteException e) {
                        System.out.println("FENCED " + e.attemptedToken() + " " + e.currentToken());
                    } catch (AtomicFileException e) {
                        System.out.println("REFUSED " + e.reason() + ": " + e.getMessage());
                    }
                    System.out.flush();
                } catch (RuntimeException e) {
                    // the lease's release may fail: it was lost long ago
                }
                break;
            }
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
