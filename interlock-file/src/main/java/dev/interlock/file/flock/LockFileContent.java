package dev.interlock.file.flock;

import dev.interlock.Mode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The text an Interlock holder writes into a {@code flock:} lock file, only while it holds the
 * lock (exclusive holders alone; shared holders while they also hold the gate):
 * <pre>
 * interlock-flock/1 token=00001763712345678901
 * name .x-...                       (hashed file names only: the encoded full name)
 * EX 1763712345678901 host:pid:start:nonce 1763712345678
 * </pre>
 * A name held as a semaphore has, instead of mode records, its limit and one record per permit
 * slot last granted ({@code permit SLOT TOKEN OWNER SINCE-EPOCH-MS}); older versions skip both
 * lines (they have another number of fields), and rewrite the file without them:
 * <pre>
 * interlock-flock/1 token=00001763712345678901
 * limit 3
 * permit 0 1763712345678901 host:pid:start:nonce 1763712345678
 * </pre>
 * The first line has a fixed width so the token can be rewritten in place. Record lines are
 * {@code MODE TOKEN OWNER SINCE-EPOCH-MS}. The contents never decide who holds the lock (the
 * kernel does); they carry the fencing-token counter and holder details for {@code status}.
 */
final class LockFileContent {
    static final String MAGIC = "interlock-flock/";
    static final String HEADER_PREFIX = "interlock-flock/1 token=";
    static final int TOKEN_DIGITS = 20;
    static final int HEADER_LENGTH = HEADER_PREFIX.length() + TOKEN_DIGITS + 1;

    enum Kind {
        /** Empty file: ours to initialise. */
        EMPTY,
        /** Our format, parsed. */
        OURS,
        /** Starts like ours but does not parse (truncated, damaged): ours to repair. */
        DAMAGED,
        /** Somebody else's content (e.g. a script wrote its pid): never overwritten. */
        FOREIGN
    }

    record Record(Mode mode, long token, String ownerId, long sinceMillis) {
        String line() {
            return mode.shortName() + ' ' + token + ' ' + ownerId + ' ' + sinceMillis + '\n';
        }
    }

    /** One permit of a semaphore, granted on slot file {@code slot} (0 to limit - 1). */
    record PermitRecord(int slot, long token, String ownerId, long sinceMillis) {
        String line() {
            return "permit " + slot + ' ' + token + ' ' + ownerId + ' ' + sinceMillis + '\n';
        }
    }

    final Kind kind;
    final long token;
    final Optional<String> storedName;
    final List<Record> records;
    /** The limit the last permit grant stated (0: the last grant was a plain lock); in force while permits are held. */
    final int limit;
    /** The last grant of each slot (a released permit's record stays until its slot is granted again). */
    final List<PermitRecord> permits;

    private LockFileContent(Kind kind, long token, Optional<String> storedName, List<Record> records) {
        this(kind, token, storedName, records, 0, List.of());
    }

    private LockFileContent(
            Kind kind,
            long token,
            Optional<String> storedName,
            List<Record> records,
            int limit,
            List<PermitRecord> permits) {
        this.kind = kind;
        this.token = token;
        this.storedName = storedName;
        this.records = records;
        this.limit = limit;
        this.permits = permits;
    }

    private static final byte[] HEADER_BYTES = HEADER_PREFIX.getBytes(StandardCharsets.US_ASCII);

    /**
     * The token alone, without decoding records: the exclusive fast path. Returns -1 if the
     * content is not simply ours (empty, damaged, foreign): call {@link #parse} then.
     */
    static long quickToken(byte[] buf, int len) {
        if (len < HEADER_LENGTH || buf[HEADER_LENGTH - 1] != '\n') {
            return -1;
        }
        for (int i = 0; i < HEADER_BYTES.length; i++) {
            if (buf[i] != HEADER_BYTES[i]) {
                return -1;
            }
        }
        long t = 0;
        for (int i = HEADER_BYTES.length; i < HEADER_LENGTH - 1; i++) {
            int d = buf[i] - '0';
            if (d < 0 || d > 9 || t > (Long.MAX_VALUE - d) / 10) {
                return -1;
            }
            t = t * 10 + d;
        }
        return t;
    }

    /** Header plus one record, rendered straight to bytes (the exclusive fast path). */
    static byte[] renderOne(long token, Record r) {
        String owner = r.ownerId();
        byte[] out = new byte[HEADER_LENGTH + 2 + 1 + 20 + 1 + owner.length() * 3 + 1 + 20 + 1];
        int p = 0;
        System.arraycopy(HEADER_BYTES, 0, out, 0, HEADER_BYTES.length);
        p += HEADER_BYTES.length;
        p = putPadded(out, p, token);
        out[p++] = '\n';
        out[p++] = (byte) (r.mode() == Mode.SHARED ? 'S' : 'E');
        out[p++] = (byte) (r.mode() == Mode.SHARED ? 'H' : 'X');
        out[p++] = ' ';
        p = putLong(out, p, r.token());
        out[p++] = ' ';
        for (int i = 0; i < owner.length(); i++) {
            char c = owner.charAt(i);
            if (c >= 0x80) {
                return render(token, Optional.empty(), List.of(r));
            }
            out[p++] = (byte) c;
        }
        out[p++] = ' ';
        p = putLong(out, p, r.sinceMillis());
        out[p++] = '\n';
        return Arrays.copyOf(out, p);
    }

