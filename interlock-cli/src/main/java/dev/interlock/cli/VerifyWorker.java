package dev.interlock.cli;

import dev.interlock.Interlock;
import dev.interlock.InvalidLockNameException;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.check.CheckWorker;
import dev.interlock.check.Section;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One worker process of {@code interlock verify}: until told to stop, it acquires the lock
 * (shared with probability R, else exclusive), reads the counter file, and in an exclusive
 * section writes it back plus one, in place (the lost-update recipe: without a working
 * lock, increments get lost). Each section goes to its log as a {@link Section} line as soon as
 * it ends, so a worker killed later loses nothing it recorded.
 *
 * <p>With a {@code LIMIT} above 0 ({@code verify --limit N}) it takes a permit of a semaphore of
 * LIMIT instead, always: no counter then (N holders at once may all be inside), but a slot among
 * LIMIT claimed inside each section and given back before the release ({@link PermitSlots}); a
 * section's {@code READ} is then the slot it took, -1 when every slot was taken, and a
 * {@code # full TOKEN HOLDER|HOLDER...} line says who held them. It holds each permit about a
 * millisecond, so that holders overlap and an (N+1)th would find no slot.
 *
 * <p>Arguments: {@code NAME SHARED_RATIO LEASE_MS LOG COUNTER SOURCE LIMIT} ({@code LEASE_MS} 0 for
 * the space's default lease; {@code LIMIT} 0 for the lock, else {@code COUNTER} is the directory
 * of the slots); the lock space's URI comes in {@code $INTERLOCK_VERIFY_BACKEND}, not on
 * the command line, where others could read a password in it. It talks to {@code verify} through its standard streams:
 * <ul>
 *   <li>out: {@code READY} once the lock space is open; {@code COUNT n} (sections so far) every
 *       quarter second while running; {@code IN <section>} when, told to be a victim, it is inside
 *       an exclusive section and waits there to be killed; {@code END} when done;</li>
 *   <li>in: {@code GO} starts the loop; {@code KILLME} makes the next section exclusive and the
 *       worker stay in it (after reading the counter, and at random before or after writing it)
 *       until it is killed with SIGKILL, or spared: {@code SPARE} (verify killed another worker)
 *       takes KILLME back, and a worker staying in its section then finishes it as any other;
 *       {@code STOP} spares too and ends the loop (a wait for the lock is
 *       interrupted; a section in progress is finished). The end of input means {@code verify}
 *       is gone: the worker halts at once, wherever it is.</li>
 * </ul>
 * Log lines other than sections start with {@code #}: {@code # run GO END} (its clock's times),
 * {@code # waiting ASKED END} (still waiting when stopped), {@code # torn TOKEN 'TEXT'} (the
 * counter held something that is not a number: two writers at once), {@code # lost TOKEN} (the
 * lease was lost during the section). Exit status: 0, 64 (bad arguments), 69 (the lock space
 * cannot be opened), 1 (the backend failed during the run), 70 (a bug).
 */
public final class VerifyWorker {
    /** The environment variable that carries the lock space's URI to a worker. */
    static final String BACKEND_ENV = "INTERLOCK_VERIFY_BACKEND";

    /** How long a permit is held (see the class comment). */
    private static final long HOLD_PERMIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Object monitor = new Object();
    private final CountDownLatch go = new CountDownLatch(1);
    private final Thread main = Thread.currentThread();
    private boolean stop;
    private boolean waiting;
    private volatile boolean victim;
    private volatile long count;

    private VerifyWorker() {}

    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String uri = System.getenv(BACKEND_ENV);
        if (args.length != 7 || uri == null) {
            System.err.println(
                    "usage: " + BACKEND_ENV + "=URI VerifyWorker NAME SHARED_RATIO LEASE_MS LOG COUNTER SOURCE LIMIT"
                            + " (started by interlock verify)");
            System.exit(ExitCodes.USAGE);
        }
        Main.configureLogging(false);
        int code;
        try {
            code = new VerifyWorker().run(uri, args, out);
        } catch (RuntimeException | Error e) {
            System.err.println("internal error: " + e);
            e.printStackTrace();
            code = ExitCodes.SOFTWARE;
        }
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    private int run(String uri, String[] args, PrintStream out) {
        String name = args[0];
        double sharedRatio = Double.parseDouble(args[1]);
        long leaseMs = Long.parseLong(args[2]);
        Path logPath = Path.of(args[3]);
        Path counter = Path.of(args[4]);
        String source = args[5];
        int limit = Integer.parseInt(args[6]);
        PermitSlots slots = limit > 0 ? new PermitSlots(counter, limit) : null;
        String clock = CheckWorker.clockId();
        LockSpace locks;
        try {
            Interlock.Builder b = Interlock.builder(uri);
            if (leaseMs > 0) {
                b.defaultLease(Duration.ofMillis(leaseMs));
            }
            locks = b.open();
        } catch (LockBackendException e) {
            System.err.println(e.getMessage());
            return ExitCodes.UNAVAILABLE;
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            return ExitCodes.USAGE;
        }
        BufferedWriter log;
        try {
            log = Files.newBufferedWriter(
                    logPath,
                    StandardCharsets.US_ASCII,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND,
                    LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            System.err.println("cannot write the log " + logPath + ": " + reason(e));
            return ExitCodes.UNAVAILABLE;
        }
        Thread input = new Thread(this::readCommands, "verify-input");
        input.setDaemon(true);
        input.start();
        out.println("READY");
        try {
            go.await();
        } catch (InterruptedException e) {
            return ExitCodes.OK; // stopped before the start
        }
        Thread progress = new Thread(
                () -> {
                    try {
                        while (true) {
                            Thread.sleep(250);
                            out.println("COUNT " + count);
                        }
                    } catch (InterruptedException e) {
                        // done
                    }
                },
                "verify-progress");
        progress.setDaemon(true);
        progress.start();
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long start = System.nanoTime();
        int code = ExitCodes.OK;
        try (locks) {
            while (true) {
                synchronized (monitor) {
                    if (stop) {
                        break;
                    }
                    waiting = true;
                }
                boolean killMe = victim;
                boolean exclusive = killMe || slots != null || rnd.nextDouble() >= sharedRatio;
                long asked = System.nanoTime();
                Lease lease;
                try {
                    lease = slots != null
                            ? locks.lock(name).limit(limit).acquire()
                            : locks.acquire(name, exclusive ? Mode.EXCLUSIVE : Mode.SHARED);
                } catch (InterruptedException e) {
                    write(log, "# waiting " + asked + " " + System.nanoTime());
                    break;
                } finally {
                    synchronized (monitor) {
                        waiting = false;
                    }
                    Thread.interrupted(); // a STOP that came with the grant: finish this section first
                }
                long enter = System.nanoTime();
                long token = lease.token();
                long read;
                if (slots != null) {
                    PermitSlots.Claim claim = slots.take(PermitSlots.holder(source, token));
                    read = claim.slot();
                    if (read < 0) {
                        write(log, "# full " + token + " " + String.join("|", claim.occupants()));
                    }
                } else {
                    read = readCounter(counter, token, log);
                }
                boolean written = false;
                if (killMe && victim && !stopping()) {
                    Section here = new Section(source, true, token, read, clock, asked, enter, enter);
                    written = slots == null && rnd.nextBoolean() && read >= 0;
                    if (written) {
                        writeCounter(counter, read + 1);
                    }
                    out.println("IN " + here.format());
                    synchronized (monitor) {
                        while (victim && !stop) {
                            monitor.wait(); // until SIGKILL, SPARE or STOP (or the end of input: halt)
                        }
                    }
                }
                if (slots != null) {
                    // Long enough that holders overlap, so that an (N+1)th would find no slot.
                    LockSupport.parkNanos(HOLD_PERMIT_NANOS);
                    slots.giveBack((int) read);
                } else if (exclusive && read >= 0 && !written) {
                    writeCounter(counter, read + 1);
                }
                long exit = System.nanoTime();
                boolean valid = lease.isValid();
                lease.close();
                write(log, new Section(source, exclusive, token, read, clock, asked, enter, exit).format());
                if (!valid) {
                    write(log, "# lost " + token);
                }
                count++;
            }
        } catch (InvalidLockNameException e) {
            System.err.println("bad lock name: " + e.getMessage());
            code = ExitCodes.USAGE;
        } catch (LockException e) {
            System.err.println(e.getMessage());
            code = 1;
        } catch (IOException | UncheckedIOException e) {
            System.err.println((slots != null ? "the permit slots in " : "the counter ") + counter
                    + " could not be read or written: "
                    + reason(
                            e instanceof UncheckedIOException
                                    ? ((UncheckedIOException) e).getCause()
                                    : (IOException) e));
            code = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            progress.interrupt();
            try {
                write(log, "# run " + start + " " + System.nanoTime());
                log.close();
            } catch (IOException e) {
                System.err.println("cannot write the log " + logPath + ": " + reason(e));
                code = code == 0 ? 1 : code;
            }
        }
        out.println("END");
        return code;
    }

    private boolean stopping() {
        synchronized (monitor) {
            return stop;
        }
    }

    /**
     * The counter, or -1 (and a {@code # torn} line) if it does not hold a number: two writers at
     * once. Opened anew each time (on NFS, close-to-open consistency makes that a fresh read), and
     * never through a symbolic link: the counter may live in a directory others can write.
     */
    private static long readCounter(Path counter, long token, BufferedWriter log) throws IOException {
        String text;
        try (SeekableByteChannel ch =
                Files.newByteChannel(counter, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            ByteBuffer buf = ByteBuffer.allocate(64);
            while (buf.hasRemaining() && ch.read(buf) > 0) {
                // up to 64 bytes: a counter is 19 digits at most
            }
            text = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim();
        } catch (NoSuchFileException e) {
            text = "";
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            String shown = text.length() > 40 ? text.substring(0, 40) + "..." : text;
            write(log, "# torn " + token + " '" + shown.replaceAll("[^\\x21-\\x7e]", "?") + "'");
            return -1;
        }
    }

    /** Rewrites the counter in place (truncate, write, close: the lost-update recipe, not an atomic rename). */
    private static void writeCounter(Path counter, long value) throws IOException {
        try (SeekableByteChannel ch = Files.newByteChannel(
                counter,
                StandardOpenOption.WRITE,
                StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING,
                LinkOption.NOFOLLOW_LINKS)) {
            ch.write(ByteBuffer.wrap(Long.toString(value).getBytes(StandardCharsets.US_ASCII)));
        }
    }

    private static void write(BufferedWriter log, String line) throws IOException {
        log.write(line);
        log.write('\n');
        log.flush();
    }

    private void readCommands() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                switch (line.trim()) {
                    case "GO":
                        go.countDown();
                        break;
                    case "KILLME":
                        victim = true;
                        break;
                    case "SPARE":
                        synchronized (monitor) {
                            victim = false;
                            monitor.notifyAll();
                        }
                        break;
                    case "STOP":
                        synchronized (monitor) {
                            stop = true;
                            monitor.notifyAll();
                            if (waiting) {
                                main.interrupt();
                            }
                        }
                        if (go.getCount() > 0) {
                            main.interrupt();
                        }
                        break;
                    default:
                        break;
                }
            }
        } catch (IOException e) {
            // as the end of input
        }
        // verify is gone (killed, or closed our input): stop hammering its lock now.
        Runtime.getRuntime().halt(3);
    }

    static String reason(IOException e) {
        if (e instanceof FileSystemException && ((FileSystemException) e).getReason() != null) {
            FileSystemException f = (FileSystemException) e;
            return (f.getFile() != null ? f.getFile() + ": " : "") + f.getReason();
        }
        return e.getMessage() != null ? e.getMessage() : "I/O error";
    }
}