    private static int putPadded(byte[] out, int p, long v) {
        for (int i = TOKEN_DIGITS - 1; i >= 0; i--) {
            out[p + i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        return p + TOKEN_DIGITS;
    }

    private static int putLong(byte[] out, int p, long v) {
        if (v < 0) {
            out[p++] = '-';
            v = -v;
        }
        int start = p;
        do {
            out[p++] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v > 0);
        for (int i = start, j = p - 1; i < j; i++, j--) {
            byte t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
        return p;
    }

    static LockFileContent parse(byte[] buf, int len) {
        if (len <= 0) {
            return new LockFileContent(Kind.EMPTY, 0, Optional.empty(), List.of());
        }
        String text = new String(buf, 0, len, StandardCharsets.UTF_8);
        if (!text.startsWith(MAGIC)) {
            return new LockFileContent(Kind.FOREIGN, 0, Optional.empty(), List.of());
        }
        if (len < HEADER_LENGTH || !text.startsWith(HEADER_PREFIX) || text.charAt(HEADER_LENGTH - 1) != '\n') {
            return new LockFileContent(Kind.DAMAGED, 0, Optional.empty(), List.of());
        }
        long token;
        try {
            token = Long.parseLong(text.substring(HEADER_PREFIX.length(), HEADER_LENGTH - 1));
        } catch (NumberFormatException e) {
            return new LockFileContent(Kind.DAMAGED, 0, Optional.empty(), List.of());
        }
        Optional<String> name = Optional.empty();
        List<Record> records = new ArrayList<>();
        int limit = 0;
        List<PermitRecord> permits = new ArrayList<>();
        int pos = HEADER_LENGTH;
        while (pos < text.length()) {
            int nl = text.indexOf('\n', pos);
            if (nl < 0) {
                break; // a partial last line (the file was cut): ignore it
            }
            String line = text.substring(pos, nl);
            pos = nl + 1;
            if (line.startsWith("name ")) {
                name = NameMapping.decode(line.substring(5));
                continue;
            }
            String[] f = line.split(" ");
            if (f.length == 2 && f[0].equals("limit")) {
                limit = parseLimit(f[1]);
                continue;
            }
            if (f.length == 5 && f[0].equals("permit")) {
                try {
                    permits.add(
                            new PermitRecord(Integer.parseInt(f[1]), Long.parseLong(f[2]), f[3], Long.parseLong(f[4])));
                } catch (NumberFormatException ignored) {
                    // a damaged record line only loses its status details
                }
                continue;
            }
            if (f.length != 4) {
                continue;
            }
            try {
                records.add(new Record(Mode.parse(f[0]), Long.parseLong(f[1]), f[2], Long.parseLong(f[3])));
            } catch (IllegalArgumentException ignored) {
                // a damaged record line only loses its status details
            }
        }
        return new LockFileContent(Kind.OURS, token, name, records, limit, permits);
    }

    private static int parseLimit(String s) {
        try {
            int n = Integer.parseInt(s);
            return n > 0 ? n : 0;
        } catch (NumberFormatException e) {
            return 0; // damaged: as if no limit were recorded (the next permit grant writes it again)
        }
    }

    /** The content of a name held as a semaphore of {@code limit}: token, name (hashed files), limit, permit records. */
    static byte[] renderPermits(long token, Optional<String> name, int limit, List<PermitRecord> permits) {
        StringBuilder sb = new StringBuilder(HEADER_LENGTH + 16 + 96 * permits.size());
        sb.append(new String(render(token, name, List.of()), StandardCharsets.UTF_8));
        sb.append("limit ").append(limit).append('\n');
        for (PermitRecord r : permits) {
            sb.append(r.line());
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    static byte[] render(long token, Optional<String> name, List<Record> records) {
        StringBuilder sb = new StringBuilder(HEADER_LENGTH + 96 * (records.size() + 1));
        sb.append(HEADER_PREFIX);
        String t = Long.toString(token);
        for (int i = t.length(); i < TOKEN_DIGITS; i++) {
            sb.append('0');
        }
        sb.append(t).append('\n');
        name.ifPresent(n -> sb.append("name ").append(NameMapping.encode(n)).append('\n'));
        for (Record r : records) {
            sb.append(r.line());
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }
}
